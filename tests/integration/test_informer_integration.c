/*
 * tests/integration/test_informer_integration.c - informers against the API
 * emulator: each must converge to the server's state (its store equals a
 * fresh consistent list) through emulator restarts (history lost, 410,
 * re-list), dropped watches, a 429/500 storm and writes made meanwhile,
 * while its handlers see a consistent sequence per uid: no update or delete
 * before the add, nothing after the delete, updates within one uid. Several
 * informers share one hub, and its one HTTP/2 connection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"
#include "kube/machinery/informer.h"
#include "kube/machinery/informer_testing.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"

#define CONVERGE_MS 30000

/* ---- a per-uid consistency checker (the handlers) ------------------------ */

enum { UID_ALIVE = 1, UID_DELETED = 2 };

typedef struct uid_entry {
    char *uid;
    char *key; /* ns/name */
    int state;
} uid_entry;

typedef struct checker {
    pthread_mutex_t mu;
    uid_entry *e;
    size_t n, cap;
    unsigned long adds, updates, deletes, violations;
    char first_violation[256];
} checker;

static void violation(checker *c, const char *what, const kube_object *o)
{
    if (c->violations++ == 0)
        snprintf(c->first_violation, sizeof(c->first_violation), "%s: %s/%s uid %s", what,
                 o->meta.namespace_, o->meta.name, o->meta.uid);
}

static uid_entry *find_uid(checker *c, const char *uid)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->e[i].uid, uid) == 0)
            return &c->e[i];
    return NULL;
}

static uid_entry *alive_key(checker *c, const kube_object *o)
{
    char key[512];

    snprintf(key, sizeof(key), "%s/%s", o->meta.namespace_, o->meta.name);
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].state == UID_ALIVE && strcmp(c->e[i].key, key) == 0)
            return &c->e[i];
    return NULL;
}

static void on_add(void *ud, kube_object *o)
{
    checker *c = ud;
    char key[512];

    pthread_mutex_lock(&c->mu);
    c->adds++;
    if (find_uid(c, o->meta.uid))
        violation(c, "add of a known uid", o);
    else if (alive_key(c, o))
        violation(c, "add over a live object", o);
    else {
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 64;
            c->e = realloc(c->e, c->cap * sizeof(*c->e));
        }
        snprintf(key, sizeof(key), "%s/%s", o->meta.namespace_, o->meta.name);
        c->e[c->n++] = (uid_entry){kube_strdup(o->meta.uid), kube_strdup(key), UID_ALIVE};
    }
    pthread_mutex_unlock(&c->mu);
}

static void on_update(void *ud, kube_object *old, kube_object *o)
{
    checker *c = ud;
    uid_entry *e;

    pthread_mutex_lock(&c->mu);
    c->updates++;
    e = find_uid(c, o->meta.uid);
    if (strcmp(old->meta.uid, o->meta.uid) != 0)
        violation(c, "update across uids", o);
    else if (!e)
        violation(c, "update before add", o);
    else if (e->state != UID_ALIVE)
        violation(c, "update after delete", o);
    pthread_mutex_unlock(&c->mu);
}

static void on_delete(void *ud, kube_object *o)
{
    checker *c = ud;
    uid_entry *e;

    pthread_mutex_lock(&c->mu);
    c->deletes++;
    e = find_uid(c, o->meta.uid);
    if (!e)
        violation(c, "delete before add", o);
    else if (e->state != UID_ALIVE)
        violation(c, "delete after delete", o);
    else
        e->state = UID_DELETED;
    pthread_mutex_unlock(&c->mu);
}

static void checker_free(checker *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].uid);
        free(c->e[i].key);
    }
    free(c->e);
    pthread_mutex_destroy(&c->mu);
}

static size_t checker_alive(checker *c)
{
    size_t n = 0;

    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++)
        n += c->e[i].state == UID_ALIVE;
    pthread_mutex_unlock(&c->mu);
    return n;
}

static void assert_consistent(checker *c, kube_informer *inf)
{
    if (c->violations)
        fail_msg("%lu handler violations, first: %s", c->violations, c->first_violation);
    /* what the handlers believe is alive is what the store holds */
    assert_int_equal(checker_alive(c), kube_informer_count(inf));
}

/* ---- fixture: emulator, client ------------------------------------------ */

typedef struct env {
    harness *h;
    kube_config *cfg;
    kube_client *client;
} env;

