/*
 * tests/integration/test_emulator_kubectl.h - helpers shared by the
 * emulator_kubectl_* groups (test_emulator_kubectl_*.c): requests with
 * kubectl's headers and bodies, and running the real kubectl
 * (/usr/bin/kubectl, v1.32 here) against the emulator when it exists.
 *
 * Memory: returned cJSON trees are the caller's (cJSON_Delete). Failures
 * are cmocka assertions.
 */
#ifndef STICKYVM_TEST_EMULATOR_KUBECTL_H
#define STICKYVM_TEST_EMULATOR_KUBECTL_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "harness.h"

#define EK_KUBECTL "/usr/bin/kubectl"

/* The Accept header kubectl get sends (captured from kubectl v1.32.4 -v=8
 * against the emulator). */
#define EK_ACCEPT_TABLE                                                                            \
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s." \
    "io,application/json"
/* What kubectl's typed clients send (drain, auth can-i). */
#define EK_ACCEPT_PROTOBUF "application/vnd.kubernetes.protobuf,application/json"
#define EK_PROTOBUF "application/vnd.kubernetes.protobuf"

/* A request as admin (as NULL) or as; accept NULL keeps the harness's
 * default; body of len bytes (may hold NULs) or NULL. Returns the parsed
 * answer (NULL when not JSON) and its code in *status. */
cJSON *ek_call(harness *h, const harness_identity *as, const char *method, const char *path,
               const char *accept, const char *ctype, const char *body, size_t len, long *status);
/* POSTs json to path and asserts 201. */
void ek_create(harness *h, const char *path, const char *json);
/* PUTs the object at path with its status replaced by status_json
 * (through path + "/status"), asserting 200. */
void ek_set_status(harness *h, const char *path, const char *status_json);
/* 1 when the real kubectl is there. */
int ek_have_kubectl(void);
/* Runs kubectl ARGS with kubeconfig (NULL: admin), output (stdout and
 * stderr) into out. Returns the exit code. */
int ek_kubectl(harness *h, const char *kubeconfig, const char *args, char *out, size_t n);
/* The string in row r, column c of a Table ("" when not a string). */
const char *ek_cell(const cJSON *table, int r, int c);

#endif
