/*
 * tests/unit/test_workload.c - kube/types/workload: decoding Services,
 * ReplicationControllers, ReplicaSets and StatefulSets down to their
 * selectors (nil, empty and set; malformed input rejected), the map
 * selector's matching, and the listers over stores.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/codec/jsonstream.h"
#include "kube/machinery/store.h"
#include "kube/types/workload.h"

/* Decodes json with kind k's codec into *out (NULL on error); returns the
 * decoder's code. The caller releases *out. */
static int decode(kube_workload_kind k, const char *json, kube_object **out)
{
    cJSON *j = cJSON_Parse(json);
    int rc;

    assert_non_null(j);
    rc = kube_workload_codecs[k].decode(j, out);
    cJSON_Delete(j);
    return rc;
}

/* The decoded workload (asserts success); release with kube_object_unref. */
static const kube_workload *must_decode(kube_workload_kind k, const char *json)
{
    kube_object *obj = NULL;
    assert_int_equal(decode(k, json, &obj), KUBE_OK);
    assert_non_null(kube_workload_from(obj));
    return kube_workload_from(obj);
}

static void release(const kube_workload *w)
{
    kube_object_unref((kube_object *)&w->base);
}

static const kube_kv web_labels[] = {{"app", "web"}, {"tier", "front"}};

static void service_map_selector(void **state)
{
    const kube_workload *w = must_decode(
        KUBE_WORKLOAD_SERVICE,
        "{\"kind\":\"Service\",\"metadata\":{\"name\":\"s\",\"namespace\":\"ns\",\"uid\":\"u1\"},"
        "\"spec\":{\"selector\":{\"app\":\"web\"},\"ports\":[{\"port\":80}]}}");
    (void)state;
    assert_int_equal(w->kind, KUBE_WORKLOAD_SERVICE);
    assert_string_equal(w->base.meta.namespace_, "ns");
    assert_string_equal(w->base.meta.uid, "u1");
    assert_true(w->has_map);
    assert_int_equal(w->n_map, 1);
    assert_string_equal(w->map[0].key, "app");
    assert_string_equal(w->map[0].value, "web");
    assert_null(w->selector);
    assert_true(kube_workload_map_matches(w, web_labels, 2));
    assert_false(kube_workload_map_matches(w, web_labels + 1, 1));
    release(w);
}

/* A nil selector selects nothing (GetPodServices skips it), {} everything. */
static void service_nil_and_empty_selector(void **state)
{
    const kube_workload *nil =
        must_decode(KUBE_WORKLOAD_SERVICE,
                    "{\"metadata\":{\"name\":\"ext\"},\"spec\":{\"type\":\"ExternalName\"}}");
    const kube_workload *null = must_decode(
        KUBE_WORKLOAD_SERVICE, "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"selector\":null}}");
    const kube_workload *empty = must_decode(
        KUBE_WORKLOAD_SERVICE, "{\"metadata\":{\"name\":\"e\"},\"spec\":{\"selector\":{}}}");
    (void)state;
    assert_false(nil->has_map);
    assert_false(kube_workload_map_matches(nil, web_labels, 2));
    assert_false(null->has_map);
    assert_true(empty->has_map);
    assert_int_equal(empty->n_map, 0);
    assert_true(kube_workload_map_matches(empty, NULL, 0));
    release(nil);
    release(null);
    release(empty);
}

static void controllers(void **state)
{
    const kube_workload *rc =
        must_decode(KUBE_WORKLOAD_RC, "{\"metadata\":{\"name\":\"rc\"},\"spec\":{\"replicas\":2,"
                                      "\"selector\":{\"app\":\"web\",\"tier\":\"front\"}}}");
    const kube_workload *rs = must_decode(
        KUBE_WORKLOAD_RS,
        "{\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\"},\"spec\":{\"selector\":{"
        "\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"tier\","
        "\"operator\":\"In\",\"values\":[\"front\",\"back\"]}]}}}");
    const kube_workload *ss =
        must_decode(KUBE_WORKLOAD_SS, "{\"metadata\":{\"name\":\"ss\"},\"spec\":{}}");
    (void)state;
    assert_true(rc->has_map);
    assert_int_equal(rc->n_map, 2);
    assert_true(kube_workload_map_matches(rc, web_labels, 2));
    assert_non_null(rs->selector);
    assert_int_equal(rs->selector->n_reqs, 2);
    assert_string_equal(rs->selector->reqs[1].key, "tier");
    assert_int_equal(rs->selector->reqs[1].n_values, 2);
    assert_true(kube_label_selector_matches(rs->selector, web_labels, 2));
    assert_int_equal(ss->kind, KUBE_WORKLOAD_SS);
    assert_null(ss->selector);
    release(rc);
    release(rs);
    release(ss);
}