static void env_start(env *e, int nodes, int pods)
{
    harness_opts o = HARNESS_OPTS_INIT;
    char err[256];
    kube_client_options co;

    memset(e, 0, sizeof(*e));
    o.nodes = nodes;
    o.pods = pods;
    o.bookmark_interval_ms = 300;
    assert_int_equal(harness_start(&o, &e->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(e->h), &e->cfg, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&co);
    co.qps = 0;
    co.max_retries = 10;
    assert_int_equal(kube_client_new(e->cfg, &co, &e->client), KUBE_OK);
}

static void env_stop(env *e)
{
    kube_client_free(e->client);
    kube_config_free(e->cfg);
    harness_stop(e->h);
}

static kube_informer_options informer_opts(const kube_resource *r, const kube_codec *codec)
{
    kube_informer_options o = {0};

    o.resource = r;
    o.codec = codec;
    o.watch_timeout_s = 3; /* watches end normally every 3..6 s */
    o.backoff_initial_ms = 50;
    o.backoff_max_ms = 400;
    return o;
}

/* ---- convergence: the store equals a fresh list ------------------------- */

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the lines of raw (consumed) into out. */
static void sort_lines(kube_buf *raw, kube_buf *out)
{
    size_t n = 0, i = 0;
    char **lines, *save = NULL;

    for (size_t k = 0; k < raw->len; k++)
        n += raw->data[k] == '\n';
    lines = calloc(n + 1, sizeof(*lines));
    assert_non_null(lines);
    for (char *p = strtok_r(raw->data, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
        lines[i++] = p;
    qsort(lines, i, sizeof(*lines), cmp_lines);
    kube_buf_reset(out);
    kube_buf_puts(out, "");
    for (size_t k = 0; k < i; k++)
        kube_buf_printf(out, "%s\n", lines[k]);
    free(lines);
}

static void store_line(void *ud, kube_object *o)
{
    kube_buf_printf(ud, "%s/%s %s %s\n", o->meta.namespace_, o->meta.name, o->meta.uid,
                    o->meta.resource_version);
}

static void store_snapshot(kube_informer *inf, kube_buf *out)
{
    kube_buf raw = KUBE_BUF_INIT;

    kube_buf_puts(&raw, "");
    kube_informer_foreach(inf, store_line, &raw);
    sort_lines(&raw, out);
    kube_buf_free(&raw);
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A consistent (resourceVersion="") list through the client, same filters. */
static int server_snapshot(env *e, const kube_informer_options *o, kube_buf *out)
{
    kube_buf path = KUBE_BUF_INIT, raw = KUBE_BUF_INIT;
    kube_response resp = {0};
    const char *sep = "?";
    cJSON *doc, *item;
    int rc;

    kube_path(&path, o->resource, o->namespace_, NULL, NULL);
    if (o->field_selector) {
        kube_buf_puts(&path, "?fieldSelector=");
        kube_buf_put_escaped(&path, o->field_selector);
        sep = "&";
    }
    if (o->label_selector) {
        kube_buf_printf(&path, "%slabelSelector=", sep);
        kube_buf_put_escaped(&path, o->label_selector);
    }
    rc = kube_client_do(e->client, "GET", path.data, NULL, NULL, 0, &resp);
    kube_buf_free(&path);
    if (rc != KUBE_OK) {
        kube_response_clear(&resp);
        return rc;
    }
    doc = cJSON_ParseWithLength(resp.body, resp.len);
    kube_buf_puts(&raw, "");
    cJSON_ArrayForEach(item, cJSON_GetObjectItem(doc, "items"))
    {
        const cJSON *md = cJSON_GetObjectItem(item, "metadata");
        kube_buf_printf(&raw, "%s/%s %s %s\n", jstr(md, "namespace"), jstr(md, "name"),
                        jstr(md, "uid"), jstr(md, "resourceVersion"));
    }
    sort_lines(&raw, out);
    cJSON_Delete(doc);
    kube_buf_free(&raw);
    kube_response_clear(&resp);
    return KUBE_OK;
}

/* 1 if the informer's store equals a fresh list now; both snapshots are
 * left in want and got. */
static int store_matches(env *e, kube_informer *inf, const kube_informer_options *o, kube_buf *want,
                         kube_buf *got)
{
    assert_int_equal(server_snapshot(e, o, want), KUBE_OK);
    store_snapshot(inf, got);
    return strcmp(want->data, got->data) == 0;
}

/* Waits until the informer's store equals a fresh list. */
static void assert_converges(env *e, kube_informer *inf, const kube_informer_options *o)
{
    kube_buf want = KUBE_BUF_INIT, got = KUBE_BUF_INIT;

    WAIT_TRUE_MS_MSG(store_matches(e, inf, o, &want, &got), CONVERGE_MS,
                     "informer did not converge:\nserver:\n%.2000s\nstore:\n%.2000s", want.data,
                     got.data);
    kube_buf_free(&want);
    kube_buf_free(&got);
}

/* ---- writes --------------------------------------------------------------- */

static void create_pod(env *e, const char *name, const char *app)
{
    char body[512];

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":"
             "[{\"name\":\"c\",\"image\":\"busybox\"}],\"schedulerName\":\"stickyvm\"}}",
             name, app);
    assert_int_equal(harness_create(e->h, "/api/v1/namespaces/default/pods", body, NULL), KUBE_OK);
}

static void label_pod(env *e, const char *name, const char *value)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(patch, "metadata");
    cJSON *labels = cJSON_AddObjectToObject(md, "labels");

    cJSON_AddStringToObject(labels, "touched", value);
    assert_int_equal(
        kube_api_merge_patch(e->client, &KUBE_RES_PODS, "default", name, patch, NULL, NULL),
        KUBE_OK);
    cJSON_Delete(patch);
}

static void delete_pod(env *e, const char *name)
{
    int rc = kube_api_delete(e->client, &KUBE_RES_PODS, "default", name, NULL);
    assert_true(rc == KUBE_OK || rc == KUBE_ENOTFOUND);
}

/* A round of writes: new pods, and, on the pods of the previous round, a
 * changed pod, a deleted pod, and a pod deleted and recreated under the
 * same name (new uid). *round counts the rounds. */
static void churn(env *e, int *round)
{
    char name[64], value[32];
    int r = (*round)++;

    snprintf(value, sizeof(value), "r%d", r);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "churn-%d-%d", r, i);
        create_pod(e, name, i % 2 ? "odd" : "even");
    }
    if (r > 0) {
        snprintf(name, sizeof(name), "churn-%d-0", r - 1);
        label_pod(e, name, value);
        snprintf(name, sizeof(name), "churn-%d-1", r - 1);
        delete_pod(e, name);
        snprintf(name, sizeof(name), "churn-%d-2", r - 1);
        delete_pod(e, name);
        create_pod(e, name, "recreated");
    }
}

