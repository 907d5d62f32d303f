/*
 * tests/integration/test_emulator.c - the API emulator answers as the
 * recorded kube-apiserver v1.23 does. Each recorded request of
 * tests/fixtures/kube-apiserver-v1.23 whose situation can be rebuilt is
 * replayed (after creating what it needs) and the answer compared: the HTTP
 * code, Status bodies field by field (kind, apiVersion, status, message,
 * reason, details, code; generated uids matched by pattern), and objects key
 * by key in the same order (generated uid/resourceVersion/timestamps by
 * pattern, managedFields aside). Then the behaviour around them: watch
 * streams and bookmarks, 410s after a restart, pagination from a snapshot,
 * selectors, faults, counters, hostile bodies, identities, and a kubectl
 * smoke run when /usr/bin/kubectl exists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

#define PODS "/api/v1/namespaces/default/pods"
#define VMS "/apis/kubevirt.io/v1/namespaces/default/virtualmachines"
#define VMIS "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances"
#define LEASES "/apis/coordination.k8s.io/v1/namespaces/default/leases"
#define KUBECTL "/usr/bin/kubectl"

/* ------------------------------------------------------------------ */
/* Fixtures and comparison                                             */
/* ------------------------------------------------------------------ */

static cJSON *load_fixture(const char *name)
{
    char path[1024], *text = NULL;
    size_t len;
    cJSON *j;

    snprintf(path, sizeof(path), "%s/%s", STICKYVM_FIXTURES_DIR, name);
    assert_int_equal(kube_read_file(path, &text, &len), KUBE_OK);
    j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

static char *fixture_request_body(const cJSON *fx)
{
    const cJSON *body = cJSON_GetObjectItem(cJSON_GetObjectItem(fx, "request"), "body");

    return body && !cJSON_IsNull(body) ? cJSON_PrintUnformatted(body) : NULL;
}

static const char *fixture_path(const cJSON *fx)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(fx, "request"), "path"));
}

static const char *fixture_method(const cJSON *fx)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(fx, "request"), "method"));
}

static int is_uuid(const char *s)
{
    static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

    if (strlen(s) != 36)
        return 0;
    for (size_t i = 0; i < 36; i++)
        if (shape[i] == '-' ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* Replaces every uuid in s by <UID>. Caller frees. */
static char *mask_uuids(const char *s)
{
    kube_buf b = KUBE_BUF_INIT;

    for (size_t i = 0; s[i];) {
        char probe[37] = "";
        snprintf(probe, sizeof(probe), "%s", s + i);
        if (is_uuid(probe)) {
            kube_buf_puts(&b, "<UID>");
            i += 36;
        } else {
            kube_buf_append(&b, s + i, 1);
            i++;
        }
    }
    return kube_buf_take(&b);
}

static int is_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static int is_timestamp(const char *s)
{
    return strlen(s) >= 20 && s[4] == '-' && s[10] == 'T' && s[strlen(s) - 1] == 'Z';
}

/* Compares a value where generated content is matched by shape. */
static void match_string(const char *path, const char *key, const char *want, const char *got)
{
    if (key && (!strcmp(key, "resourceVersion") && is_digits(want))) {
        if (!is_digits(got))
            fail_msg("%s: resourceVersion \"%s\" is not a number", path, got);
        return;
    }
    if (key && !strcmp(key, "uid") && strstr(path, ".metadata.uid") && is_uuid(want)) {
        if (!is_uuid(got))
            fail_msg("%s: uid \"%s\" is not a uuid", path, got);
        return;
    }
    if (key && (!strcmp(key, "creationTimestamp") || !strcmp(key, "deletionTimestamp") ||
                (!strcmp(key, "lastTransitionTime") && strstr(path, "pods-watch")))) {
        if (!is_timestamp(got))
            fail_msg("%s: \"%s\" is not a timestamp", path, got);
        return;
    }
    if (!strncmp(want, "kube-api-access-", 16)) {
        if (strncmp(got, "kube-api-access-", 16) || strlen(got) != strlen(want))
            fail_msg("%s: \"%s\" is not a kube-api-access volume name", path, got);
        return;
    }
    {
        char *w = mask_uuids(want), *g = mask_uuids(got);
        int same = !strcmp(w, g);
        if (!same)
            fail_msg("%s: want \"%s\", got \"%s\"", path, want, got);
        free(w);
        free(g);
    }
}

/* Deep comparison with the key order of want; managedFields skipped. */
static void match_json(const char *path, const char *key, const cJSON *want, const cJSON *got)
{
    char sub[1024];
    const cJSON *w, *g;
    int i = 0;

    if (!got)
        fail_msg("%s: missing", path);
    if ((want->type & 0xff) != (got->type & 0xff))
        fail_msg("%s: JSON types differ", path);
    if (cJSON_IsString(want)) {
        match_string(path, key, want->valuestring, got->valuestring);
    } else if (cJSON_IsNumber(want)) {
        if (want->valuedouble != got->valuedouble)
            fail_msg("%s: want %g, got %g", path, want->valuedouble, got->valuedouble);
    } else if (cJSON_IsArray(want)) {
        if (cJSON_GetArraySize(want) != cJSON_GetArraySize(got))
            fail_msg("%s: want %d items, got %d", path, cJSON_GetArraySize(want),
                     cJSON_GetArraySize(got));
        for (w = want->child, g = got->child; w; w = w->next, g = g->next, i++) {
            snprintf(sub, sizeof(sub), "%s[%d]", path, i);
            match_json(sub, NULL, w, g);
        }
    } else if (cJSON_IsObject(want)) {
        g = got->child;
        for (w = want->child; w; w = w->next) {
            if (!strcmp(w->string, "managedFields"))
                continue;
            while (g && !strcmp(g->string, "managedFields"))
                g = g->next;
            snprintf(sub, sizeof(sub), "%s.%s", path, w->string);
            if (!g || strcmp(g->string, w->string))
                fail_msg("%s: expected key \"%s\" here, got \"%s\"", sub, w->string,
                         g ? g->string : "(end)");
            match_json(sub, w->string, w, g);
            g = g->next;
        }
        if (g)
            fail_msg("%s: unexpected key \"%s\"", path, g->string);
    }
}

/* Status bodies: the documented fields, exactly (uuids masked). */
static void match_status(const char *what, const cJSON *want, const cJSON *got)
{
    static const char *const fields[] = {"kind",   "apiVersion", "status", "message",
                                         "reason", "details",    "code"};
    char path[256];

    assert_non_null(got);
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const cJSON *w = cJSON_GetObjectItem(want, fields[i]);
        const cJSON *g = cJSON_GetObjectItem(got, fields[i]);
        snprintf(path, sizeof(path), "%s.%s", what, fields[i]);
        if (!w) {
            if (g)
                fail_msg("%s: unexpected", path);
            continue;
        }
        match_json(path, fields[i], w, g);
    }
}

typedef struct fixture {
    harness *h;
} fixture;

static harness *H(void **state)
{
    return ((fixture *)*state)->h;
}

static int start_with(void **state, const harness_opts *o)
{
    fixture *fx = calloc(1, sizeof(*fx));

    assert_non_null(fx);
    assert_int_equal(harness_start(o, &fx->h), KUBE_OK);
    *state = fx;
    return 0;
}

static int setup(void **state)
{
    harness_opts o = HARNESS_OPTS_INIT;

    o.bookmark_interval_ms = 300;
    o.nodes = 3;
    return start_with(state, &o);
}

static int setup_small_history(void **state)
{
    harness_opts o = HARNESS_OPTS_INIT;

    o.history = 20;
    o.bookmark_interval_ms = 300;
    return start_with(state, &o);
}

static int teardown(void **state)
{
    fixture *fx = *state;

    harness_stop(fx->h);
    free(fx);
    return 0;
}

/* Sends a request; returns the parsed body (caller frees) and the code. */
static cJSON *call(harness *h, const char *method, const char *path, const char *ctype,
                   const char *body, long *status)
{
    harness_response r;
    cJSON *j;

    assert_int_equal(harness_request(h, NULL, method, path, ctype, body, &r), KUBE_OK);
    *status = r.status;
    j = cJSON_Parse(r.body);
    harness_response_free(&r);
    return j;
}

/* Replays a fixture's request (optionally with another path/body) and
 * checks code and body. Returns the answer (caller frees). */
static cJSON *replay(harness *h, const char *name, const char *path, const char *body)
{
    cJSON *fx = load_fixture(name);
    const cJSON *req = cJSON_GetObjectItem(fx, "request");
    const char *ctype = cJSON_GetStringValue(cJSON_GetObjectItem(req, "content_type"));
    const cJSON *want = cJSON_GetObjectItem(fx, "body");
    char *fx_body = fixture_request_body(fx);
    long status;
    cJSON *got;
    const char *method = fixture_method(fx);

    if (!ctype && !strcmp(method, "PATCH"))
        ctype = cJSON_IsArray(cJSON_GetObjectItem(req, "body")) ? "application/json-patch+json"
                                                                : "application/merge-patch+json";
    got = call(h, method, path ? path : fixture_path(fx), ctype, body ? body : fx_body, &status);
    if (status != (long)cJSON_GetNumberValue(cJSON_GetObjectItem(fx, "status"))) {
        char *text = cJSON_PrintUnformatted(got);
        fail_msg("%s: want HTTP %d, got %ld: %s", name,
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItem(fx, "status")), status, text);
    }
    if (cJSON_GetStringValue(cJSON_GetObjectItem(want, "kind")) &&
        !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(want, "kind")), "Status"))
        match_status(name, want, got);
    else
        match_json(name, NULL, want, got);
    free(fx_body);
    cJSON_Delete(fx);
    return got;
}

