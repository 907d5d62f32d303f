/*
 * tests/unit/test_apiserver_status.c - Status bodies, the pin answer, and
 * the discovery and OpenAPI documents of stickyvm-apiserver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/discovery.h"
#include "apiserver/status.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

static cJSON *parse_buf(const kube_buf *b)
{
    cJSON *j;

    assert_non_null(b->data);
    assert_true(b->len > 0 && b->data[b->len - 1] == '\n');
    j = cJSON_Parse(b->data);
    assert_non_null(j);
    return j;
}

static const char *str(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void writes_status_like_apimachinery(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    kube_status_details d = {.name = "nope", .group = "kubevirt.io", .kind = "virtualmachines"};
    (void)state;

    assert_int_equal(
        kube_status_json(&b, 404, "NotFound", "virtualmachines.kubevirt.io \"nope\" not found", &d),
        KUBE_OK);
    /* compact, one trailing newline, fields in apimachinery order (vm-get-404) */
    assert_string_equal(
        b.data, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                "\"message\":\"virtualmachines.kubevirt.io \\\"nope\\\" not found\","
                "\"reason\":\"NotFound\",\"details\":{\"name\":\"nope\",\"group\":\"kubevirt.io\","
                "\"kind\":\"virtualmachines\"},\"code\":404}\n");
    kube_buf_free(&b);
}

static void writes_unauthorized_and_method_not_allowed(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    cJSON *j;
    (void)state;

    assert_int_equal(kube_status_unauthorized(&b), KUBE_OK);
    j = parse_buf(&b);
    assert_string_equal(str(j, "reason"), "Unauthorized");
    assert_string_equal(str(j, "message"), "Unauthorized");
    assert_int_equal(cJSON_GetObjectItem(j, "code")->valueint, 401);
    cJSON_Delete(j);
    kube_buf_reset(&b);
    assert_int_equal(kube_status_method_not_allowed(&b), KUBE_OK);
    j = parse_buf(&b);
    assert_string_equal(str(j, "reason"), "MethodNotAllowed");
    assert_int_equal(cJSON_GetObjectItem(j, "code")->valueint, 405);
    cJSON_Delete(j);
    kube_buf_free(&b);
}

static void writes_forbidden_messages(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    kube_forbidden res = {.user = "alice",
                          .verb = "get",
                          .group = "subresources.stickyvm.io",
                          .resource = "virtualmachines",
                          .subresource = "pin",
                          .namespace_ = "default",
                          .name = "vm-a",
                          .reason = ""};
    kube_forbidden nonres = {.user = "system:serviceaccount:monitoring:prometheus",
                             .verb = "get",
                             .path = "/metrics",
                             .reason = "no RBAC policy matched"};
    const cJSON *details;
    cJSON *j;
    (void)state;

    assert_int_equal(kube_status_forbidden(&b, &res), KUBE_OK);
    j = parse_buf(&b);
    assert_string_equal(
        str(j, "message"),
        "virtualmachines.subresources.stickyvm.io \"vm-a\" is forbidden: User \"alice\" "
        "cannot get resource \"virtualmachines/pin\" in API group "
        "\"subresources.stickyvm.io\" in the namespace \"default\"");
    assert_string_equal(str(j, "reason"), "Forbidden");
    details = cJSON_GetObjectItem(j, "details");
    assert_string_equal(str(details, "name"), "vm-a");
    assert_string_equal(str(details, "kind"), "virtualmachines");
    assert_string_equal(str(details, "group"), "subresources.stickyvm.io");
    cJSON_Delete(j);

    kube_buf_reset(&b);
    assert_int_equal(kube_status_forbidden(&b, &nonres), KUBE_OK);
    j = parse_buf(&b);
    assert_string_equal(
        str(j, "message"),
        "forbidden: User \"system:serviceaccount:monitoring:prometheus\" cannot get "
        "path \"/metrics\": no RBAC policy matched");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "details")), 0);
    cJSON_Delete(j);

    /* quotes in user names are escaped as Go's %q does */
    kube_buf_reset(&b);
    nonres.user = "ev\"il";
    nonres.reason = NULL;
    assert_int_equal(kube_status_forbidden(&b, &nonres), KUBE_OK);
    j = parse_buf(&b);
    assert_string_equal(str(j, "message"),
                        "forbidden: User \"ev\\\"il\" cannot get path \"/metrics\"");
    cJSON_Delete(j);
    kube_buf_free(&b);
}

static void writes_invalid_with_causes(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    kube_status_details d = {.name = "vm1",
                             .group = "subresources.stickyvm.io",
                             .kind = "VirtualMachinePin",
                             .cause_reason = "FieldValueNotFound",
                             .cause_message = "Not found: \"node-9\"",
                             .cause_field = "node"};
    const cJSON *cause;
    cJSON *j;
    (void)state;

    assert_int_equal(kube_status_json(&b, 422, "Invalid", "m", &d), KUBE_OK);
    j = parse_buf(&b);
    cause = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes"), 0);
    assert_string_equal(str(cause, "reason"), "FieldValueNotFound");
    assert_string_equal(str(cause, "field"), "node");
    cJSON_Delete(j);
    kube_buf_free(&b);

    /* a second cause of the same reason and field */
    d.cause_message2 = "Invalid value: \"X\": second rule";
    assert_int_equal(kube_status_json(&b, 422, "Invalid", "m", &d), KUBE_OK);
    j = parse_buf(&b);
    const cJSON *causes = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes");
    assert_int_equal(cJSON_GetArraySize(causes), 2);
    assert_string_equal(str(cJSON_GetArrayItem(causes, 1), "message"), d.cause_message2);
    assert_string_equal(str(cJSON_GetArrayItem(causes, 1), "field"), "node");
    assert_string_equal(str(cJSON_GetArrayItem(causes, 1), "reason"), "FieldValueNotFound");
    cJSON_Delete(j);
    kube_buf_free(&b);
}