/* ---- the tests -------------------------------------------------------------- */

typedef struct one {
    env e;
    checker c;
    kube_hub *hub;
    kube_informer *inf;
    kube_informer_options o;
} one;

static void one_start(one *t, int pods)
{
    kube_informer_handlers h = {on_add, on_update, on_delete, &t->c};

    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->c.mu, NULL);
    env_start(&t->e, 3, pods);
    t->o = informer_opts(&KUBE_RES_PODS, &kube_pod_codec);
    assert_int_equal(kube_hub_new(t->e.client, &t->hub), KUBE_OK);
    assert_int_equal(kube_hub_add_informer(t->hub, &t->o, &h, &t->inf), KUBE_OK);
    assert_int_equal(kube_hub_start(t->hub), KUBE_OK);
    assert_int_equal(kube_hub_wait_synced(t->hub, CONVERGE_MS), KUBE_OK);
    assert_int_equal(kube_informer_count(t->inf), (size_t)pods);
}

static void one_stop(one *t)
{
    kube_hub_free(t->hub);
    checker_free(&t->c);
    env_stop(&t->e);
}

/* Keeps the informer away (every watch fails), writes, restarts the
 * emulator (history lost), writes again, lets it back: its version is now
 * too old, so it must re-list and deliver the difference. */
static void restart_behind_its_back(env *e, int *n)
{
    static const char *const watch[] = {"watch", NULL};
    harness_faults f = {0};

    f.error_rate = 1.0;
    f.error_code = 503;
    f.verbs = watch;
    assert_int_equal(harness_set_faults(e->h, &f), KUBE_OK);
    assert_int_equal(harness_drop_watches(e->h), KUBE_OK);
    churn(e, n);
    assert_int_equal(harness_restart(e->h), KUBE_OK);
    churn(e, n);
    assert_int_equal(harness_clear_faults(e->h), KUBE_OK);
}

static void converges_through_restarts(void **state)
{
    one t;
    kube_informer_stats st;
    (void)state;

    one_start(&t, 20);
    for (int round = 0, n = 0; round < 4; round++) {
        churn(&t.e, &n);
        if (round % 2) {
            restart_behind_its_back(&t.e, &n);
        } else {
            assert_int_equal(harness_restart(t.e.h), KUBE_OK);
            churn(&t.e, &n); /* while the informer reconnects */
        }
        assert_converges(&t.e, t.inf, &t.o);
    }
    kube_informer_stats_get(t.inf, &st);
    assert_true(st.relists_410 >= 2);
    assert_true(st.lists >= 3);
    assert_consistent(&t.c, t.inf);
    one_stop(&t);
}