static const char *str_at(const cJSON *j, const char *a, const char *b)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, a), b));
}

/* The fixture's request body with metadata.uid / resourceVersion set. */
static char *body_with_meta(const char *name, const char *uid, const char *rv)
{
    cJSON *fx = load_fixture(name);
    cJSON *body = cJSON_GetObjectItem(cJSON_GetObjectItem(fx, "request"), "body");
    cJSON *meta = cJSON_GetObjectItem(body, "metadata");
    char *text;

    if (uid)
        cJSON_ReplaceItemInObject(meta, "uid", cJSON_CreateString(uid));
    if (rv)
        cJSON_ReplaceItemInObject(meta, "resourceVersion", cJSON_CreateString(rv));
    text = cJSON_PrintUnformatted(body);
    cJSON_Delete(fx);
    return text;
}

/* ------------------------------------------------------------------ */
/* Fixture replays                                                     */
/* ------------------------------------------------------------------ */

static void kubevirt_fixtures(void **state)
{
    harness *h = H(state);
    cJSON *vm, *patched;
    char body[512];

    vm = replay(h, "vm-create-201.json", NULL, NULL);
    cJSON_Delete(replay(h, "vmi-create-201.json", NULL, NULL));
    cJSON_Delete(replay(h, "vms-list-200.json", NULL, NULL));
    cJSON_Delete(replay(h, "vmis-list-200.json", NULL, NULL));
    cJSON_Delete(replay(h, "vm-create-invalid-name-422.json", NULL, NULL));
    cJSON_Delete(replay(h, "vm-get-404.json", NULL, NULL));
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"resourceVersion\":\"%s\",\"annotations\":{\"stickyvm.io/node\":"
             "\"node-1\"}}}",
             str_at(vm, "metadata", "resourceVersion"));
    patched = replay(h, "vm-merge-patch-annotation-200.json", NULL, body);
    /* the same resourceVersion again is now stale */
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"resourceVersion\":\"%s\",\"annotations\":{\"stickyvm.io/node\":"
             "\"node-2\"}}}",
             str_at(vm, "metadata", "resourceVersion"));
    cJSON_Delete(replay(h, "vm-merge-patch-stale-rv-409.json", NULL, body));
    cJSON_Delete(replay(h, "vm-json-patch-remove-annotation-200.json", NULL, NULL));
    cJSON_Delete(replay(h, "vm-json-patch-remove-missing-422.json", NULL, NULL));
    assert_string_not_equal(str_at(vm, "metadata", "resourceVersion"),
                            str_at(patched, "metadata", "resourceVersion"));
    cJSON_Delete(patched);
    cJSON_Delete(vm);
}

static void unknown_resource_is_plain_text(void **state)
{
    cJSON *fx = load_fixture("unknown-resource-404.json");
    harness_response r;

    assert_int_equal(harness_request(H(state), NULL, "GET", fixture_path(fx), NULL, NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 404);
    assert_string_equal(r.body, cJSON_GetStringValue(cJSON_GetObjectItem(fx, "body_text")));
    assert_string_equal(r.content_type,
                        cJSON_GetStringValue(cJSON_GetObjectItem(fx, "content_type")));
    harness_response_free(&r);
    cJSON_Delete(fx);
}

static void pod_and_binding_fixtures(void **state)
{
    harness *h = H(state);
    cJSON *pod = replay(h, "pod-create-201.json", NULL, NULL);
    const char *uid = str_at(pod, "metadata", "uid");
    char *body;

    cJSON_Delete(replay(h, "pods-list-200.json", NULL, NULL));
    cJSON_Delete(replay(h, "pods-list-paged-200.json", NULL, NULL));
    body = body_with_meta("binding-create-201.json", uid, NULL);
    cJSON_Delete(replay(h, "binding-create-201.json", NULL, body));
    free(body);
    body = body_with_meta("binding-already-assigned-409.json", uid, NULL);
    cJSON_Delete(replay(h, "binding-already-assigned-409.json", NULL, body));
    free(body);
    cJSON_Delete(replay(h, "binding-pod-missing-404.json", NULL, NULL));
    cJSON_Delete(pod);
}

static void binding_preconditions(void **state)
{
    harness *h = H(state);
    cJSON *fx = load_fixture("pod-create-201.json"), *got;
    char *pod_body = fixture_request_body(fx);
    long status;
    const char *msg;

    assert_int_equal(harness_create(h, PODS, pod_body, NULL), KUBE_OK);
    got = call(h, "POST", PODS "/virt-launcher-vm-a-abcde/binding", NULL,
               "{\"metadata\":{\"name\":\"virt-launcher-vm-a-abcde\",\"uid\":"
               "\"00000000-0000-4000-8000-000000000000\"},\"target\":{\"name\":\"node-1\"}}",
               &status);
    assert_int_equal(status, 409);
    msg = cJSON_GetStringValue(cJSON_GetObjectItem(got, "message"));
    assert_non_null(strstr(msg, "Precondition failed: UID in precondition: "
                                "00000000-0000-4000-8000-000000000000, UID in object meta: "));
    cJSON_Delete(got);
    got = call(h, "POST", PODS "/virt-launcher-vm-a-abcde/binding", NULL,
               "{\"metadata\":{\"name\":\"virt-launcher-vm-a-abcde\"},\"target\":{}}", &status);
    assert_int_equal(status, 500);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "message")),
                        "target.name: Required value");
    cJSON_Delete(got);
    got = call(h, "GET", PODS "/virt-launcher-vm-a-abcde", NULL, NULL, &status);
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(got, "spec"), "nodeName"));
    cJSON_Delete(got);
    free(pod_body);
    cJSON_Delete(fx);
}

static void pod_status_and_delete_fixtures(void **state)
{
    harness *h = H(state);

    assert_int_equal(
        harness_create(h, PODS,
                       "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                       "\"cond-pod\",\"labels\":{\"app\":\"load\"}},\"spec\":{"
                       "\"schedulerName\":\"stickyvm\",\"containers\":[{\"name\":\"c\","
                       "\"image\":\"registry.invalid/pause:3.9\",\"resources\":{"
                       "\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]}}",
                       NULL),
        KUBE_OK);
    cJSON_Delete(replay(h, "pod-status-strategic-patch-condition-200.json", NULL, NULL));
    cJSON_Delete(replay(h, "pod-status-nominated-node-200.json", NULL, NULL));
    cJSON_Delete(replay(h, "pod-delete-200.json", NULL, NULL));
}

static void lease_fixtures(void **state)
{
    harness *h = H(state);
    cJSON *created = replay(h, "lease-create-201.json", NULL, NULL), *renewed;
    const char *uid = str_at(created, "metadata", "uid");
    const char *rv = str_at(created, "metadata", "resourceVersion");
    char *body = body_with_meta("lease-update-renew-200.json", uid, rv);

    renewed = replay(h, "lease-update-renew-200.json", NULL, body);
    free(body);
    body = body_with_meta("lease-update-stale-409.json", uid, rv);
    cJSON_Delete(replay(h, "lease-update-stale-409.json", NULL, body));
    free(body);
    assert_string_not_equal(rv, str_at(renewed, "metadata", "resourceVersion"));
    cJSON_Delete(renewed);
    cJSON_Delete(created);
}

static void events_fixture(void **state)
{
    harness *h = H(state);
    cJSON *created = replay(h, "events-create-201.json", NULL, NULL), *core;
    long status;

    /* one resource, two APIs: the core/v1 view of the same event */
    core = call(h, "GET", "/api/v1/namespaces/default/events/virt-launcher-vm-a-abcde.17a0", NULL,
                NULL, &status);
    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(core, "apiVersion")), "v1");
    assert_string_equal(str_at(core, "metadata", "uid"), str_at(created, "metadata", "uid"));
    assert_string_equal(str_at(core, "involvedObject", "name"), "virt-launcher-vm-a-abcde");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(core, "message")),
                        "Successfully assigned default/virt-launcher-vm-a-abcde to node-1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(core, "reportingComponent")),
                        "stickyvm");
    cJSON_Delete(core);
    cJSON_Delete(call(h, "DELETE",
                      "/api/v1/namespaces/default/events/virt-launcher-vm-a-abcde.17a0", NULL, NULL,
                      &status));
    assert_int_equal(status, 200);
    cJSON_Delete(call(h, "GET",
                      "/apis/events.k8s.io/v1/namespaces/default/events/"
                      "virt-launcher-vm-a-abcde.17a0",
                      NULL, NULL, &status));
    assert_int_equal(status, 404);
    cJSON_Delete(created);
}

static char *read_text(const char *path)
{
    char *text = NULL;
    size_t len;

    assert_int_equal(kube_read_file(path, &text, &len), KUBE_OK);
    return text;
}