static void malformed(void **state)
{
    kube_object *obj = (kube_object *)1;
    (void)state;
    assert_int_equal(decode(KUBE_WORKLOAD_SERVICE,
                            "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"selector\":\"app=web\"}}",
                            &obj),
                     KUBE_EPARSE);
    assert_null(obj);
    assert_int_equal(decode(KUBE_WORKLOAD_RS,
                            "{\"metadata\":{\"name\":\"r\"},\"spec\":{\"selector\":{"
                            "\"matchLabels\":[\"app\"]}}}",
                            &obj),
                     KUBE_EPARSE);
    assert_int_equal(decode(KUBE_WORKLOAD_RC, "{\"metadata\":{\"name\":\"r\"},\"spec\":[]}", &obj),
                     KUBE_EPARSE);
    assert_int_equal(decode(KUBE_WORKLOAD_SS,
                            "{\"kind\":\"ReplicaSet\",\"metadata\":{"
                            "\"name\":\"r\"}}",
                            &obj),
                     KUBE_EPARSE);
    assert_int_equal(decode(KUBE_WORKLOAD_SS, "{\"spec\":{}}", &obj), KUBE_EPARSE);
    assert_null(kube_workload_from(NULL));
}

/* Adds the decoded object to s. */
static void add(kube_store *s, kube_workload_kind k, const char *json)
{
    const kube_workload *w = must_decode(k, json);
    assert_int_equal(kube_store_apply(s, KUBE_WATCH_ADDED, (kube_object *)&w->base, NULL), KUBE_OK);
    release(w);
}

static void count_one(void *ud, const kube_workload *w)
{
    (void)w;
    (*(int *)ud)++;
}

static void listers_over_stores(void **state)
{
    kube_store *svc = NULL, *rs = NULL;
    kube_workload_listers l = {0};
    kube_object *obj;
    int n = 0;

    (void)state;
    assert_int_equal(kube_store_new(&svc), KUBE_OK);
    assert_int_equal(kube_store_new(&rs), KUBE_OK);
    add(svc, KUBE_WORKLOAD_SERVICE, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"}}");
    add(svc, KUBE_WORKLOAD_SERVICE, "{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\"}}");
    add(svc, KUBE_WORKLOAD_SERVICE, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"other\"}}");
    add(rs, KUBE_WORKLOAD_RS, "{\"metadata\":{\"name\":\"r\",\"namespace\":\"ns\"}}");
    kube_workload_foreach_ns(&l, KUBE_WORKLOAD_SERVICE, "ns", count_one, &n);
    assert_int_equal(n, 0); /* no store: an empty lister */
    assert_null(kube_workload_get(&l, KUBE_WORKLOAD_RS, "ns", "r"));
    l.store[KUBE_WORKLOAD_SERVICE] = svc;
    l.store[KUBE_WORKLOAD_RS] = rs;
    kube_workload_foreach_ns(&l, KUBE_WORKLOAD_SERVICE, "ns", count_one, &n);
    assert_int_equal(n, 2);
    obj = kube_workload_get(&l, KUBE_WORKLOAD_RS, "ns", "r");
    assert_non_null(obj);
    assert_int_equal(kube_workload_from(obj)->kind, KUBE_WORKLOAD_RS);
    kube_object_unref(obj);
    assert_null(kube_workload_get(&l, KUBE_WORKLOAD_RS, "other", "r"));
    assert_null(kube_workload_get(&l, KUBE_WORKLOAD_SS, "ns", "r"));
    kube_store_free(svc);
    kube_store_free(rs);
}

static void resources(void **state)
{
    (void)state;
    assert_string_equal(KUBE_RES_SERVICES.plural, "services");
    assert_string_equal(KUBE_RES_REPLICATIONCONTROLLERS.group, "");
    assert_string_equal(KUBE_RES_REPLICASETS.group, "apps");
    assert_string_equal(KUBE_RES_STATEFULSETS.kind, "StatefulSet");
    assert_true(KUBE_RES_STATEFULSETS.namespaced);
}

int test_group_workload(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(service_map_selector), cmocka_unit_test(service_nil_and_empty_selector),
        cmocka_unit_test(controllers),          cmocka_unit_test(malformed),
        cmocka_unit_test(listers_over_stores),  cmocka_unit_test(resources),
    };
    return cmocka_run_group_tests_name("workload", tests, NULL, NULL);
}
