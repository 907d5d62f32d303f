/*
 * tests/integration/test_emulator_kubectl_common.c - the helpers of
 * test_emulator_kubectl.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kube/util/errors.h"
#include "test_emulator_kubectl.h"

cJSON *ek_call(harness *h, const harness_identity *as, const char *method, const char *path,
               const char *accept, const char *ctype, const char *body, size_t len, long *status)
{
    char accept_line[512];
    const char *headers[] = {accept_line, NULL};
    harness_response r;
    cJSON *j;

    snprintf(accept_line, sizeof(accept_line), "Accept: %s", accept ? accept : "");
    assert_int_equal(
        harness_request_bytes(h, as, method, path, accept ? headers : NULL, ctype, body, len, &r),
        KUBE_OK);
    *status = r.status;
    j = cJSON_Parse(r.body);
    harness_response_free(&r);
    return j;
}

void ek_create(harness *h, const char *path, const char *json)
{
    long status;
    cJSON *j = ek_call(h, NULL, "POST", path, NULL, NULL, json, strlen(json), &status);

    if (status != 201) {
        char *text = j ? cJSON_PrintUnformatted(j) : NULL;
        fprintf(stderr, "POST %s: %ld %s\n", path, status, text ? text : "");
        free(text);
    }
    assert_int_equal(status, 201);
    cJSON_Delete(j);
}

void ek_set_status(harness *h, const char *path, const char *status_json)
{
    char sub[512];
    long status;
    cJSON *obj = ek_call(h, NULL, "GET", path, NULL, NULL, NULL, 0, &status), *st;
    char *body;

    assert_int_equal(status, 200);
    st = cJSON_Parse(status_json);
    assert_non_null(st);
    cJSON_DeleteItemFromObject(obj, "status");
    cJSON_AddItemToObject(obj, "status", st);
    body = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
    snprintf(sub, sizeof(sub), "%s/status", path);
    obj = ek_call(h, NULL, "PUT", sub, NULL, NULL, body, strlen(body), &status);
    free(body);
    assert_int_equal(status, 200);
    cJSON_Delete(obj);
}

int ek_have_kubectl(void)
{
    return access(EK_KUBECTL, X_OK) == 0;
}

int ek_kubectl(harness *h, const char *kubeconfig, const char *args, char *out, size_t n)
{
    char cmd[4096];
    FILE *p;
    size_t got = 0;
    int status;

    snprintf(cmd, sizeof(cmd),
             EK_KUBECTL " --kubeconfig %s --cache-dir %s/kcache --request-timeout=20s %s 2>&1",
             kubeconfig ? kubeconfig : harness_kubeconfig(h), harness_data_dir(h), args);
    p = popen(cmd, "r");
    assert_non_null(p);
    while (got + 1 < n) {
        size_t r = fread(out + got, 1, n - got - 1, p);
        if (r == 0)
            break;
        got += r;
    }
    out[got] = '\0';
    status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char *ek_cell(const cJSON *table, int r, int c)
{
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(table, "rows"), r);
    const char *s = cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(row, "cells"), c));

    return s ? s : "";
}