static void auth_configmap_fixture(void **state)
{
    harness *h = H(state);
    cJSON *fx = load_fixture("configmap-extension-apiserver-authentication-200.json");
    const cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(fx, "body"), "data"), *w;
    long status;
    cJSON *got = call(h, "GET", fixture_path(fx), NULL, NULL, &status);
    const cJSON *data = cJSON_GetObjectItem(got, "data");
    char *ca = read_text(harness_ca_file(h)), *fp = read_text(harness_front_proxy_ca_file(h));

    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "kind")), "ConfigMap");
    assert_int_equal(cJSON_GetArraySize(data), cJSON_GetArraySize(want));
    cJSON_ArrayForEach(w, want)
    {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(data, w->string));
        assert_non_null(v);
        if (!strcmp(w->string, "client-ca-file"))
            assert_string_equal(v, ca);
        else if (!strcmp(w->string, "requestheader-client-ca-file"))
            assert_string_equal(v, fp);
        else
            assert_string_equal(v, w->valuestring);
    }
    free(ca);
    free(fp);
    cJSON_Delete(got);
    cJSON_Delete(fx);
}

static void nodes_list_fixture(void **state)
{
    harness *h = H(state);
    cJSON *fx = load_fixture("nodes-list-200.json");
    const cJSON *want = cJSON_GetObjectItem(fx, "body");
    long status;
    cJSON *got = call(h, "GET", fixture_path(fx), NULL, NULL, &status);
    const cJSON *meta = cJSON_GetObjectItem(got, "metadata"),
                *items = cJSON_GetObjectItem(got, "items");
    const char *cont = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "continue"));
    char expect[128], *decoded;
    size_t n;
    const cJSON *w, *g;

    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "kind")), "NodeList");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "apiVersion")), "v1");
    /* metadata members in kube-apiserver's order */
    for (w = cJSON_GetObjectItem(want, "metadata")->child, g = meta->child; w;
         w = w->next, g = g->next)
        assert_string_equal(g->string, w->string);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(meta, "remainingItemCount")), 1);
    /* the token is base64url of {"v":..,"rv":<list rv>,"start":"node-1\u0000"} */
    snprintf(expect, sizeof(expect),
             "{\"v\":\"meta.k8s.io/v1\",\"rv\":%s,\"start\":\"node-1\\u0000\"}",
             cJSON_GetStringValue(cJSON_GetObjectItem(meta, "resourceVersion")));
    assert_non_null(cont);
    assert_null(strchr(cont, '='));
    {
        kube_buf b = KUBE_BUF_INIT;
        static const char tbl[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        unsigned acc = 0;
        int bits = 0;
        for (const char *p = cont; *p; p++) {
            acc = (acc << 6) | (unsigned)(strchr(tbl, *p) - tbl);
            bits += 6;
            if (bits >= 8) {
                char c = (char)((acc >> (bits - 8)) & 0xff);
                bits -= 8;
                kube_buf_append(&b, &c, 1);
            }
        }
        n = b.len;
        decoded = kube_buf_take(&b);
    }
    assert_int_equal(n, strlen(expect));
    assert_string_equal(decoded, expect);
    free(decoded);
    assert_int_equal(cJSON_GetArraySize(items), 2);
    assert_string_equal(str_at(cJSON_GetArrayItem(items, 0), "metadata", "name"), "node-0");
    assert_string_equal(str_at(cJSON_GetArrayItem(items, 1), "metadata", "name"), "node-1");
    /* items carry no kind/apiVersion, as in the recording */
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "kind"));
    match_json("capacity", NULL,
               cJSON_GetObjectItem(
                   cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(want, "items"), 0),
                                       "status"),
                   "capacity"),
               cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "status"),
                                   "capacity"));
    cJSON_Delete(got);
    cJSON_Delete(fx);
}

static void too_old_exact_list_fixture(void **state)
{
    harness *h = H(state);

    assert_int_equal(harness_restart(h), KUBE_OK);
    cJSON_Delete(replay(h, "pods-list-too-old-exact-410.json",
                        PODS "?resourceVersion=1&resourceVersionMatch=Exact", NULL));
}

/* ------------------------------------------------------------------ */
/* Watches                                                             */
/* ------------------------------------------------------------------ */

typedef struct watch_run {
    harness *h;
    char path[768];
    harness_response resp;
    int rc;
    pthread_t thread;
} watch_run;

static void *watch_main(void *arg)
{
    watch_run *w = arg;

    w->rc = harness_request(w->h, NULL, "GET", w->path, NULL, NULL, &w->resp);
    return NULL;
}

/* Watch requests in the emulator's request log so far. */
static int watches_logged(harness *h)
{
    cJSON *items = NULL;
    int n;

    assert_int_equal(harness_requests(h, "watch", NULL, NULL, &items), KUBE_OK);
    n = cJSON_GetArraySize(items);
    cJSON_Delete(items);
    return n;
}

/* Starts the watch and returns once the emulator has it: logged at its
 * arrival, it lists and follows from memory within microseconds (the
 * grace below covers them; a fixed sleep alone raced a slow handshake). */
static void watch_start(watch_run *w, harness *h, const char *path)
{
    int before = watches_logged(h);

    memset(w, 0, sizeof(*w));
    w->h = h;
    snprintf(w->path, sizeof(w->path), "%s", path);
    assert_int_equal(pthread_create(&w->thread, NULL, watch_main, w), 0);
    WAIT_TRUE(watches_logged(h) > before);
    usleep(50 * 1000);
}

/* Joins and splits the stream into events (caller frees the array). */
static cJSON *watch_finish(watch_run *w)
{
    cJSON *events = cJSON_CreateArray();
    char *line, *save = NULL;

    pthread_join(w->thread, NULL);
    assert_int_equal(w->rc, KUBE_OK);
    assert_int_equal(w->resp.status, 200);
    for (line = strtok_r(w->resp.body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *ev = cJSON_Parse(line);
        if (!ev)
            fail_msg("watch line is not JSON: %s", line);
        cJSON_AddItemToArray(events, ev);
    }
    harness_response_free(&w->resp);
    return events;
}

static const char *event_type(const cJSON *events, int i)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(events, i), "type"));
}

static const cJSON *event_object(const cJSON *events, int i)
{
    return cJSON_GetObjectItem(cJSON_GetArrayItem(events, i), "object");
}

static char *list_rv(harness *h, const char *path)
{
    long status;
    cJSON *l = call(h, "GET", path, NULL, NULL, &status);
    char *rv = strdup(str_at(l, "metadata", "resourceVersion"));

    assert_int_equal(status, 200);
    cJSON_Delete(l);
    return rv;
}

static cJSON *load_events(const char *name);

static void watch_stream_fixture(void **state)
{
    harness *h = H(state);
    cJSON *fx = load_fixture("pod-create-201.json"), *events, *pod;
    char *body, *rv = list_rv(h, PODS), path[512], *bind;
    const cJSON *deleted;
    char bookmark[256];
    int n;
    long status;

    /* the recorded pod had no ownerReferences */
    cJSON_DeleteItemFromObject(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(fx, "request"), "body"),
                            "metadata"),
        "ownerReferences");
    body = fixture_request_body(fx);
    /* the changes first: a watch from the old version replays them */
    assert_int_equal(harness_create(h, PODS, body, &pod), KUBE_OK);
    bind = body_with_meta("binding-create-201.json", str_at(pod, "metadata", "uid"), NULL);
    cJSON_Delete(call(h, "POST", PODS "/virt-launcher-vm-a-abcde/binding", NULL, bind, &status));
    assert_int_equal(status, 201);
    cJSON_Delete(call(h, "DELETE", PODS "/virt-launcher-vm-a-abcde?gracePeriodSeconds=0", NULL,
                      NULL, &status));
    assert_int_equal(status, 200);
    snprintf(path, sizeof(path),
             PODS "?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=1", rv);
    watch_run w;
    watch_start(&w, h, path);
    events = watch_finish(&w);
    /* bookmarks may come at any time; drop those before the deletion */
    for (int i = cJSON_GetArraySize(events) - 1; i >= 0; i--)
        if (!strcmp(event_type(events, i), "BOOKMARK") && i < 4)
            cJSON_DeleteItemFromArray(events, i);
    n = cJSON_GetArraySize(events);
    assert_true(n >= 5);
    assert_string_equal(event_type(events, 0), "ADDED");
    assert_string_equal(event_type(events, 1), "MODIFIED");
    assert_string_equal(str_at(event_object(events, 1), "spec", "nodeName"), "node-1");
    assert_string_equal(event_type(events, 2), "MODIFIED");
    assert_non_null(str_at(event_object(events, 2), "metadata", "deletionTimestamp"));
    assert_string_equal(event_type(events, 3), "DELETED");
    deleted = event_object(events, 3);
    /* the recorded stream, object by object (generated values by shape) */
    {
        cJSON *rec = load_events("pods-watch-stream.jsonl");
        for (int i = 0; i < 4; i++) {
            cJSON *want = cJSON_Duplicate(cJSON_GetArrayItem(rec, i), 1);
            /* the recorded pod had another name; everything else must match */
            cJSON_ReplaceItemInObject(
                cJSON_GetObjectItem(cJSON_GetObjectItem(want, "object"), "metadata"), "name",
                cJSON_CreateString("virt-launcher-vm-a-abcde"));
            match_json("pods-watch-stream", NULL, want, cJSON_GetArrayItem(events, i));
            cJSON_Delete(want);
        }
        cJSON_Delete(rec);
    }
    assert_string_equal(event_type(events, 4), "BOOKMARK");
    snprintf(bookmark, sizeof(bookmark),
             "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%s\","
             "\"creationTimestamp\":null},\"spec\":{\"containers\":null},\"status\":{}}",
             str_at(deleted, "metadata", "resourceVersion"));
    {
        char *got = cJSON_PrintUnformatted(event_object(events, 4));
        assert_string_equal(got, bookmark);
        free(got);
    }
    free(bind);
    free(rv);
    free(body);
    cJSON_Delete(pod);
    cJSON_Delete(events);
    cJSON_Delete(fx);
}