static void writes_the_pin_answer(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_int_equal(apis_pin_answer_json(&b, "default", "vm1", "node-1", NULL, 1), KUBE_OK);
    assert_string_equal(b.data,
                        "{\"apiVersion\":\"subresources.stickyvm.io/v1\","
                        "\"kind\":\"VirtualMachinePin\",\"metadata\":{\"name\":\"vm1\","
                        "\"namespace\":\"default\"},\"node\":\"node-1\",\"previousNode\":null,"
                        "\"changed\":true}\n");
    kube_buf_reset(&b);
    assert_int_equal(apis_pin_answer_json(&b, "default", "vm1", NULL, "node-1", 1), KUBE_OK);
    assert_non_null(strstr(b.data, "\"node\":null,\"previousNode\":\"node-1\""));
    kube_buf_free(&b);
}

static const cJSON *resource_named(const cJSON *list, const char *name)
{
    const cJSON *r;

    cJSON_ArrayForEach(
        r, cJSON_GetObjectItem(list, "resources")) if (!strcmp(str(r, "name"), name)) return r;
    return NULL;
}

static void serves_valid_discovery(void **state)
{
    size_t len;
    const char *doc = apis_discovery_resource_list(&len);
    cJSON *j = cJSON_Parse(doc);
    const cJSON *pin, *verbs;
    (void)state;

    assert_int_equal(len, strlen(doc));
    assert_non_null(j);
    assert_string_equal(str(j, "kind"), "APIResourceList");
    assert_string_equal(str(j, "groupVersion"), "subresources.stickyvm.io/v1");
    pin = resource_named(j, "virtualmachines/pin");
    assert_non_null(pin);
    assert_non_null(resource_named(j, "virtualmachines/unpin"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(pin, "namespaced")));
    verbs = cJSON_GetObjectItem(pin, "verbs");
    assert_int_equal(cJSON_GetArraySize(verbs), 3);
    cJSON_Delete(j);

    j = cJSON_Parse(apis_discovery_group_list(NULL));
    assert_string_equal(str(j, "kind"), "APIGroupList");
    assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0), "name"),
                        "subresources.stickyvm.io");
    cJSON_Delete(j);
    j = cJSON_Parse(apis_discovery_group(NULL));
    assert_string_equal(str(cJSON_GetObjectItem(j, "preferredVersion"), "groupVersion"),
                        "subresources.stickyvm.io/v1");
    cJSON_Delete(j);
    j = cJSON_Parse(apis_discovery_root(NULL));
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(j, "paths")) >= 5);
    cJSON_Delete(j);
}

static void serves_a_valid_openapi_document(void **state)
{
    cJSON *j = cJSON_Parse(apis_openapi_v2(NULL));
    const cJSON *paths;
    const char *etag = apis_openapi_v2_etag();
    (void)state;

    assert_non_null(j);
    assert_string_equal(str(j, "swagger"), "2.0");
    assert_non_null(str(cJSON_GetObjectItem(j, "info"), "title"));
    paths = cJSON_GetObjectItem(j, "paths");
    assert_non_null(cJSON_GetObjectItem(
        paths,
        "/apis/subresources.stickyvm.io/v1/namespaces/{namespace}/virtualmachines/{name}/pin"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "definitions"),
                                        "io.stickyvm.subresources.v1.VirtualMachinePin"));
    /* the precondition ?from= on both subresources */
    static const char *const subs[] = {"pin", "unpin"};
    for (size_t i = 0; i < 2; i++) {
        char path[160];
        const cJSON *p, *found = NULL;
        snprintf(
            path, sizeof(path),
            "/apis/subresources.stickyvm.io/v1/namespaces/{namespace}/virtualmachines/{name}/%s",
            subs[i]);
        cJSON_ArrayForEach(p, cJSON_GetObjectItem(cJSON_GetObjectItem(paths, path), "parameters"))
        {
            if (strcmp(str(p, "name"), "from") == 0)
                found = p;
        }
        assert_non_null(found);
        assert_string_equal(str(found, "in"), "query");
    }
    cJSON_Delete(j);
    assert_int_equal(strlen(etag), 66);
    assert_int_equal(etag[0], '"');
    assert_ptr_equal(etag, apis_openapi_v2_etag());
}

int test_group_apiserver_status(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_status_like_apimachinery),
        cmocka_unit_test(writes_unauthorized_and_method_not_allowed),
        cmocka_unit_test(writes_forbidden_messages),
        cmocka_unit_test(writes_invalid_with_causes),
        cmocka_unit_test(writes_the_pin_answer),
        cmocka_unit_test(serves_valid_discovery),
        cmocka_unit_test(serves_a_valid_openapi_document),
    };
    return cmocka_run_group_tests_name("apiserver_status", tests, NULL, NULL);
}
