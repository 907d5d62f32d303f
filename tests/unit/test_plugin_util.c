/*
 * tests/unit/test_plugin_util.c - helpers shared by the plugin test groups
 * (see test_plugin_util.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "plugins/registry.h"
#include "unit/test_plugin_util.h"

#define TP_JSON_SLOTS 8
#define TP_JSON_MAX 8192

const char *tp_json(const char *s)
{
    static __thread char bufs[TP_JSON_SLOTS][TP_JSON_MAX];
    static __thread int slot;
    char *b = bufs[slot++ % TP_JSON_SLOTS];
    size_t i = 0;

    assert_true(strlen(s) < TP_JSON_MAX);
    for (; s[i]; i++)
        b[i] = s[i] == '\'' ? '"' : s[i];
    b[i] = '\0';
    return b;
}

static kube_object *decode(const kube_codec *codec, cJSON *j)
{
    kube_object *obj = NULL;
    assert_int_equal(codec->decode(j, &obj), KUBE_OK);
    return obj;
}

static cJSON *parse(const char *single_quoted)
{
    cJSON *j = cJSON_Parse(tp_json(single_quoted));
    if (!j)
        fail_msg("bad test JSON: %s", single_quoted);
    return j;
}

fw_pod_info *tp_pod(const char *json)
{
    cJSON *j = parse(json), *meta = cJSON_GetObjectItem(j, "metadata");
    char uid[300];
    fw_pod_info *pi = NULL;

    assert_non_null(meta);
    if (!cJSON_GetObjectItem(meta, "namespace"))
        cJSON_AddStringToObject(meta, "namespace", "default");
    if (!cJSON_GetObjectItem(meta, "uid")) {
        snprintf(uid, sizeof(uid), "uid-%s", cJSON_GetObjectItem(meta, "name")->valuestring);
        cJSON_AddStringToObject(meta, "uid", uid);
    }
    kube_object *obj = decode(&kube_pod_codec, j);
    cJSON_Delete(j);
    assert_int_equal(fw_pod_info_new((struct kube_pod *)obj, &pi), KUBE_OK);
    kube_object_unref(obj);
    return pi;
}

fw_pod_info *tp_podf(const char *fmt, ...)
{
    char buf[TP_JSON_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return tp_pod(buf);
}

fw_pod_info *tp_pod_requests(const char *name, const char *requests, const char *extra_spec)
{
    cJSON *reqs = parse(requests), *it;
    kube_buf b = KUBE_BUF_INIT;
    int i = 0;

    kube_buf_printf(&b, "{'metadata':{'name':'%s'},'spec':{'containers':[", name);
    cJSON_ArrayForEach(it, reqs)
    {
        char *r = cJSON_PrintUnformatted(it);
        kube_buf_printf(&b, "%s{'name':'c%d','resources':{'requests':%s}}", i ? "," : "", i, r);
        free(r);
        i++;
    }
    kube_buf_printf(&b, "]%s}}", extra_spec ? extra_spec : "");
    cJSON_Delete(reqs);
    fw_pod_info *pi = tp_pod(b.data);
    kube_buf_free(&b);
    return pi;
}

kube_object *tp_object(const kube_codec *codec, const char *json)
{
    cJSON *j = parse(json);
    kube_object *obj = decode(codec, j);

    cJSON_Delete(j);
    return obj;
}

fw_node_info *tp_node(const char *json, fw_pod_info *const *pods, size_t n)
{
    cJSON *j = parse(json);
    kube_object *obj = decode(&kube_node_codec, j);
    fw_node_info *ni = fw_node_info_new();

    cJSON_Delete(j);
    assert_non_null(ni);
    assert_int_equal(fw_node_info_set_node(ni, (struct kube_node *)obj), KUBE_OK);
    kube_object_unref(obj);
    for (size_t i = 0; i < n; i++)
        tp_node_add(ni, pods[i]);
    return ni;
}

fw_node_info *tp_node_simple(const char *name, const char *allocatable, const char *labels,
                             const char *taints)
{
    char buf[TP_JSON_MAX];
    snprintf(buf, sizeof(buf),
             "{'metadata':{'name':'%s','labels':%s},'spec':{'taints':%s},"
             "'status':{'allocatable':%s}}",
             name, labels ? labels : "{}", taints ? taints : "[]",
             allocatable ? allocatable : "{}");
    return tp_node(buf, NULL, 0);
}

void tp_node_add(fw_node_info *ni, fw_pod_info *pi)
{
    assert_int_equal(fw_node_info_add_pod(ni, pi), KUBE_OK);
}

tp_plugin *tp_plugin_new(const fw_plugin_desc *desc, const char *args, fw_snapshot *snap)
{
    tp_plugin *p = calloc(1, sizeof(*p));
    cJSON *in = args ? parse(args) : NULL, *defaulted = NULL;
    char err[1024] = "";

    assert_non_null(p);
    p->desc = desc;
    p->handle.profile_name = "default-scheduler";
    p->handle.svc.snapshot = snap;
    if (desc->default_args) {
        int rc = desc->default_args(in, &defaulted, err, sizeof(err));
        if (rc != KUBE_OK)
            fail_msg("default_args: %s", err);
    }
    if (desc->create(defaulted ? defaulted : in, &p->handle, NULL, &p->self, err, sizeof(err)) !=
        KUBE_OK)
        fail_msg("create: %s", err);
    cJSON_Delete(in);
    cJSON_Delete(defaulted);
    return p;
}

void tp_plugin_free(tp_plugin *p)
{
    if (!p)
        return;
    if (p->desc->destroy)
        p->desc->destroy(p->self);
    free(p);
}

int tp_default_args(const fw_plugin_desc *desc, const char *args, char *err, size_t errlen)
{
    cJSON *in = args ? parse(args) : NULL, *out = NULL;
    int rc = desc->default_args(in, &out, err, errlen);

    if (rc == KUBE_OK)
        assert_non_null(out);
    else
        assert_null(out);
    cJSON_Delete(in);
    cJSON_Delete(out);
    return rc;
}

char *tp_defaulted(const fw_plugin_desc *desc, const char *args)
{
    cJSON *in = args ? parse(args) : NULL, *out = NULL;
    char err[1024];
    char *s = NULL;

    if (desc->default_args(in, &out, err, sizeof(err)) == KUBE_OK)
        s = cJSON_PrintUnformatted(out);
    cJSON_Delete(in);
    cJSON_Delete(out);
    return s;
}

void tp_assert_status(fw_status *st, fw_code code, const char *msg)
{
    char got[2048];

    fw_status_message(st, got, sizeof(got));
    if (fw_status_code(st) != code)
        fail_msg("status %s (\"%s\"), want %s", fw_code_string(fw_status_code(st)), got,
                 fw_code_string(code));
    if (msg)
        assert_string_equal(got, msg);
    fw_status_free(st);
}

const fw_cluster_event_with_hint *tp_assert_events(tp_plugin *p, const fw_cluster_event *want,
                                                   size_t n)
{
    const fw_cluster_event_with_hint *ev;

    assert_int_equal(p->desc->events_to_register(p->self, &ev), n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ev[i].event.resource, want[i].resource);
        assert_int_equal(ev[i].event.action, want[i].action);
    }
    return ev;
}

/* Asserts that p's score_nodes gives every node the score its score gave
 * (ns, before normalizing). */