/* The recorded events of a .jsonl fixture (the # line skipped). */
static cJSON *load_events(const char *name)
{
    char p[1024], *text = NULL, *line, *save = NULL;
    size_t len;
    cJSON *events = cJSON_CreateArray();

    snprintf(p, sizeof(p), "%s/%s", STICKYVM_FIXTURES_DIR, name);
    assert_int_equal(kube_read_file(p, &text, &len), KUBE_OK);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (line[0] == '{')
            cJSON_AddItemToArray(events, cJSON_Parse(line));
    free(text);
    return events;
}

static void watch_too_old_after_restart(void **state)
{
    harness *h = H(state);
    cJSON *recorded = load_events("pods-watch-too-old-410.jsonl"), *events, *want;
    char *before = list_rv(h, PODS), *rv, path[256], msg[128];
    watch_run w;

    assert_int_equal(harness_restart(h), KUBE_OK);
    rv = list_rv(h, PODS); /* where the new history starts */
    snprintf(path, sizeof(path), PODS "?watch=1&resourceVersion=%s&timeoutSeconds=3", before);
    watch_start(&w, h, path);
    events = watch_finish(&w);
    assert_int_equal(cJSON_GetArraySize(events), 1);
    assert_string_equal(event_type(events, 0), "ERROR");
    cJSON_Delete(events);
    free(before);
    watch_start(&w, h, PODS "?watch=1&resourceVersion=1&timeoutSeconds=3");
    events = watch_finish(&w);
    assert_int_equal(cJSON_GetArraySize(events), 1);
    assert_string_equal(event_type(events, 0), "ERROR");
    /* the recorded ERROR, with this run's versions in the message */
    snprintf(msg, sizeof(msg), "too old resource version: 1 (%s)", rv);
    want = cJSON_Duplicate(event_object(recorded, 0), 1);
    cJSON_ReplaceItemInObject(want, "message", cJSON_CreateString(msg));
    match_status("pods-watch-too-old-410", want, event_object(events, 0));
    cJSON_Delete(want);
    cJSON_Delete(events);
    cJSON_Delete(recorded);
    /* a watch from the current version is fine */
    snprintf(path, sizeof(path), PODS "?watch=1&resourceVersion=%s&timeoutSeconds=1", rv);
    watch_start(&w, h, path);
    events = watch_finish(&w);
    assert_int_equal(cJSON_GetArraySize(events), 0);
    cJSON_Delete(events);
    free(rv);
}

static void watch_from_zero_lists_first(void **state)
{
    harness *h = H(state);
    cJSON *events;
    watch_run w;
    long status;

    watch_start(&w, h, "/api/v1/nodes?watch=true&timeoutSeconds=1");
    cJSON_Delete(call(h, "PATCH", "/api/v1/nodes/node-2", "application/strategic-merge-patch+json",
                      "{\"spec\":{\"unschedulable\":true}}", &status));
    assert_int_equal(status, 200);
    events = watch_finish(&w);
    assert_int_equal(cJSON_GetArraySize(events), 4);
    for (int i = 0; i < 3; i++)
        assert_string_equal(event_type(events, i), "ADDED");
    assert_string_equal(event_type(events, 3), "MODIFIED");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(event_object(events, 3), "spec"), "unschedulable")));
    cJSON_Delete(events);
}

static void watch_selector_sends_deleted(void **state)
{
    harness *h = H(state);
    cJSON *events;
    watch_run w;
    long status;
    char *rv;

    assert_int_equal(harness_create(h, "/api/v1/namespaces/default/configmaps",
                                    "{\"metadata\":{\"name\":\"sel\",\"labels\":{\"app\":\"x\"}}}",
                                    NULL),
                     KUBE_OK);
    rv = list_rv(h, "/api/v1/namespaces/default/configmaps");
    {
        char path[256];
        snprintf(path, sizeof(path),
                 "/api/v1/namespaces/default/configmaps?watch=1&labelSelector=app%%3Dx&"
                 "resourceVersion=%s&timeoutSeconds=2",
                 rv);
        watch_start(&w, h, path);
    }
    cJSON_Delete(call(h, "PATCH", "/api/v1/namespaces/default/configmaps/sel",
                      "application/merge-patch+json", "{\"data\":{\"k\":\"v\"}}", &status));
    cJSON_Delete(call(h, "PATCH", "/api/v1/namespaces/default/configmaps/sel",
                      "application/merge-patch+json", "{\"metadata\":{\"labels\":{\"app\":\"y\"}}}",
                      &status));
    cJSON_Delete(call(h, "PATCH", "/api/v1/namespaces/default/configmaps/sel",
                      "application/merge-patch+json", "{\"metadata\":{\"labels\":{\"app\":\"x\"}}}",
                      &status));
    events = watch_finish(&w);
    assert_int_equal(cJSON_GetArraySize(events), 3);
    assert_string_equal(event_type(events, 0), "MODIFIED");
    assert_string_equal(event_type(events, 1), "DELETED");
    /* the previous state (still labelled app=x) at the event's version */
    assert_string_equal(
        str_at(cJSON_GetObjectItem(event_object(events, 1), "metadata"), "labels", "app"), "x");
    assert_string_not_equal(str_at(event_object(events, 1), "metadata", "resourceVersion"),
                            str_at(event_object(events, 0), "metadata", "resourceVersion"));
    assert_string_equal(event_type(events, 2), "ADDED");
    cJSON_Delete(events);
    free(rv);
}

static void drop_watches_ends_streams(void **state)
{
    harness *h = H(state);
    watch_run w;
    cJSON *events;

    watch_start(&w, h, "/api/v1/namespaces?watch=1&timeoutSeconds=60");
    assert_int_equal(harness_drop_watches(h), KUBE_OK);
    events = watch_finish(&w); /* returns long before the 60 s */
    assert_int_equal(cJSON_GetArraySize(events), 4);
    cJSON_Delete(events);
}

static void slow_history_overflow_is_410(void **state)
{
    harness *h = H(state);
    char *rv = list_rv(h, "/api/v1/namespaces/default/configmaps"), path[256];
    watch_run w;
    cJSON *events;

    for (int i = 0; i < 25; i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"cm-%d\"}}", i);
        assert_int_equal(harness_create(h, "/api/v1/namespaces/default/configmaps", body, NULL),
                         KUBE_OK);
    }
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=1",
             rv);
    watch_start(&w, h, path);
    events = watch_finish(&w);
    assert_int_equal(cJSON_GetArraySize(events), 1);
    assert_string_equal(event_type(events, 0), "ERROR");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(event_object(events, 0), "code")),
                     410);
    cJSON_Delete(events);
    free(rv);
}

/* ------------------------------------------------------------------ */
/* Lists                                                               */
/* ------------------------------------------------------------------ */

static void create_configmaps(harness *h, const char *ns, int n)
{
    char body[256], path[256];

    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"}}", ns);
    assert_int_equal(harness_create(h, "/api/v1/namespaces", body, NULL), KUBE_OK);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    for (int i = 0; i < n; i++) {
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"cm-%02d\",\"labels\":{\"i\":\"%d\"}}}", i, i);
        assert_int_equal(harness_create(h, path, body, NULL), KUBE_OK);
    }
}

static void pagination_is_a_snapshot(void **state)
{
    harness *h = H(state);
    char path[512];
    kube_buf seen = KUBE_BUF_INIT;
    cJSON *page;
    long status;
    char *cont = NULL, *rv0 = NULL;
    int pages = 0;

    create_configmaps(h, "paged", 7);
    for (;;) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/paged/configmaps?limit=3%s%s",
                 cont ? "&continue=" : "", cont ? cont : "");
        page = call(h, "GET", path, NULL, NULL, &status);
        assert_int_equal(status, 200);
        if (!rv0)
            rv0 = strdup(str_at(page, "metadata", "resourceVersion"));
        assert_string_equal(str_at(page, "metadata", "resourceVersion"), rv0);
        for (const cJSON *it = cJSON_GetObjectItem(page, "items")->child; it; it = it->next)
            kube_buf_printf(&seen, "%s ", str_at(it, "metadata", "name"));
        free(cont);
        cont = str_at(page, "metadata", "continue") ? strdup(str_at(page, "metadata", "continue"))
                                                    : NULL;
        if (pages == 0) {
            assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(
                                 cJSON_GetObjectItem(page, "metadata"), "remainingItemCount")),
                             4);
            /* changes after the first page do not show in the later ones */
            cJSON_Delete(call(h, "DELETE", "/api/v1/namespaces/paged/configmaps/cm-05", NULL, NULL,
                              &status));
            assert_int_equal(status, 200);
            assert_int_equal(harness_create(h, "/api/v1/namespaces/paged/configmaps",
                                            "{\"metadata\":{\"name\":\"cm-99\"}}", NULL),
                             KUBE_OK);
        }
        pages++;
        cJSON_Delete(page);
        if (!cont)
            break;
    }
    assert_int_equal(pages, 3);
    assert_string_equal(seen.data, "cm-00 cm-01 cm-02 cm-03 cm-04 cm-05 cm-06 ");
    kube_buf_free(&seen);
    free(rv0);
}

