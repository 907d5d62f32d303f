/*
 * tests/unit/test_factory.c - the shared informer factory
 * (kube/machinery/factory.h) on fake listers: one informer per resource,
 * handlers fanned out in order, handlers only before start, the change
 * generation and a wait woken by a change on another thread; indexes
 * (AddIndexers/ByIndex) added at any time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/codec/jsonstream.h"
#include "kube/machinery/factory_testing.h"
#include "kube/types/node.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

static const kube_informer_options nodes_opts = {.resource = &KUBE_RES_NODES,
                                                 .codec = &kube_node_codec};

static kube_object *node(const char *name)
{
    char json[256];
    cJSON *j;
    kube_object *obj = NULL;

    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\"}}", name, name);
    j = cJSON_Parse(json);
    assert_int_equal(kube_node_codec.decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return obj;
}

static void one_informer_per_resource(void **state)
{
    kube_factory *f;
    kube_lister *a, *b, *c;
    kube_informer_options sel = nodes_opts;

    assert_int_equal(kube_factory_new(NULL, &f), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &nodes_opts, &a), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &nodes_opts, &b), KUBE_OK);
    assert_ptr_equal(a, b);
    sel.label_selector = "role=x"; /* another informer of the same resource */
    assert_int_equal(kube_factory_lister(f, &sel, &c), KUBE_EINVAL);
    assert_null(c);
    kube_factory_free(f);
}

typedef struct order {
    char seen[8];
    int n;
} order;

static void first_add(void *ud, kube_object *obj)
{
    order *o = ud;
    o->seen[o->n++] = '1';
}

static void second_add(void *ud, kube_object *obj)
{
    order *o = ud;
    o->seen[o->n++] = '2';
}

static void second_delete(void *ud, kube_object *obj)
{
    order *o = ud;
    o->seen[o->n++] = 'd';
}

static void handlers_in_order_before_start(void **state)
{
    kube_factory *f;
    kube_lister *l;
    order o = {"", 0};
    kube_informer_handlers h1 = {first_add, NULL, NULL, &o};
    kube_informer_handlers h2 = {second_add, NULL, second_delete, &o};
    kube_object *n = node("n1"), *got;
    uint64_t gen;

    assert_int_equal(kube_factory_new(NULL, &f), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &nodes_opts, &l), KUBE_OK);
    assert_int_equal(kube_lister_add_handlers(l, &h1), KUBE_OK);
    assert_int_equal(kube_lister_add_handlers(l, &h2), KUBE_OK);
    gen = kube_lister_generation(l);
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_ADDED, n), KUBE_OK);
    assert_string_equal(o.seen, "12");
    assert_int_equal(kube_lister_generation(l), gen + 1);
    got = kube_lister_get(l, "", "n1");
    assert_ptr_equal(got, n);
    kube_object_unref(got);
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_DELETED, n), KUBE_OK);
    assert_string_equal(o.seen, "12d");
    assert_null(kube_lister_get(l, "", "n1"));
    assert_true(kube_lister_has_synced(l));
    assert_int_equal(kube_factory_start(f), KUBE_OK);
    assert_int_equal(kube_lister_add_handlers(l, &h1), KUBE_EINVAL);
    assert_null(kube_lister_get(NULL, "", "n1")); /* no lister: nothing */
    kube_object_unref(n);
    kube_factory_free(f);
}

static void *add_later(void *arg)
{
    kube_object *n = node("late");
    usleep(50 * 1000);
    assert_int_equal(kube_lister_apply(arg, KUBE_WATCH_ADDED, n), KUBE_OK);
    kube_object_unref(n);
    return NULL;
}

static void wait_wakes_on_change(void **state)
{
    kube_factory *f;
    kube_lister *ls[2] = {NULL, NULL};
    uint64_t gen;
    pthread_t t;
    int64_t start;

    assert_int_equal(kube_factory_new(NULL, &f), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &nodes_opts, &ls[1]), KUBE_OK);
    gen = kube_listers_generation(ls, 2);
    assert_false(kube_listers_wait(ls, 2, &gen, 0));
    assert_false(kube_listers_wait(ls, 2, &gen, 20)); /* times out */
    assert_int_equal(pthread_create(&t, NULL, add_later, ls[1]), 0);
    start = kube_now_ms();
    assert_true(kube_listers_wait(ls, 2, &gen, 10000));
    assert_true(kube_now_ms() - start < 10000);
    assert_int_equal(gen, kube_lister_generation(ls[1]));
    pthread_join(t, NULL);
    kube_factory_free(f);
}

/* Index "pool": a node name's part before its first '-'. */
static int pool_index(const kube_object *obj, kube_index_keys *keys)
{
    char pool[64];
    size_t n = strcspn(obj->meta.name, "-");

    if (!obj->meta.name[n])
        return KUBE_OK; /* no pool */
    snprintf(pool, sizeof(pool), "%.*s", (int)n, obj->meta.name);
    return kube_index_keys_add(keys, pool);
}

static void count_obj(void *ud, kube_object *obj)
{
    (void)obj;
    (*(int *)ud)++;
}

/* Unlike handlers, an index may be added after start: it is built from the
 * store and kept from then on. */
static void index_added_any_time(void **state)
{
    kube_factory *f;
    kube_lister *l;
    kube_object *a = node("gpu-1"), *b = node("gpu-2"), *c = node("cpu-1"), *d = node("solo");
    int n = 0;
    (void)state;

    assert_int_equal(kube_factory_new(NULL, &f), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &nodes_opts, &l), KUBE_OK);
    assert_int_equal(kube_factory_start(f), KUBE_OK);
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_ADDED, a), KUBE_OK);
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_ADDED, c), KUBE_OK);
    assert_int_equal(kube_lister_by_index(l, "pool", "gpu", count_obj, &n), KUBE_EINVAL);
    assert_int_equal(kube_lister_add_index(l, "pool", pool_index), KUBE_OK);
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_ADDED, b), KUBE_OK);
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_ADDED, d), KUBE_OK);
    assert_int_equal(kube_lister_by_index(l, "pool", "gpu", count_obj, &n), KUBE_OK);
    assert_int_equal(n, 2);
    n = 0;
    assert_int_equal(kube_lister_by_index(l, "pool", "cpu", count_obj, &n), KUBE_OK);
    assert_int_equal(n, 1);
    assert_int_equal(kube_lister_apply(l, KUBE_WATCH_DELETED, a), KUBE_OK);
    n = 0;
    assert_int_equal(kube_lister_by_index(l, "pool", "gpu", count_obj, &n), KUBE_OK);
    assert_int_equal(n, 1);
    n = 0; /* no lister: nothing listed, nothing found */
    assert_int_equal(kube_lister_by_index(NULL, "pool", "gpu", count_obj, &n), KUBE_OK);
    assert_int_equal(n, 0);
    assert_int_equal(kube_lister_add_index(NULL, "pool", pool_index), KUBE_EINVAL);
    kube_object_unref(a);
    kube_object_unref(b);
    kube_object_unref(c);
    kube_object_unref(d);
    kube_factory_free(f);
}

int test_group_factory(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_informer_per_resource),
        cmocka_unit_test(handlers_in_order_before_start),
        cmocka_unit_test(wait_wakes_on_change),
        cmocka_unit_test(index_added_any_time),
    };
    return cmocka_run_group_tests_name("factory", tests, NULL, NULL);
}