static void assert_list_scores_match(tp_plugin *p, const fw_cycle_state *cs, const fw_pod_info *pod,
                                     fw_node_info *const *nodes, size_t n, const fw_node_score *ns)
{
    fw_node_score *list = calloc(n ? n : 1, sizeof(*list));

    assert_non_null(list);
    tp_assert_status(
        p->desc->score_nodes(p->self, cs, pod, (const fw_node_info *const *)nodes, n, list),
        FW_SUCCESS, NULL);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(list[i].score, ns[i].score);
    free(list);
}

fw_code tp_score(tp_plugin *p, const fw_pod_info *pod, fw_node_info *const *nodes, size_t n,
                 int normalize, int64_t *scores)
{
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_node_score *ns = calloc(n ? n : 1, sizeof(*ns));
    fw_code code = FW_SUCCESS;

    assert_non_null(cs);
    assert_non_null(ns);
    if (p->desc->pre_score) {
        fw_status *st = p->desc->pre_score(p->self, cs, pod, (const fw_node_info *const *)nodes, n);
        code = fw_status_code(st);
        if (code != FW_SUCCESS && code != FW_SKIP) {
            char msg[512];
            fw_status_message(st, msg, sizeof(msg));
            fail_msg("PreScore: %s", msg);
        }
        fw_status_free(st);
    }
    for (size_t i = 0; i < n; i++) {
        ns[i].name = nodes[i]->name;
        if (code == FW_SKIP)
            continue;
        fw_status *st = p->desc->score(p->self, cs, pod, nodes[i], &ns[i].score);
        tp_assert_status(st, FW_SUCCESS, NULL);
    }
    if (code != FW_SKIP && p->desc->score_nodes)
        assert_list_scores_match(p, cs, pod, nodes, n, ns);
    if (normalize && code != FW_SKIP && p->desc->normalize_score)
        tp_assert_status(p->desc->normalize_score(p->self, cs, pod, ns, n), FW_SUCCESS, NULL);
    for (size_t i = 0; i < n; i++)
        scores[i] = ns[i].score;
    free(ns);
    fw_cycle_state_free(cs);
    return code;
}

fw_status *tp_filter(tp_plugin *p, const fw_pod_info *pod, const fw_node_info *ni,
                     fw_pre_filter_result **result)
{
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_pre_filter_result *r = NULL;
    fw_status *st = NULL;

    assert_non_null(cs);
    if (p->desc->pre_filter) {
        st = p->desc->pre_filter(p->self, cs, pod, &r);
        if (fw_status_is_skip(st)) {
            fw_status_free(st);
            st = NULL;
            goto out;
        }
        if (!fw_status_is_success(st))
            goto out;
    }
    st = p->desc->filter(p->self, cs, pod, ni);
out:
    if (result)
        *result = r;
    else
        fw_pre_filter_result_free(r);
    fw_cycle_state_free(cs);
    return st;
}

/* Resolves a just-loaded *out (rc its load's result), freeing it on error. */
static int resolve_loaded(int rc, const fw_registry *reg, sched_config **out, char *err,
                          size_t errlen)
{
    if (rc == KUBE_OK)
        rc = fw_config_resolve(*out, reg ? reg : plugin_registry_in_tree(), err, errlen);
    if (rc != KUBE_OK) {
        sched_config_free(*out);
        *out = NULL;
    }
    return rc;
}

int tp_config_load(const char *yaml, const char *source, const fw_registry *reg, sched_config **out,
                   char *err, size_t errlen)
{
    int rc = yaml ? sched_config_load_string(yaml, strlen(yaml), source, out, err, errlen)
                  : sched_config_default(out, err, errlen);
    return resolve_loaded(rc, reg, out, err, errlen);
}

int tp_config_load_file(const char *path, const fw_registry *reg, sched_config **out, char *err,
                        size_t errlen)
{
    return resolve_loaded(sched_config_load_file(path, out, err, errlen), reg, out, err, errlen);
}
