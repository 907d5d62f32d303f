/*
 * tests/unit/test_pin.c - kube/types/pin without a server: the annotation key's
 * validation, the merge patch's shape, the reads. The conflict loop is
 * tested against the emulator in tests/integration/test_pin_integration.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/types/pin.h"

/* ------------------------------------------------------------------ */
/* Validation                                                          */
/* ------------------------------------------------------------------ */

static void expect_key_ok(const char *key)
{
    char msg[1024] = "";
    if (kube_pin_key_check(key, msg, sizeof(msg)) != KUBE_OK)
        fail_msg("key \"%s\" refused: %s", key, msg);
}

static void expect_key_bad(const char *key, const char *want)
{
    char msg[1024] = "";
    assert_int_equal(kube_pin_key_check(key, msg, sizeof(msg)), KUBE_EINVAL);
    if (!strstr(msg, want))
        fail_msg("key \"%s\": \"%s\" lacks \"%s\"", key ? key : "(null)", msg, want);
}

static void test_key_validation(void **state)
{
    char prefix[300], name[80], key[600];
    (void)state;
    expect_key_ok("stickyvm.io/node");
    expect_key_ok("node");
    expect_key_ok("Example.COM/Node_1.x"); /* the prefix is checked lower-cased */
    expect_key_ok("a/b");
    expect_key_bad("", "Required value");
    expect_key_bad(NULL, "Required value");
    expect_key_bad("a b", "Invalid value: \"a b\": name part must consist of");
    expect_key_bad("example.com/", "name part must be non-empty");
    expect_key_bad("/node", "prefix part must be non-empty");
    expect_key_bad("-x.io/node", "prefix part a lowercase RFC 1123 subdomain");
    expect_key_bad("a/b/c", "a qualified name must consist of");
    expect_key_bad("x.io/-node", "name part must consist of");
    memset(name, 'n', 64);
    name[64] = '\0';
    snprintf(key, sizeof(key), "x.io/%s", name);
    expect_key_bad(key, "name part must be no more than 63 characters");
    name[63] = '\0';
    snprintf(key, sizeof(key), "x.io/%s", name);
    expect_key_ok(key);
    memset(prefix, 'p', 254);
    prefix[254] = '\0';
    snprintf(key, sizeof(key), "%s/n", prefix);
    expect_key_bad(key, "prefix part must be no more than 253 characters");
    memset(key, 'k', 512);
    key[512] = '\0';
    expect_key_bad(key, "too long");
}

/* ------------------------------------------------------------------ */
/* The patch                                                           */
/* ------------------------------------------------------------------ */

static char *patch_text(const kube_pin_write *w, const char *rv)
{
    cJSON *p = kube_pin_patch_new(w, rv, (time_t)1767225600); /* 2026-01-01T00:00:00Z */
    assert_non_null(p);
    char *text = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    return text;
}

static void test_patch_shape(void **state)
{
    (void)state;
    kube_pin_write first = {.key = "stickyvm.io/node",
                            .node = "node-1",
                            .reason = KUBE_PIN_FIRST_PLACEMENT,
                            .by = KUBE_PIN_BY_SCHEDULER};
    char *t = patch_text(&first, "239");
    assert_string_equal(t, "{\"metadata\":{\"resourceVersion\":\"239\",\"annotations\":{"
                           "\"stickyvm.io/node\":\"node-1\","
                           "\"stickyvm.io/pinned-at\":\"2026-01-01T00:00:00Z\","
                           "\"stickyvm.io/pinned-by\":\"system:stickyvm-scheduler\","
                           "\"stickyvm.io/pin-reason\":\"FirstPlacement\"}}}");
    free(t);

    /* An unpin removes the key, keeps followed-migration (not in the patch). */
    kube_pin_write unpin = {.key = "example.com/host", .reason = KUBE_PIN_API, .by = "alice"};
    t = patch_text(&unpin, NULL);
    assert_string_equal(t, "{\"metadata\":{\"annotations\":{\"example.com/host\":null,"
                           "\"stickyvm.io/pinned-at\":\"2026-01-01T00:00:00Z\","
                           "\"stickyvm.io/pinned-by\":\"alice\","
                           "\"stickyvm.io/pin-reason\":\"API\"}}}");
    free(t);

    kube_pin_write mig = {.key = "stickyvm.io/node",
                          .node = "node-2",
                          .reason = KUBE_PIN_MIGRATION,
                          .by = "system:stickyvm-scheduler",
                          .migration_uid = "m-1"};
    t = patch_text(&mig, "7");
    assert_non_null(strstr(t, "\"stickyvm.io/pin-reason\":\"Migration\","
                              "\"stickyvm.io/followed-migration\":\"m-1\"}"));
    free(t);

    /* A decision records what it saw: seen-pods ("" none), seen-migration
     * (null when none). */
    kube_pin_seen seen = {.pods = "uid-a,uid-b", .migration = "m-2"}, none = {0};
    unpin.seen = &seen;
    t = patch_text(&unpin, NULL);
    assert_non_null(strstr(t, "\"stickyvm.io/pin-reason\":\"API\","
                              "\"stickyvm.io/seen-pods\":\"uid-a,uid-b\","
                              "\"stickyvm.io/seen-migration\":\"m-2\"}"));
    free(t);
    unpin.seen = &none;
    t = patch_text(&unpin, NULL);
    assert_non_null(strstr(t, "\"stickyvm.io/seen-pods\":\"\","
                              "\"stickyvm.io/seen-migration\":null}"));
    free(t);
    assert_true(kube_pin_is_decision(KUBE_PIN_API) && kube_pin_is_decision(KUBE_PIN_NODE_LOST));
    assert_false(kube_pin_is_decision(KUBE_PIN_FIRST_PLACEMENT) ||
                 kube_pin_is_decision(KUBE_PIN_MIGRATION));

    /* Refused: no key, no author, an empty node, a migration UID on
     * another reason. */
    kube_pin_write bad[] = {
        {.node = "n", .by = "x"},
        {.key = "k", .node = "n"},
        {.key = "k", .node = "", .by = "x"},
        {.key = "k", .node = "n", .by = "x", .reason = KUBE_PIN_API, .migration_uid = "m"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_null(kube_pin_patch_new(&bad[i], NULL, 0));
    assert_string_equal(kube_pin_reason_name(KUBE_PIN_FIRST_PLACEMENT), "FirstPlacement");
}

static kube_object *vm_from(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    kube_object *o = NULL;
    assert_non_null(j);
    assert_int_equal(kube_vm_codec.decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return o;
}

static void test_reads(void **state)
{
    (void)state;
    kube_object *o = vm_from("{\"metadata\":{\"name\":\"v\",\"annotations\":{"
                             "\"stickyvm.io/node\":\"node-1\",\"x/y\":\"\","
                             "\"stickyvm.io/followed-migration\":\"m-1\"}}}");
    const kube_vm *vm = kube_vm_from(o);
    assert_string_equal(kube_pin_get(vm, "stickyvm.io/node"), "node-1");
    assert_null(kube_pin_get(vm, "x/y")); /* empty: unpinned */
    assert_null(kube_pin_get(vm, "other/key"));
    assert_null(kube_pin_get(NULL, "stickyvm.io/node"));
    assert_string_equal(kube_pin_followed(vm), "m-1");
    kube_object_unref(o);
}

int test_group_pin(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_validation),
        cmocka_unit_test(test_patch_shape),
        cmocka_unit_test(test_reads),
    };
    return cmocka_run_group_tests_name("pin", tests, NULL, NULL);
}
