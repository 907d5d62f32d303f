/*
 * tests/unit/test_plugin_topology_util.h - fixtures the InterPodAffinity
 * and PodTopologySpread test groups share: nodes and pods described by
 * compact definitions (labels as "k=v,k2="), decoded through kube's
 * decoders into node infos, pod infos and a snapshot, the one-letter
 * status codes their Filter tables are written in, and the args check.
 *
 * Memory: tt_make_pod/tt_incoming return one pod info reference
 * (fw_pod_info_unref), tt_make_node a node info (fw_node_info_free),
 * tt_make_snapshot a snapshot (fw_snapshot_free), tt_decode one object
 * reference (kube_object_unref). Failures abort the test (cmocka).
 */
#ifndef TEST_PLUGIN_TOPOLOGY_UTIL_H
#define TEST_PLUGIN_TOPOLOGY_UTIL_H

#include <stddef.h>

#include "framework/framework.h"
#include "kube/codec/object.h"

typedef struct tt_node_def {
    const char *name;
    const char *labels; /* "k=v,k2=" */
    const char *spec;   /* members of spec, or NULL */
} tt_node_def;

typedef struct tt_pod_def {
    const char *name; /* "ns/name" or "name" (namespace default) */
    const char *node;
    const char *labels;
    const char *spec; /* members of spec, or NULL */
    int terminating;
} tt_pod_def;

/* "k=v,k2=" as a JSON object ({"k":"v","k2":""}) into out (size n). */
void tt_labels_json(const char *spec, char *out, size_t n);
/* json (double-quoted) decoded by codec. */
kube_object *tt_decode(const kube_codec *codec, const char *json);
/* The pod of d (uid "uid-<ns>-<name>", one container "c"). */
fw_pod_info *tt_make_pod(const tt_pod_def *d);
/* The pod being scheduled: "p" in namespace default, on no node. */
fw_pod_info *tt_incoming(const char *labels, const char *spec);
/* The node of d. */
fw_node_info *tt_make_node(const tt_node_def *d);
/* A snapshot of the nn nodes with each of the np pods on its node. */
fw_snapshot *tt_make_snapshot(const tt_node_def *nodes, size_t nn, const tt_pod_def *pods,
                              size_t np);
/* Runs desc's default_args on json (double-quoted, NULL for none) and
 * asserts KUBE_ECONFIG with the message want_err, or (want_err NULL)
 * KUBE_OK with the defaulted args printed compactly as want_out. */
void tt_check_args(const fw_plugin_desc *desc, const char *json, const char *want_err,
                   const char *want_out);

/* S success, U unschedulable, R unschedulable and unresolvable, K skip,
 * E anything else. */
char tt_code_char(const fw_status *st);

#endif