static void exact_list_is_the_past(void **state)
{
    harness *h = H(state);
    cJSON *a, *list;
    long status;
    char path[256];
    const cJSON *items;

    assert_int_equal(harness_create(h, "/api/v1/namespaces/default/configmaps",
                                    "{\"metadata\":{\"name\":\"a\"},\"data\":{\"v\":\"1\"}}", &a),
                     KUBE_OK);
    cJSON_Delete(call(h, "PATCH", "/api/v1/namespaces/default/configmaps/a",
                      "application/merge-patch+json", "{\"data\":{\"v\":\"2\"}}", &status));
    assert_int_equal(status, 200);
    assert_int_equal(harness_create(h, "/api/v1/namespaces/default/configmaps",
                                    "{\"metadata\":{\"name\":\"b\"}}", NULL),
                     KUBE_OK);
    cJSON_Delete(call(h, "DELETE", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", NULL,
                      NULL, &status));
    assert_int_equal(status, 200);
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?resourceVersion=%s&resourceVersionMatch=Exact",
             str_at(a, "metadata", "resourceVersion"));
    list = call(h, "GET", path, NULL, NULL, &status);
    assert_int_equal(status, 200);
    assert_string_equal(str_at(list, "metadata", "resourceVersion"),
                        str_at(a, "metadata", "resourceVersion"));
    items = cJSON_GetObjectItem(list, "items");
    /* as it was: kube-root-ca.crt still there, a at v=1, no b */
    assert_int_equal(cJSON_GetArraySize(items), 2);
    assert_string_equal(str_at(cJSON_GetArrayItem(items, 0), "metadata", "name"), "a");
    assert_string_equal(str_at(cJSON_GetArrayItem(items, 0), "data", "v"), "1");
    assert_string_equal(str_at(cJSON_GetArrayItem(items, 1), "metadata", "name"),
                        "kube-root-ca.crt");
    cJSON_Delete(list);
    cJSON_Delete(a);
}

static void expired_continue_is_410(void **state)
{
    harness *h = H(state);
    cJSON *page, *again;
    long status;
    char path[1024];
    const char *cont;

    create_configmaps(h, "exp", 4);
    page = call(h, "GET", "/api/v1/namespaces/exp/configmaps?limit=2", NULL, NULL, &status);
    assert_int_equal(status, 200);
    assert_int_equal(harness_restart(h), KUBE_OK);
    snprintf(path, sizeof(path), "/api/v1/namespaces/exp/configmaps?limit=2&continue=%s",
             str_at(page, "metadata", "continue"));
    again = call(h, "GET", path, NULL, NULL, &status);
    assert_int_equal(status, 410);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(again, "reason")), "Expired");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(again, "message")),
                        "The provided continue parameter is too old to display a consistent list "
                        "result. You can start a new list without the continue parameter, or use "
                        "the continue token in this response to retrieve the remainder of the "
                        "results. Continuing with the provided token results in an inconsistent "
                        "list - objects that were created, modified, or deleted between the time "
                        "the first chunk was returned and now may show up in the list.");
    cont = str_at(again, "metadata", "continue");
    assert_non_null(cont);
    /* the inconsistent continuation works and yields the rest */
    snprintf(path, sizeof(path), "/api/v1/namespaces/exp/configmaps?limit=2&continue=%s", cont);
    cJSON_Delete(page);
    page = call(h, "GET", path, NULL, NULL, &status);
    assert_int_equal(status, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(page, "items")), 2);
    assert_string_equal(
        str_at(cJSON_GetArrayItem(cJSON_GetObjectItem(page, "items"), 0), "metadata", "name"),
        "cm-02");
    cJSON_Delete(page);
    cJSON_Delete(again);
}

static int count_items(harness *h, const char *path)
{
    long status;
    cJSON *l = call(h, "GET", path, NULL, NULL, &status);
    int n;

    if (status != 200) {
        char *t = cJSON_PrintUnformatted(l);
        fail_msg("GET %s: %ld %s", path, status, t);
    }
    n = cJSON_GetArraySize(cJSON_GetObjectItem(l, "items"));
    cJSON_Delete(l);
    return n;
}

static void selectors(void **state)
{
    harness *h = H(state);
    cJSON *bad;
    long status;

    create_configmaps(h, "sel", 5);
    assert_int_equal(count_items(h, "/api/v1/namespaces/sel/configmaps?labelSelector=i%3D1"), 1);
    assert_int_equal(count_items(h, "/api/v1/namespaces/sel/configmaps?labelSelector=i%3D%3D1"), 1);
    assert_int_equal(count_items(h, "/api/v1/namespaces/sel/configmaps?labelSelector=i%21%3D1"), 4);
    assert_int_equal(count_items(h, "/api/v1/namespaces/sel/configmaps?labelSelector=i+in+(1,2,9)"),
                     2);
    assert_int_equal(
        count_items(h, "/api/v1/namespaces/sel/configmaps?labelSelector=i+notin+(1,2)"), 3);
    assert_int_equal(count_items(h, "/api/v1/namespaces/sel/configmaps?labelSelector=i"), 5);
    assert_int_equal(count_items(h, "/api/v1/namespaces/sel/configmaps?labelSelector=%21i"), 0);
    assert_int_equal(
        count_items(h, "/api/v1/namespaces/sel/configmaps?fieldSelector=metadata.name%3Dcm-03"), 1);
    assert_int_equal(
        count_items(
            h,
            "/api/v1/configmaps?fieldSelector=metadata.namespace%3Dsel,metadata.name%21%3Dcm-03"),
        4);
    assert_int_equal(harness_create(h, PODS,
                                    "{\"metadata\":{\"name\":\"p1\"},\"spec\":{\"containers\":[{"
                                    "\"name\":\"c\",\"image\":\"i:1\"}]}}",
                                    NULL),
                     KUBE_OK);
    assert_int_equal(
        harness_create(h, PODS,
                       "{\"metadata\":{\"name\":\"p2\"},\"spec\":{\"schedulerName\":\"stickyvm\","
                       "\"containers\":[{\"name\":\"c\",\"image\":\"i:1\"}]}}",
                       NULL),
        KUBE_OK);
    cJSON_Delete(call(h, "POST", PODS "/p1/binding", NULL,
                      "{\"metadata\":{\"name\":\"p1\"},\"target\":{\"name\":\"node-0\"}}",
                      &status));
    assert_int_equal(status, 201);
    assert_int_equal(count_items(h, "/api/v1/pods?fieldSelector=spec.nodeName%3D"), 1);
    assert_int_equal(count_items(h, "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-0"), 1);
    assert_int_equal(
        count_items(
            h, "/api/v1/pods?fieldSelector=spec.schedulerName%3Dstickyvm,status.phase%21%3DFailed"),
        1);
    assert_int_equal(count_items(h, "/api/v1/pods?fieldSelector=status.phase%3DPending"), 2);
    bad = call(h, "GET", "/api/v1/pods?fieldSelector=spec.foo%3Dx", NULL, NULL, &status);
    assert_int_equal(status, 400);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(bad, "message")),
                        "field label not supported: spec.foo");
    cJSON_Delete(bad);
}