static void converges_through_dropped_watches(void **state)
{
    one t;
    kube_informer_stats st;
    (void)state;

    one_start(&t, 10);
    for (int round = 0, n = 0; round < 4; round++) {
        churn(&t.e, &n);
        assert_int_equal(harness_drop_watches(t.e.h), KUBE_OK);
        churn(&t.e, &n);
        assert_converges(&t.e, t.inf, &t.o);
    }
    kube_informer_stats_get(t.inf, &st);
    /* the history was kept: every reconnect resumed, none re-listed */
    assert_int_equal(st.lists, 1);
    assert_int_equal(st.relists_410, 0);
    assert_true(st.watches >= 5);
    assert_consistent(&t.c, t.inf);
    one_stop(&t);
}

static void converges_through_error_storm(void **state)
{
    static const char *const verbs[] = {"list", "watch", NULL};
    harness_faults f = {0};
    one t;
    kube_informer_stats st;
    (void)state;

    one_start(&t, 10);
    f.error_rate = 0.6;
    f.verbs = verbs;
    for (int round = 0, n = 0; round < 4; round++) {
        f.error_code = round % 2 ? 500 : 429;
        assert_int_equal(harness_set_faults(t.e.h, &f), KUBE_OK);
        churn(&t.e, &n);
        assert_int_equal(harness_drop_watches(t.e.h), KUBE_OK);
        churn(&t.e, &n);
        if (round == 2) {
            restart_behind_its_back(&t.e, &n);
            assert_int_equal(harness_set_faults(t.e.h, &f), KUBE_OK);
        }
        usleep(300000); /* let the informer fight through the errors */
        assert_int_equal(harness_clear_faults(t.e.h), KUBE_OK);
        assert_converges(&t.e, t.inf, &t.o);
    }
    kube_informer_stats_get(t.inf, &st);
    assert_true(st.relists_410 >= 1);
    assert_consistent(&t.c, t.inf);
    one_stop(&t);
}

typedef struct many {
    kube_informer_options o;
    checker c;
    kube_informer *inf;
} many;

static void many_informers_share_one_hub(void **state)
{
    env e;
    kube_hub *hub;
    many m[8];
    kube_informer_handlers h;
    (void)state;

    env_start(&e, 6, 12);
    assert_int_equal(harness_reset_counters(e.h), KUBE_OK);
    assert_int_equal(kube_hub_new(e.client, &hub), KUBE_OK);
    for (int i = 0; i < 8; i++) {
        memset(&m[i], 0, sizeof(m[i]));
        pthread_mutex_init(&m[i].c.mu, NULL);
        m[i].o = i % 4 == 3 ? informer_opts(&KUBE_RES_NODES, &kube_node_codec)
                            : informer_opts(&KUBE_RES_PODS, &kube_pod_codec);
        if (i % 4 == 1)
            m[i].o.label_selector = "app=odd";
        if (i % 4 == 2)
            m[i].o.field_selector = "spec.nodeName=";
        if (i == 4)
            m[i].o.page_size = 3; /* paginated lists */
        if (i == 5)
            m[i].o.namespace_ = "default";
        h = (kube_informer_handlers){on_add, on_update, on_delete, &m[i].c};
        assert_int_equal(kube_hub_add_informer(hub, &m[i].o, &h, &m[i].inf), KUBE_OK);
        if (i == 3)
            assert_int_equal(kube_hub_start(hub), KUBE_OK); /* the rest join a running hub */
    }
    assert_int_equal(kube_hub_wait_synced(hub, CONVERGE_MS), KUBE_OK);
    /* eight lists and watches, started at once, on one connection */
    assert_int_equal(harness_counter(e.h, "connections", "h2"), 1);
    for (int round = 0, n = 0; round < 3; round++) {
        churn(&e, &n);
        if (round == 1)
            assert_int_equal(harness_restart(e.h), KUBE_OK);
        for (int i = 0; i < 8; i++)
            assert_converges(&e, m[i].inf, &m[i].o);
    }
    for (int i = 0; i < 8; i++)
        assert_consistent(&m[i].c, m[i].inf);
    kube_hub_free(hub);
    for (int i = 0; i < 8; i++)
        checker_free(&m[i].c);
    env_stop(&e);
}

int test_group_informer_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(converges_through_restarts),
        cmocka_unit_test(converges_through_dropped_watches),
        cmocka_unit_test(converges_through_error_storm),
        cmocka_unit_test(many_informers_share_one_hub),
    };
    return cmocka_run_group_tests_name("informer_integration", tests, NULL, NULL);
}
