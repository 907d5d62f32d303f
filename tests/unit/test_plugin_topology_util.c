/*
 * tests/unit/test_plugin_topology_util.c - fixtures shared by the
 * InterPodAffinity and PodTopologySpread test groups (see
 * test_plugin_topology_util.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "unit/test_plugin_topology_util.h"
#include "framework/types_testing.h"

void tt_labels_json(const char *spec, char *out, size_t n)
{
    size_t used = (size_t)snprintf(out, n, "{");
    char buf[512];

    snprintf(buf, sizeof(buf), "%s", spec ? spec : "");
    for (char *sp = NULL, *kv = strtok_r(buf, ",", &sp); kv; kv = strtok_r(NULL, ",", &sp)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        used += (size_t)snprintf(out + used, n - used, "%s\"%s\":\"%s\"", used > 1 ? "," : "", kv,
                                 eq ? eq + 1 : "");
    }
    snprintf(out + used, n - used, "}");
}

kube_object *tt_decode(const kube_codec *codec, const char *json)
{
    cJSON *j = cJSON_Parse(json);
    kube_object *obj = NULL;
    assert_non_null(j);
    assert_int_equal(codec->decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return obj;
}

fw_pod_info *tt_make_pod(const tt_pod_def *d)
{
    char json[4096], labels[512], ns[64] = "default";
    const char *slash = strchr(d->name, '/'), *name = slash ? slash + 1 : d->name;
    if (slash)
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - d->name), d->name);
    tt_labels_json(d->labels, labels, sizeof(labels));
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s-%s\","
             "\"labels\":%s%s},\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\"}]"
             "%s%s}}",
             name, ns, ns, name, labels,
             d->terminating ? ",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"" : "",
             d->node ? d->node : "", d->spec ? "," : "", d->spec ? d->spec : "");
    kube_object *obj = tt_decode(&kube_pod_codec, json);
    fw_pod_info *pi = NULL;
    assert_int_equal(fw_pod_info_new((struct kube_pod *)obj, &pi), KUBE_OK);
    kube_object_unref(obj);
    return pi;
}

fw_pod_info *tt_incoming(const char *labels, const char *spec)
{
    tt_pod_def d = {"p", NULL, labels, spec, 0};
    return tt_make_pod(&d);
}

fw_node_info *tt_make_node(const tt_node_def *d)
{
    char json[2048], labels[512];
    tt_labels_json(d->labels, labels, sizeof(labels));
    snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"labels\":%s},\"spec\":{%s}}",
             d->name, labels, d->spec ? d->spec : "");
    kube_object *obj = tt_decode(&kube_node_codec, json);
    fw_node_info *ni = fw_node_info_new();
    assert_non_null(ni);
    assert_int_equal(fw_node_info_set_node(ni, (struct kube_node *)obj), KUBE_OK);
    kube_object_unref(obj);
    return ni;
}

fw_snapshot *tt_make_snapshot(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods,
                              size_t np)
{
    fw_node_info **infos = calloc(nn, sizeof(*infos));
    fw_snapshot *s = NULL;

    for (size_t i = 0; i < nn; i++)
        infos[i] = tt_make_node(&nodes[i]);
    for (size_t j = 0; j < np; j++) {
        fw_pod_info *pi = tt_make_pod(&pods[j]);
        for (size_t i = 0; i < nn; i++)
            if (strcmp(nodes[i].name, pods[j].node) == 0)
                assert_int_equal(fw_node_info_add_pod(infos[i], pi), KUBE_OK);
        fw_pod_info_unref(pi);
    }
    assert_int_equal(fw_snapshot_from_nodes(infos, nn, &s), KUBE_OK);
    for (size_t i = 0; i < nn; i++)
        fw_node_info_free(infos[i]);
    free(infos);
    return s;
}

char tt_code_char(const fw_status *st)
{
    switch (fw_status_code(st)) {
    case FW_SUCCESS:
        return 'S';
    case FW_UNSCHEDULABLE:
        return 'U';
    case FW_UNSCHEDULABLE_AND_UNRESOLVABLE:
        return 'R';
    case FW_SKIP:
        return 'K';
    default:
        return 'E';
    }
}

void tt_check_args(const fw_plugin_desc *desc, const char *json, const char *want_err,
                   const char *want_out)
{
    cJSON *in = json ? cJSON_Parse(json) : NULL, *out = NULL;
    char err[1024] = "";
    int rc = desc->default_args(in, &out, err, sizeof(err));

    if (want_err) {
        assert_int_equal(rc, KUBE_ECONFIG);
        assert_string_equal(err, want_err);
        assert_null(out);
    } else {
        assert_int_equal(rc, KUBE_OK);
        char *s = cJSON_PrintUnformatted(out);
        assert_string_equal(s, want_out);
        free(s);
    }
    cJSON_Delete(out);
    cJSON_Delete(in);
}