static void delete_semantics(void **state)
{
    harness *h = H(state);
    cJSON *got;
    long status;
    const char *msg;

    assert_int_equal(harness_create(h, "/api/v1/namespaces/default/configmaps",
                                    "{\"metadata\":{\"name\":\"d1\"}}", NULL),
                     KUBE_OK);
    got = call(h, "DELETE", "/api/v1/namespaces/default/configmaps/d1", NULL,
               "{\"preconditions\":{\"uid\":\"00000000-0000-4000-8000-000000000000\"}}", &status);
    assert_int_equal(status, 409);
    msg = cJSON_GetStringValue(cJSON_GetObjectItem(got, "message"));
    assert_non_null(strstr(msg,
                           "Operation cannot be fulfilled on configmaps \"d1\": StorageError: "
                           "invalid object, Code: 4, Key: /registry/configmaps/default/d1, "
                           "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in "
                           "precondition: 00000000-0000-4000-8000-000000000000, UID in object "
                           "meta: "));
    cJSON_Delete(got);
    got = call(h, "DELETE", "/api/v1/namespaces/default/configmaps/d1", NULL,
               "{\"preconditions\":{\"resourceVersion\":\"1\"}}", &status);
    assert_int_equal(status, 409);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(got, "message")),
                           "Precondition failed: ResourceVersion in precondition: 1, "));
    cJSON_Delete(got);
    got = call(h, "DELETE", "/api/v1/namespaces/default/configmaps/d1", NULL, NULL, &status);
    assert_int_equal(status, 200);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "status")), "Success");
    assert_string_equal(str_at(got, "details", "kind"), "configmaps");
    assert_string_equal(str_at(got, "details", "name"), "d1");
    assert_non_null(str_at(got, "details", "uid"));
    assert_null(cJSON_GetObjectItem(got, "code"));
    cJSON_Delete(got);
    got = call(h, "DELETE", "/api/v1/namespaces/default/configmaps/d1", NULL, NULL, &status);
    assert_int_equal(status, 404);
    cJSON_Delete(got);
    /* finalizers hold the object until they are removed */
    assert_int_equal(harness_create(h, VMS,
                                    "{\"metadata\":{\"name\":\"fin\",\"finalizers\":[\"x/y\"]},"
                                    "\"spec\":{}}",
                                    NULL),
                     KUBE_OK);
    got = call(h, "DELETE", VMS "/fin", NULL, NULL, &status);
    assert_int_equal(status, 200);
    assert_non_null(str_at(got, "metadata", "deletionTimestamp"));
    cJSON_Delete(got);
    got = call(h, "GET", VMS "/fin", NULL, NULL, &status);
    assert_int_equal(status, 200);
    cJSON_Delete(got);
    got = call(h, "PATCH", VMS "/fin", "application/merge-patch+json",
               "{\"metadata\":{\"finalizers\":null}}", &status);
    assert_int_equal(status, 200);
    cJSON_Delete(got);
    got = call(h, "GET", VMS "/fin", NULL, NULL, &status);
    assert_int_equal(status, 404);
    cJSON_Delete(got);
    got = call(h, "GET", "/api/v1/pods?watch=1&resourceVersion=1&resourceVersionMatch=Exact", NULL,
               NULL, &status);
    assert_int_equal(status, 422);
    cJSON_Delete(got);
}

/* ------------------------------------------------------------------ */
/* Robustness, faults, counters, identities                            */
/* ------------------------------------------------------------------ */

static void hostile_bodies(void **state)
{
    harness *h = H(state);
    long status;
    cJSON *got;
    harness_response r;

    got = call(h, "POST", PODS, NULL, "{\"metadata\":", &status);
    assert_int_equal(status, 400);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "reason")), "BadRequest");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "message")),
                        "the object provided is unrecognized (must be of type Pod): couldn't get "
                        "version/kind; json parse error: unexpected end of JSON input "
                        "({\"metadata\":)");
    cJSON_Delete(got);
    got = call(h, "POST", VMS, NULL, "{x}", &status);
    assert_int_equal(status, 400);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(got, "message")),
                           "invalid character 'x' looking for beginning of object key string"));
    cJSON_Delete(got);
    got = call(h, "PATCH", "/api/v1/namespaces/default", "application/merge-patch+json", "[1,",
               &status);
    assert_int_equal(status, 400);
    cJSON_Delete(got);
    got = call(h, "PATCH", VMS "/x", "application/strategic-merge-patch+json", "{}", &status);
    assert_int_equal(status, 415);
    cJSON_Delete(got);
    got = call(h, "POST", PODS "/x", NULL, "{}", &status);
    assert_int_equal(status, 405);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "reason")),
                        "MethodNotAllowed");
    cJSON_Delete(got);
    /* a body over the limit */
    {
        size_t n = 4 * 1024 * 1024;
        char *big = malloc(n + 1);
        memset(big, ' ', n);
        big[0] = '{';
        big[n - 1] = '}';
        big[n] = '\0';
        assert_int_equal(harness_request(h, NULL, "POST", PODS, NULL, big, &r), KUBE_OK);
        assert_int_equal(r.status, 413);
        harness_response_free(&r);
        free(big);
    }
    /* still serving */
    assert_int_equal(count_items(h, "/api/v1/nodes"), 3);
}

static void unauthenticated_is_401(void **state)
{
    harness *h = H(state);
    harness_identity bogus = {"nobody", NULL, NULL, "not-a-token", NULL};
    harness_response r;

    assert_int_equal(harness_request(h, &bogus, "GET", "/api/v1/pods", NULL, NULL, &r), KUBE_OK);
    assert_int_equal(r.status, 401);
    assert_string_equal(r.body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                                "\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":"
                                "\"Unauthorized\",\"code\":401}");
    harness_response_free(&r);
}

static void identities_authenticate(void **state)
{
    harness *h = H(state);
    static const char *const groups[] = {"team-a"};
    const harness_identity *cert, *tok;
    harness_response r;

    assert_int_equal(harness_add_cert_user(h, "alice", groups, 1, &cert), KUBE_OK);
    assert_non_null(cert->cert_file);
    assert_int_equal(access(cert->kubeconfig, R_OK), 0);
    assert_int_equal(harness_request(h, cert, "GET", "/api/v1/namespaces/default", NULL, NULL, &r),
                     KUBE_OK);
    assert_int_not_equal(r.status, 401);
    harness_response_free(&r);
    assert_int_equal(harness_add_token_user(h, "bob", groups, 1, &tok), KUBE_OK);
    assert_non_null(tok->token);
    assert_int_equal(harness_request(h, tok, "GET", "/api/v1/namespaces/default", NULL, NULL, &r),
                     KUBE_OK);
    assert_int_not_equal(r.status, 401);
    harness_response_free(&r);
    /* only system:masters may drive the control API */
    assert_int_equal(harness_request(h, cert, "GET", "/emulator/v1/counters", NULL, NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 403);
    harness_response_free(&r);
}

static void faults_and_counters(void **state)
{
    harness *h = H(state);
    static const char *const verbs[] = {"list", NULL};
    harness_faults f = {1.0, 429, 2, 0, verbs, NULL};
    harness_response r;
    cJSON *st;

    assert_int_equal(harness_reset_counters(h), KUBE_OK);
    assert_int_equal(count_items(h, "/api/v1/nodes"), 3);
    assert_int_equal(count_items(h, "/api/v1/nodes"), 3);
    assert_int_equal(harness_count(h, "list", "nodes"), 2);
    assert_int_equal(harness_set_faults(h, &f), KUBE_OK);
    assert_int_equal(harness_request(h, NULL, "GET", "/api/v1/nodes", NULL, NULL, &r), KUBE_OK);
    assert_int_equal(r.status, 429);
    st = cJSON_Parse(r.body);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(st, "reason")), "TooManyRequests");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "details"),
                                                              "retryAfterSeconds")),
                     2);
    cJSON_Delete(st);
    harness_response_free(&r);
    /* other verbs and the control API are untouched */
    assert_int_equal(harness_request(h, NULL, "GET", "/api/v1/nodes/node-0", NULL, NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
    assert_int_equal(harness_count(h, "list", "nodes"), 3);
    assert_int_equal(harness_clear_faults(h), KUBE_OK);
    assert_int_equal(count_items(h, "/api/v1/nodes"), 3);
}

/* ------------------------------------------------------------------ */
/* Fault rules and the request log                                     */
/* ------------------------------------------------------------------ */

static long get_status(harness *h, const harness_identity *as, const char *path)
{
    harness_response r;
    long status;

    assert_int_equal(harness_request(h, as, "GET", path, NULL, NULL, &r), KUBE_OK);
    status = r.status;
    harness_response_free(&r);
    return status;
}

/* The rule i of GET /emulator/v1/faults (caller frees the document). */
static const cJSON *shown_rule(harness *h, int i, cJSON **doc)
{
    long status;

    *doc = call(h, "GET", "/emulator/v1/faults", NULL, NULL, &status);
    assert_int_equal(status, 200);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(*doc, "rules"), i);
}

static void fault_rule_count_is_spent(void **state)
{
    harness *h = H(state);
    long status;
    cJSON *doc;
    const cJSON *rule;

    /* no errorRate: a rule with a count answers every request it takes */
    cJSON_Delete(call(h, "POST", "/emulator/v1/faults", NULL,
                      "{\"count\":2,\"errorCode\":429,\"retryAfterSeconds\":1,"
                      "\"verbs\":[\"get\"],\"resources\":[\"nodes\"]}",
                      &status));
    assert_int_equal(status, 200);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes"), 200); /* a list: no match */
    rule = shown_rule(h, 0, &doc);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(rule, "remaining")), 2);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(doc, "active")));
    cJSON_Delete(doc);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-0"), 429);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-1"), 429);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-0"), 200);
    rule = shown_rule(h, 0, &doc);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(rule, "remaining")), 0);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(rule, "live")));
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(doc, "active")));
    cJSON_Delete(doc);
    /* bad rules are refused and leave the old ones */
    cJSON_Delete(call(h, "POST", "/emulator/v1/faults", NULL, "{\"action\":\"explode\"}", &status));
    assert_int_equal(status, 400);
    cJSON_Delete(call(h, "POST", "/emulator/v1/faults", NULL, "{\"count\":-1}", &status));
    assert_int_equal(status, 400);
    cJSON_Delete(call(h, "POST", "/emulator/v1/faults", NULL,
                      "{\"rules\":[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]}", &status));
    assert_int_equal(status, 400);
    rule = shown_rule(h, 0, &doc);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(rule, "errorCode")), 429);
    cJSON_Delete(doc);
    /* a slow link (a delay, no errorCode) answers normally */
    cJSON_Delete(
        call(h, "POST", "/emulator/v1/faults", NULL, "{\"delayMs\":1,\"forMs\":60000}", &status));
    assert_int_equal(status, 200);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-0"), 200);
    rule = shown_rule(h, 0, &doc);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(rule, "errorRate")), 0);
    cJSON_Delete(doc);
}

static void fault_rule_for_ms_expires(void **state)
{
    harness *h = H(state);
    static const char *const nodes[] = {"nodes", NULL};
    harness_fault_rule r = {0};
    const cJSON *shown;
    cJSON *doc;

    r.error_code = 503;
    r.for_ms = 2000;
    r.resources = nodes;
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    shown = shown_rule(h, 0, &doc);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(shown, "live")));
    assert_null(cJSON_GetObjectItem(shown, "remaining")); /* no count: unlimited */
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(shown, "remainingMs")) > 0);
    cJSON_Delete(doc);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-0"), 503);
    /* until it expires every request fails, then none */
    WAIT_TRUE(get_status(h, NULL, "/api/v1/nodes/node-0") != 503);
    shown = shown_rule(h, 0, &doc);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(shown, "live")));
    cJSON_Delete(doc);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-1"), 200);
}

static void fault_rules_match_users_and_names(void **state)
{
    harness *h = H(state);
    static const char *const alice_only[] = {"alice", NULL}, *const node1[] = {"node-1", NULL},
                             *const node2[] = {"node-2", NULL},
                             *const viewers[] = {"system:masters"};
    const harness_identity *alice, *bob;
    harness_fault_rule rules[2] = {{0}};

    assert_int_equal(harness_add_cert_user(h, "alice", viewers, 1, &alice), KUBE_OK);
    assert_int_equal(harness_add_token_user(h, "bob", viewers, 1, &bob), KUBE_OK);
    assert_int_equal(get_status(h, alice, "/api/v1/nodes/node-1"), 200);
    rules[0].error_code = 409;
    rules[0].error_rate = 1;
    rules[0].names = node2;
    rules[1].error_code = 503;
    rules[1].error_rate = 1;
    rules[1].users = alice_only;
    rules[1].names = node1;
    assert_int_equal(harness_set_fault_rules(h, rules, 2), KUBE_OK);
    assert_int_equal(get_status(h, alice, "/api/v1/nodes/node-1"), 503);
    assert_int_equal(get_status(h, alice, "/api/v1/nodes/node-0"), 200);
    assert_int_equal(get_status(h, bob, "/api/v1/nodes/node-1"), 200);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-1"), 200);
    /* the first rule that matches applies */
    assert_int_equal(get_status(h, alice, "/api/v1/nodes/node-2"), 409);
    assert_int_equal(get_status(h, bob, "/api/v1/nodes/node-2"), 409);
    assert_int_equal(harness_clear_faults(h), KUBE_OK);
    assert_int_equal(get_status(h, alice, "/api/v1/nodes/node-1"), 200);
}

static void fault_message_is_the_status(void **state)
{
    harness *h = H(state);
    static const char *const create[] = {"create", NULL};
    harness_fault_rule r = {0};
    harness_response resp;
    cJSON *st;

    r.count = 1;
    r.message = "etcdserver: request timed out";
    r.verbs = create;
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    assert_int_equal(harness_request(h, NULL, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                                     "{\"metadata\":{\"name\":\"m\"}}", &resp),
                     KUBE_OK);
    assert_int_equal(resp.status, 500);
    st = cJSON_Parse(resp.body);
    harness_response_free(&resp);
    /* kube-apiserver's answer to an etcd error: no reason, etcd's text */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(st, "message")),
                        "etcdserver: request timed out");
    assert_null(cJSON_GetObjectItem(st, "reason"));
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(st, "code")), 500);
    cJSON_Delete(st);
    assert_int_equal(harness_create(h, "/api/v1/namespaces/default/configmaps",
                                    "{\"metadata\":{\"name\":\"m\"}}", NULL),
                     KUBE_OK);
}

static kube_client *client_for(harness *h, kube_config **cfg)
{
    kube_client_options co;
    kube_client *c = NULL;
    char err[256];

    assert_int_equal(kube_config_load(harness_kubeconfig(h), cfg, err, sizeof(err)), KUBE_OK);
    kube_client_options_default(&co);
    co.qps = 0;
    assert_int_equal(kube_client_new(*cfg, &co, &c), KUBE_OK);
    return c;
}

/* The codes the log holds for verb on resource, in order, into codes. */
static int logged_codes(harness *h, const char *verb, const char *resource, int *codes, int max)
{
    cJSON *items = NULL, *e;
    int n = 0;

    assert_int_equal(harness_requests(h, verb, resource, NULL, &items), KUBE_OK);
    cJSON_ArrayForEach(e, items)
    {
        if (n < max)
            codes[n] = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "code"));
        n++;
    }
    cJSON_Delete(items);
    return n;
}

static void fault_reset_is_a_transport_error(void **state)
{
    harness *h = H(state);
    static const char *const cms[] = {"configmaps", NULL}, *const nodes[] = {"nodes", NULL};
    harness_fault_rule r = {0};
    kube_config *cfg = NULL;
    kube_client *c = client_for(h, &cfg);
    kube_response resp = {0};
    const char *body = "{\"metadata\":{\"name\":\"r\"}}";
    int codes[4];

    r.action = HARNESS_FAULT_RESET;
    r.count = 1;
    r.resources = cms;
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    /* over HTTP/2 (the client's protocol here): no answer, a broken connection */
    assert_int_equal(kube_client_do(c, "POST", "/api/v1/namespaces/default/configmaps",
                                    "application/json", body, strlen(body), &resp),
                     KUBE_EIO);
    assert_int_equal(resp.code, 0);
    assert_int_equal(kube_client_do(c, "POST", "/api/v1/namespaces/default/configmaps",
                                    "application/json", body, strlen(body), &resp),
                     KUBE_OK);
    assert_int_equal(logged_codes(h, "create", "configmaps", codes, 4), 2);
    assert_int_equal(codes[0], 0);
    assert_int_equal(codes[1], 201);
    /* a GET whose connection broke is retried, as client-go does */
    r.resources = nodes;
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    assert_int_equal(kube_client_do(c, "GET", "/api/v1/nodes/node-0", NULL, NULL, 0, &resp),
                     KUBE_OK);
    assert_int_equal(logged_codes(h, "get", "nodes", codes, 4), 2);
    assert_int_equal(codes[0], 0);
    assert_int_equal(codes[1], 200);
    /* over HTTP/1.1 (the harness's own requests) */
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    {
        harness_response hr;
        assert_int_equal(harness_request(h, NULL, "GET", "/api/v1/nodes/node-0", NULL, NULL, &hr),
                         KUBE_EIO);
    }
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-0"), 200);
    /* a stall over HTTP/2 ends the same way once the rule expires */
    r.action = HARNESS_FAULT_STALL;
    r.resources = cms;
    r.for_ms = 1000;
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    assert_int_equal(kube_client_do(c, "POST", "/api/v1/namespaces/default/configmaps",
                                    "application/json", body, strlen(body), &resp),
                     KUBE_EIO);
    assert_int_equal(logged_codes(h, "create", "configmaps", codes, 4), 3);
    assert_int_equal(codes[2], 0);
    kube_response_clear(&resp);
    kube_client_free(c);
    kube_config_free(cfg);
}

typedef struct stalled_get {
    harness *h;
    atomic_int done;
    int rc;
} stalled_get;

static void *stalled_get_main(void *arg)
{
    stalled_get *g = arg;
    harness_response r = {0};

    g->rc = harness_request(g->h, NULL, "GET", "/api/v1/nodes/node-0", NULL, NULL, &r);
    harness_response_free(&r);
    atomic_store(&g->done, 1);
    return NULL;
}

/* Waits until the log holds n requests for get nodes. */
static void wait_logged_gets(harness *h, int n)
{
    int codes[8];

    WAIT_TRUE(logged_codes(h, "get", "nodes", codes, 8) >= n);
}

static void fault_stall_holds_then_closes(void **state)
{
    harness *h = H(state);
    static const char *const nodes[] = {"nodes", NULL};
    harness_fault_rule r = {0};
    stalled_get g = {.h = h};
    pthread_t tid;
    cJSON *doc;
    int codes[2];

    /* held until cleared */
    r.action = HARNESS_FAULT_STALL;
    r.resources = nodes;
    r.verbs = (const char *const[]){"get", NULL};
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    assert_int_equal(harness_clear_requests(h), KUBE_OK);
    assert_int_equal(pthread_create(&tid, NULL, stalled_get_main, &g), 0);
    wait_logged_gets(h, 1);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes"), 200); /* others are answered */
    assert_false(atomic_load(&g.done));
    assert_int_equal(logged_codes(h, "get", "nodes", codes, 2), 1);
    assert_int_equal(codes[0], 0); /* in flight */
    assert_int_equal(harness_clear_faults(h), KUBE_OK);
    pthread_join(tid, NULL);
    assert_int_equal(g.rc, KUBE_EIO); /* closed without an answer */
    /* held until the rule expires */
    r.for_ms = 1500;
    assert_int_equal(harness_set_fault_rules(h, &r, 1), KUBE_OK);
    g.done = 0;
    assert_int_equal(pthread_create(&tid, NULL, stalled_get_main, &g), 0);
    pthread_join(tid, NULL);
    assert_int_equal(g.rc, KUBE_EIO);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(shown_rule(h, 0, &doc), "live")));
    cJSON_Delete(doc);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-0"), 200);
}

static int64_t wall_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *item_str(const cJSON *items, int i, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(items, i), key));
}

static int64_t item_num(const cJSON *items, int i, const char *key)
{
    return (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(items, i), key));
}

static void request_log(void **state)
{
    harness *h = H(state);
    static const char *const viewers[] = {"system:masters"};
    const harness_identity *alice;
    int64_t before = wall_now_ns(), after;
    const char *binding = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
                          "\"p\"},\"target\":{\"kind\":\"Node\",\"name\":\"node-1\"}}";
    cJSON *items = NULL;
    long status;

    assert_int_equal(harness_add_cert_user(h, "alice", viewers, 1, &alice), KUBE_OK);
    assert_int_equal(harness_clear_requests(h), KUBE_OK);
    assert_int_equal(get_status(h, alice, "/api/v1/nodes/node-1"), 200);
    assert_int_equal(get_status(h, alice, "/api/v1/nodes/nope"), 404);
    assert_int_equal(get_status(h, NULL, "/api/v1/nodes/node-2"), 200);
    assert_int_equal(harness_create(h, PODS,
                                    "{\"metadata\":{\"name\":\"p\"},\"spec\":{"
                                    "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
                                    NULL),
                     KUBE_OK);
    cJSON_Delete(call(h, "POST", PODS "/p/binding", NULL, binding, &status));
    assert_int_equal(status, 201);
    cJSON_Delete(call(h, "POST", PODS "/p/binding", NULL, binding, &status));
    assert_int_equal(status, 409);
    after = wall_now_ns();

    assert_int_equal(harness_requests(h, "get", "nodes", "alice", &items), KUBE_OK);
    assert_int_equal(cJSON_GetArraySize(items), 2);
    assert_string_equal(item_str(items, 0, "user"), "alice");
    assert_string_equal(item_str(items, 0, "verb"), "get");
    assert_string_equal(item_str(items, 0, "resource"), "nodes");
    assert_string_equal(item_str(items, 0, "name"), "node-1");
    assert_int_equal(item_num(items, 0, "code"), 200);
    assert_string_equal(item_str(items, 1, "name"), "nope");
    assert_int_equal(item_num(items, 1, "code"), 404);
    assert_true(item_num(items, 0, "timeNs") >= before - 1000000);
    assert_true(item_num(items, 1, "timeNs") >= item_num(items, 0, "timeNs"));
    assert_true(item_num(items, 1, "timeNs") <= after + 1000000);
    cJSON_Delete(items);
    assert_int_equal(harness_requests(h, "get", "nodes", NULL, &items), KUBE_OK);
    assert_int_equal(cJSON_GetArraySize(items), 3);
    assert_string_equal(item_str(items, 2, "user"), "admin");
    cJSON_Delete(items);

    assert_int_equal(harness_requests(h, "create", "pods/binding", NULL, &items), KUBE_OK);
    assert_int_equal(cJSON_GetArraySize(items), 2);
    assert_string_equal(item_str(items, 0, "namespace"), "default");
    assert_string_equal(item_str(items, 0, "name"), "p");
    assert_int_equal(item_num(items, 0, "code"), 201);
    assert_int_equal(item_num(items, 1, "code"), 409);
    cJSON_Delete(items);
    /* the control API is not logged; DELETE empties the log */
    assert_int_equal(harness_requests(h, NULL, NULL, NULL, &items), KUBE_OK);
    assert_int_equal(cJSON_GetArraySize(items), 6);
    cJSON_Delete(items);
    assert_int_equal(harness_clear_requests(h), KUBE_OK);
    assert_int_equal(harness_requests(h, NULL, NULL, NULL, &items), KUBE_OK);
    assert_int_equal(cJSON_GetArraySize(items), 0);
    cJSON_Delete(items);
}

/* ------------------------------------------------------------------ */
/* kubectl                                                             */
/* ------------------------------------------------------------------ */

static int kubectl(harness *h, const char *args, char *out, size_t n)
{
    char cmd[2048];
    FILE *p;
    size_t got = 0;
    int status;

    snprintf(cmd, sizeof(cmd),
             KUBECTL " --kubeconfig %s --cache-dir %s/kcache --request-timeout=20s %s 2>&1",
             harness_kubeconfig(h), harness_data_dir(h), args);
    p = popen(cmd, "r");
    assert_non_null(p);
    while (got + 1 < n && !feof(p)) {
        size_t r = fread(out + got, 1, n - got - 1, p);
        if (r == 0)
            break;
        got += r;
    }
    out[got] = '\0';
    status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void kubectl_smoke(void **state)
{
    harness *h = H(state);
    char out[8192], path[512], args[1024];
    FILE *f;
    long status;
    cJSON *node;

    if (access(KUBECTL, X_OK) != 0)
        skip();
    assert_int_equal(kubectl(h, "get nodes -o name", out, sizeof(out)), 0);
    assert_string_equal(out, "node/node-0\nnode/node-1\nnode/node-2\n");
    snprintf(path, sizeof(path), "%s/pod.yaml", harness_data_dir(h));
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: Pod\nmetadata:\n  name: smoke\nspec:\n  schedulerName: stickyvm\n"
          "  containers:\n  - name: c\n    image: registry.invalid/pause:3.9\n",
          f);
    fclose(f);
    snprintf(args, sizeof(args), "create -f %s", path);
    assert_int_equal(kubectl(h, args, out, sizeof(out)), 0);
    assert_string_equal(out, "pod/smoke created\n");
    assert_int_equal(
        kubectl(h, "get pod smoke -o jsonpath={.spec.schedulerName}", out, sizeof(out)), 0);
    assert_string_equal(out, "stickyvm");
    assert_int_equal(kubectl(h, "get pods", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "smoke"));
    assert_non_null(strstr(out, "Pending"));
    assert_int_equal(
        kubectl(h, "patch pod smoke --type merge -p '{\"metadata\":{\"labels\":{\"a\":\"b\"}}}'",
                out, sizeof(out)),
        0);
    assert_int_equal(kubectl(h, "get pods -l a=b -o name", out, sizeof(out)), 0);
    assert_string_equal(out, "pod/smoke\n");
    assert_int_equal(kubectl(h, "cordon node-1", out, sizeof(out)), 0);
    node = call(h, "GET", "/api/v1/nodes/node-1", NULL, NULL, &status);
    assert_true(
        cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(node, "spec"), "unschedulable")));
    cJSON_Delete(node);
    assert_int_equal(
        kubectl(h, "get --raw /api/v1/namespaces/default/pods/smoke", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "\"name\":\"smoke\""));
    assert_int_equal(kubectl(h, "delete pod smoke --wait=true", out, sizeof(out)), 0);
    assert_string_equal(out, "pod \"smoke\" deleted\n");
    assert_int_not_equal(kubectl(h, "get pod smoke", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "NotFound"));
    assert_int_equal(kubectl(h, "get vm -A", out, sizeof(out)), 0);
    assert_int_equal(kubectl(h, "api-resources --api-group=kubevirt.io -o name", out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "virtualmachines.kubevirt.io"));
}

int test_group_emulator(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(kubevirt_fixtures, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_resource_is_plain_text, setup, teardown),
        cmocka_unit_test_setup_teardown(pod_and_binding_fixtures, setup, teardown),
        cmocka_unit_test_setup_teardown(binding_preconditions, setup, teardown),
        cmocka_unit_test_setup_teardown(pod_status_and_delete_fixtures, setup, teardown),
        cmocka_unit_test_setup_teardown(lease_fixtures, setup, teardown),
        cmocka_unit_test_setup_teardown(events_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(auth_configmap_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(nodes_list_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(too_old_exact_list_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(watch_stream_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(watch_too_old_after_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(watch_from_zero_lists_first, setup, teardown),
        cmocka_unit_test_setup_teardown(watch_selector_sends_deleted, setup, teardown),
        cmocka_unit_test_setup_teardown(drop_watches_ends_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(slow_history_overflow_is_410, setup_small_history,
                                        teardown),
        cmocka_unit_test_setup_teardown(pagination_is_a_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(exact_list_is_the_past, setup, teardown),
        cmocka_unit_test_setup_teardown(expired_continue_is_410, setup, teardown),
        cmocka_unit_test_setup_teardown(selectors, setup, teardown),
        cmocka_unit_test_setup_teardown(delete_semantics, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(unauthenticated_is_401, setup, teardown),
        cmocka_unit_test_setup_teardown(identities_authenticate, setup, teardown),
        cmocka_unit_test_setup_teardown(faults_and_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(fault_rule_count_is_spent, setup, teardown),
        cmocka_unit_test_setup_teardown(fault_rule_for_ms_expires, setup, teardown),
        cmocka_unit_test_setup_teardown(fault_rules_match_users_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(fault_message_is_the_status, setup, teardown),
        cmocka_unit_test_setup_teardown(fault_reset_is_a_transport_error, setup, teardown),
        cmocka_unit_test_setup_teardown(fault_stall_holds_then_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(request_log, setup, teardown),
        cmocka_unit_test_setup_teardown(kubectl_smoke, setup, teardown),
    };

    return cmocka_run_group_tests_name("emulator", tests, NULL, NULL);
}
