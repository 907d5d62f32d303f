/*
 * tests/unit/test_plugin_stickyvm.c - the StickyVM plugin without a
 * server: owner resolution, the pin annotation (missing, present, empty,
 * naming a node that is gone, custom key), Filter, PostBind bookkeeping,
 * queueing hints, args, the live-migration rule, a run through the
 * framework (Filter on one node only), and the example configuration.
 * VMIs and VMs come from an in-memory lookup (stickyvm_new_with_lookup).
 * The write paths against a server are in test_stickyvm_integration.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_testing.h"
#include "unit/test_plugin_util.h"
#include "plugins/registry.h"
#include "framework/framework.h"
#include "framework/framework_testing.h"
#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "metrics.h"
#include "plugins/plugins.h"
#include "plugins/stickyvm/stickyvm.h"
#include "scheduler/plugins/stickyvm/stickyvm_testing.h"
#include "pins/controller.h"
#include "kube/util/metrics_testing.h"
#include "framework/types_testing.h"

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

#define VMI_OWNER                                                                       \
    "[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"name\":" \
    "\"vm-a\",\"uid\":\"vmi-uid\",\"controller\":true,\"blockOwnerDeletion\":true}]"
#define VM_OWNER                                                                         \
    "[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"name\":\"vm-a\"," \
    "\"uid\":\"vm-uid\",\"controller\":true,\"blockOwnerDeletion\":true}]"
#define NO_LABELS "{}"

static kube_object *decode(const kube_codec *codec, const char *text)
{
    cJSON *j = cJSON_Parse(text);
    kube_object *o = NULL;
    assert_non_null(j);
    assert_int_equal(codec->decode(j, &o), KUBE_OK);
    cJSON_Delete(j);
    return o;
}

static fw_pod_info *pod_new(const char *owners, const char *labels)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
             "\"virt-launcher-vm-a-abcde\",\"namespace\":\"default\",\"uid\":\"pod-uid\","
             "\"labels\":%s,\"ownerReferences\":%s},\"spec\":{\"schedulerName\":\"stickyvm\","
             "\"containers\":[{\"name\":\"compute\",\"resources\":{\"requests\":{\"cpu\":"
             "\"100m\",\"memory\":\"300Mi\"}}}]}}",
             labels, owners);
    kube_object *o = decode(&kube_pod_codec, text);
    fw_pod_info *pi = NULL;
    assert_int_equal(fw_pod_info_new((kube_pod *)o, &pi), KUBE_OK);
    kube_object_unref(o);
    return pi;
}

static kube_object *vmi_new(const char *uid, const char *owners, const char *status)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
             "\"metadata\":{\"name\":\"vm-a\",\"namespace\":\"default\",\"uid\":\"%s\","
             "\"resourceVersion\":\"240\",\"ownerReferences\":%s},\"status\":%s}",
             uid, owners, status ? status : "{}");
    return decode(&kube_vmi_codec, text);
}

/* annotations: a JSON object text. */
static kube_object *vm_new(const char *annotations, const char *rv)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"vm-a\",\"namespace\":\"default\",\"uid\":\"vm-uid\","
             "\"resourceVersion\":\"%s\",\"annotations\":%s},\"spec\":{\"running\":true}}",
             rv, annotations);
    return decode(&kube_vm_codec, text);
}

static kube_object *node_new(const char *name)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},"
             "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"16Gi\",\"pods\":\"110\"}}}",
             name);
    return decode(&kube_node_codec, text);
}

/* ------------------------------------------------------------------ */
/* Fixture: an in-memory cache, three nodes, a plugin instance         */
/* ------------------------------------------------------------------ */

typedef struct fake_cache {
    kube_object *objs[8];
    size_t n;
    int gets; /* lookups made */
} fake_cache;

static kube_object *fake_get(void *ud, const kube_resource *r, const char *ns, const char *name)
{
    fake_cache *c = ud;
    const kube_codec *want = r == &KUBE_RES_VMIS ? &kube_vmi_codec : &kube_vm_codec;
    c->gets++;
    for (size_t i = 0; i < c->n; i++)
        if (c->objs[i]->codec == want && strcmp(c->objs[i]->meta.namespace_, ns) == 0 &&
            strcmp(c->objs[i]->meta.name, name) == 0)
            return kube_object_ref(c->objs[i]);
    return NULL;
}

/* Takes the caller's reference. */
static void cache_put(fake_cache *c, kube_object *o)
{
    assert_true(c->n < sizeof(c->objs) / sizeof(c->objs[0]));
    c->objs[c->n++] = o;
}

typedef struct fx {
    fake_cache cache;
    fw_snapshot *snap;
    fw_handle h;
    void *sv;
    fw_cycle_state *cs;
} fx;

static fw_snapshot *snapshot_of(const char *const *names, size_t n)
{
    fw_node_info *nis[8];
    fw_snapshot *snap = NULL;
    for (size_t i = 0; i < n; i++) {
        kube_object *node = node_new(names[i]);
        nis[i] = fw_node_info_new();
        assert_int_equal(fw_node_info_set_node(nis[i], (kube_node *)node), KUBE_OK);
        kube_object_unref(node);
    }
    assert_int_equal(fw_snapshot_from_nodes(nis, n, &snap), KUBE_OK);
    for (size_t i = 0; i < n; i++)
        fw_node_info_free(nis[i]);
    return snap;
}

static fx *fx_new(const char *args_json)
{
    static const char *const nodes[] = {"node-1", "node-2", "node-3"};
    fx *f = calloc(1, sizeof(*f));
    char err[256] = "";
    cJSON *args = args_json ? cJSON_Parse(args_json) : NULL;
    stickyvm_lookup lk = {fake_get, &f->cache};
    f->snap = snapshot_of(nodes, 3);
    f->h.profile_name = "stickyvm";
    f->h.svc.snapshot = f->snap;
    if (stickyvm_new_with_lookup(args, &f->h, NULL, &lk, &f->sv, err, sizeof(err)) != KUBE_OK)
        fail_msg("create: %s", err);
    cJSON_Delete(args);
    f->cs = fw_cycle_state_new();
    return f;
}

static void fx_free(fx *f)
{
    plugin_stickyvm.destroy(f->sv);
    fw_cycle_state_free(f->cs);
    fw_snapshot_free(f->snap);
    for (size_t i = 0; i < f->cache.n; i++)
        kube_object_unref(f->cache.objs[i]);
    free(f);
}

/* The standard chain: VMI vm-a (owned by VM vm-a) and VM vm-a with the
 * given annotations. */
static void put_chain(fx *f, const char *annotations)
{
    cache_put(&f->cache, vmi_new("vmi-uid", VM_OWNER, NULL));
    cache_put(&f->cache, vm_new(annotations, "239"));
}

static fw_status *run_pre_filter(fx *f, const fw_pod_info *pi, fw_pre_filter_result **res)
{
    *res = NULL;
    return plugin_stickyvm.pre_filter(f->sv, f->cs, pi, res);
}

static void assert_code(const fw_status *st, fw_code code)
{
    if (fw_status_code(st) != code) {
        char msg[512];
        fw_status_message(st, msg, sizeof(msg));
        fail_msg("status %s (%s), want %s", fw_code_string(fw_status_code(st)), msg,
                 fw_code_string(code));
    }
}

static void assert_message_has(const fw_status *st, const char *want)
{
    char msg[1024];
    fw_status_message(st, msg, sizeof(msg));
    if (!strstr(msg, want))
        fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

static stickyvm_stats stats_of(fx *f)
{
    stickyvm_stats s;
    stickyvm_stats_get(f->sv, &s);
    return s;
}

/* Runs PreFilter for pod and expects Skip with no state (not a VM pod). */
static void expect_not_ours(fx *f, fw_pod_info *pi)
{
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_SKIP);
    assert_null(res);
    assert_null(fw_cycle_state_read(f->cs, STICKYVM_STATE_KEY));
    fw_status_free(st);
    fw_pod_info_unref(pi);
}

/* ------------------------------------------------------------------ */
/* Owner resolution                                                    */
/* ------------------------------------------------------------------ */

static void test_pod_without_owner_is_skipped(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-2\"}");
    expect_not_ours(f, pod_new("[]", NO_LABELS));
    assert_int_equal(f->cache.gets, 0); /* decided from the pod alone */
    fx_free(f);
}

static void test_non_controller_owner_is_skipped(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-2\"}");
    expect_not_ours(f, pod_new("[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
                               "\"VirtualMachineInstance\",\"name\":\"vm-a\",\"uid\":"
                               "\"vmi-uid\"}]",
                               NO_LABELS));
    fx_free(f);
}

static void test_wrong_kind_or_group_is_skipped(void **state)
{
    static const char *const owners[] = {
        "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"vm-a\",\"uid\":\"u\","
        "\"controller\":true}]",
        "[{\"apiVersion\":\"example.com/v1\",\"kind\":\"VirtualMachineInstance\",\"name\":"
        "\"vm-a\",\"uid\":\"vmi-uid\",\"controller\":true}]",
        "[{\"apiVersion\":\"kubevirt.io\",\"kind\":\"VirtualMachineInstance\",\"name\":"
        "\"vm-a\",\"uid\":\"vmi-uid\",\"controller\":true}]",
        "[{\"apiVersion\":\"kubevirt.io.evil/v1\",\"kind\":\"VirtualMachineInstance\","
        "\"name\":\"vm-a\",\"uid\":\"vmi-uid\",\"controller\":true}]",
        "[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"name\":\"vm-a\","
        "\"uid\":\"vm-uid\",\"controller\":true}]",
    };
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-2\"}");
    for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++)
        expect_not_ours(f, pod_new(owners[i], NO_LABELS));
    fx_free(f);
}

static void test_other_kubevirt_version_counts(void **state)
{
    fw_pod_info *pi = pod_new("[{\"apiVersion\":\"kubevirt.io/v1alpha3\",\"kind\":"
                              "\"VirtualMachineInstance\",\"name\":\"vm-a\",\"uid\":"
                              "\"vmi-uid\",\"controller\":true}]",
                              NO_LABELS);
    const kube_owner_ref *o = stickyvm_vmi_owner(&pi->pod->base.meta);
    assert_non_null(o);
    assert_string_equal(o->name, "vm-a");
    fw_pod_info_unref(pi);
}

static void test_vmi_without_vm_is_skipped(void **state)
{
    fx *f = fx_new(NULL);
    cache_put(&f->cache, vmi_new("vmi-uid", "[]", NULL));
    expect_not_ours(f, pod_new(VMI_OWNER, NO_LABELS));
    fx_free(f);
}

static void test_vmi_owned_by_other_kind_is_skipped(void **state)
{
    fx *f = fx_new(NULL);
    cache_put(&f->cache,
              vmi_new("vmi-uid",
                      "[{\"apiVersion\":\"pool.kubevirt.io/v1alpha1\",\"kind\":"
                      "\"VirtualMachine\",\"name\":\"vm-a\",\"uid\":\"x\",\"controller\":true}]",
                      NULL));
    expect_not_ours(f, pod_new(VMI_OWNER, NO_LABELS));
    fx_free(f);
}

static void test_migration_target_is_skipped(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-2\"}");
    expect_not_ours(f, pod_new(VMI_OWNER, "{\"kubevirt.io/migrationJobUID\":\"mig-1\"}"));
    fx_free(f);
}

static void test_missing_vmi_is_unschedulable(void **state)
{
    fx *f = fx_new(NULL);
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_message_has(st, "VirtualMachineInstance default/vm-a");
    assert_message_has(st, "not found");
    assert_null(res);
    fw_status_free(st);
    fw_pod_info_unref(pi);
    fx_free(f);
}

static void test_missing_vm_is_unschedulable(void **state)
{
    fx *f = fx_new(NULL);
    cache_put(&f->cache, vmi_new("vmi-uid", VM_OWNER, NULL));
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_message_has(st, "VirtualMachine default/vm-a of pod default/virt-launcher-vm-a-abcde");
    fw_status_free(st);
    fw_pod_info_unref(pi);
    fx_free(f);
}

/* A cached VMI of the same name but another uid is not the pod's owner
 * (the pod outlived its VMI, or the cache has not seen the new one). */
static void test_owner_uid_mismatch_is_missing(void **state)
{
    fx *f = fx_new(NULL);
    cache_put(&f->cache, vmi_new("older-vmi-uid", VM_OWNER, NULL));
    cache_put(&f->cache, vm_new("{\"stickyvm.io/node\":\"node-2\"}", "239"));
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_message_has(st, "VirtualMachineInstance default/vm-a");
    fw_status_free(st);
    fw_pod_info_unref(pi);
    fx_free(f);
}

/* ------------------------------------------------------------------ */
/* The pin annotation                                                  */
/* ------------------------------------------------------------------ */

/* Unpinned: PreFilter skips Filter (any node), the state holds the VM. */
static void expect_unpinned(const char *annotations)
{
    fx *f = fx_new(NULL);
    put_chain(f, annotations);
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_SKIP);
    assert_null(res);
    assert_non_null(fw_cycle_state_read(f->cs, STICKYVM_STATE_KEY));
    fw_status_free(st);
    fw_pod_info_unref(pi);
    fx_free(f);
}

static void test_annotation_missing(void **state)
{
    expect_unpinned("{}");
    expect_unpinned("{\"other.io/node\":\"node-2\"}");
}

static void test_annotation_empty(void **state)
{
    expect_unpinned("{\"stickyvm.io/node\":\"\"}");
}

static void test_annotation_present(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-2\"}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_SUCCESS);
    assert_non_null(res);
    assert_int_equal(res->n, 1);
    assert_string_equal(res->node_names[0], "node-2");
    fw_pre_filter_result_free(res);

    const fw_node_info *n1 = fw_snapshot_get(f->snap, "node-1");
    const fw_node_info *n2 = fw_snapshot_get(f->snap, "node-2");
    assert_null(plugin_stickyvm.filter(f->sv, f->cs, pi, n2));
    st = plugin_stickyvm.filter(f->sv, f->cs, pi, n1);
    assert_code(st, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_message_has(st, "VM default/vm-a is pinned to node node-2");
    fw_status_free(st);

    /* A pinned VM never gets another write. */
    plugin_stickyvm.post_bind(f->sv, f->cs, pi, "node-2");
    stickyvm_stats s = stats_of(f);
    assert_int_equal(s.pinned_pods_scheduled, 1);
    assert_int_equal(s.api_writes, 0);
    assert_int_equal(s.api_reads, 0);
    assert_int_equal(s.pin_record_errors, 0);
    assert_int_equal(s.filter_calls, 2);
    fw_pod_info_unref(pi);
    fx_free(f);
}

static void test_pinned_node_gone(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-9\"}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_null(res);
    assert_message_has(st, "VM default/vm-a is pinned to node node-9");
    assert_message_has(st, "\"kubectl get --raw /apis/subresources.stickyvm.io/v1/namespaces/"
                           "default/virtualmachines/vm-a/unpin\"");
    assert_int_equal(stats_of(f).pinned_node_missing, 1);
    fw_status_free(st);
    fw_pod_info_unref(pi);
    fx_free(f);
}

static void test_custom_annotation_key(void **state)
{
    fx *f = fx_new("{\"annotationKey\":\"example.com/host\"}");
    put_chain(f, "{\"stickyvm.io/node\":\"node-1\",\"example.com/host\":\"node-3\"}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status *st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_SUCCESS);
    assert_string_equal(res->node_names[0], "node-3");
    fw_pre_filter_result_free(res);
    fw_pod_info_unref(pi);
    fx_free(f);

    /* The default key is ignored when another is configured. */
    f = fx_new("{\"annotationKey\":\"example.com/host\"}");
    put_chain(f, "{\"stickyvm.io/node\":\"node-1\"}");
    pi = pod_new(VMI_OWNER, NO_LABELS);
    st = run_pre_filter(f, pi, &res);
    assert_code(st, FW_SKIP);
    fw_status_free(st);
    fw_pod_info_unref(pi);
    fx_free(f);
}

static void test_filter_without_state_is_error(void **state)
{
    fx *f = fx_new(NULL);
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_status *st = plugin_stickyvm.filter(f->sv, f->cs, pi, fw_snapshot_get(f->snap, "node-1"));
    assert_code(st, FW_ERROR);
    assert_message_has(st, "PreFilterStickyVM");
    fw_status_free(st);
    fw_pod_info_unref(pi);
    fx_free(f);
}

/* The state survives cloning (preemption and nominated pods clone it). */
static void test_state_clone(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-2\"}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    assert_null(run_pre_filter(f, pi, &res));
    fw_pre_filter_result_free(res);
    fw_cycle_state *clone = fw_cycle_state_clone(f->cs);
    fw_cycle_state_free(f->cs);
    f->cs = NULL;
    fw_status *st = plugin_stickyvm.filter(f->sv, clone, pi, fw_snapshot_get(f->snap, "node-3"));
    assert_code(st, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
    fw_status_free(st);
    fw_cycle_state_free(clone);
    fw_pod_info_unref(pi);
    fx_free(f);
}

/* First placement without an API client: the write fails, is counted,
 * and nothing crashes; the next placement tries again. */
static void test_post_bind_failure_is_counted(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status_free(run_pre_filter(f, pi, &res));
    plugin_stickyvm.post_bind(f->sv, f->cs, pi, "node-1");
    plugin_stickyvm.post_bind(f->sv, f->cs, pi, "node-1");
    stickyvm_stats s = stats_of(f);
    assert_int_equal(s.pin_record_errors, 2);
    assert_int_equal(s.pins_recorded, 0);
    fw_pod_info_unref(pi);
    fx_free(f);
}

/* PostBind of a pod PreFilter skipped does nothing. */
static void test_post_bind_other_pod(void **state)
{
    fx *f = fx_new(NULL);
    fw_pod_info *pi = pod_new("[]", NO_LABELS);
    plugin_stickyvm.post_bind(f->sv, f->cs, pi, "node-1");
    stickyvm_stats s = stats_of(f);
    assert_int_equal(s.pin_record_errors + s.pins_recorded + s.pinned_pods_scheduled, 0);
    fw_pod_info_unref(pi);
    fx_free(f);
}

/* The stickyvm_* counters land in the scheduler's registry, from 0, and
 * two instances (two profiles) share them. */
static void test_metrics_registered(void **state)
{
    kube_metrics *reg = NULL;
    assert_int_equal(kube_metrics_new(&reg), KUBE_OK);
    fx *f = fx_new(NULL);
    fw_handle h2 = f->h;
    void *second = NULL;
    char err[256] = "";
    stickyvm_lookup lk = {fake_get, &f->cache};
    plugin_stickyvm.destroy(f->sv);
    f->h.svc.metrics_registry = reg;
    h2.svc.metrics_registry = reg;
    assert_int_equal(stickyvm_new_with_lookup(NULL, &f->h, NULL, &lk, &f->sv, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(stickyvm_new_with_lookup(NULL, &h2, NULL, &lk, &second, err, sizeof(err)),
                     KUBE_OK);
    kube_buf text = KUBE_BUF_INIT;
    assert_int_equal(kube_metrics_write(reg, &text), KUBE_OK);
    assert_non_null(strstr(text.data, "stickyvm_pins_recorded_total 0"));
    assert_non_null(strstr(text.data, "stickyvm_pin_record_errors_total 0"));
    assert_non_null(strstr(text.data, "stickyvm_pinned_pods_scheduled_total 0"));
    assert_non_null(strstr(text.data, "stickyvm_pinned_node_missing_total 0"));
    kube_buf_free(&text);

    put_chain(f, "{\"stickyvm.io/node\":\"node-9\"}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    fw_pre_filter_result *res;
    fw_status_free(run_pre_filter(f, pi, &res));
    fw_status_free(plugin_stickyvm.pre_filter(second, f->cs, pi, &res));
    assert_true(kube_metric_value(kube_metrics_find(reg, "stickyvm_pinned_node_missing_total"),
                                  NULL) == 2.0);
    fw_pod_info_unref(pi);
    plugin_stickyvm.destroy(second);
    fx_free(f);
    kube_metrics_free(reg);
}

/* ------------------------------------------------------------------ */
/* Queueing hints                                                      */
/* ------------------------------------------------------------------ */

static const fw_cluster_event_with_hint *event_for(fx *f, const char *gvk)
{
    const fw_cluster_event_with_hint *evs;
    size_t n = plugin_stickyvm.events_to_register(f->sv, &evs);
    for (size_t i = 0; i < n; i++)
        if (strcmp(evs[i].event.resource, gvk) == 0)
            return &evs[i];
    fail_msg("no event for %s", gvk);
    return NULL;
}

static void test_node_hint_fires_for_pinned_node_only(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-2\"}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    const fw_cluster_event_with_hint *ev = event_for(f, FW_GVK_NODE);
    assert_true(ev->event.action & FW_ACT_ADD);
    assert_true(ev->event.action & FW_ACT_UPDATE_NODE_TAINT);
    kube_object *n1 = node_new("node-1"), *n2 = node_new("node-2");
    assert_int_equal(ev->hint(f->sv, pi, NULL, n2), FW_QUEUE_AFTER_BACKOFF);
    assert_int_equal(ev->hint(f->sv, pi, n2, n2), FW_QUEUE_AFTER_BACKOFF);
    assert_int_equal(ev->hint(f->sv, pi, NULL, n1), FW_QUEUE_SKIP);
    assert_int_equal(ev->hint(f->sv, pi, n1, n1), FW_QUEUE_SKIP);
    kube_object_unref(n1);
    kube_object_unref(n2);
    fw_pod_info_unref(pi);
    fx_free(f);
}

static void test_vm_hint_fires_on_pin_change(void **state)
{
    fx *f = fx_new(NULL);
    put_chain(f, "{\"stickyvm.io/node\":\"node-9\"}");
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    const fw_cluster_event_with_hint *ev = event_for(f, FW_GVK_VM);
    kube_object *pinned = vm_new("{\"stickyvm.io/node\":\"node-9\"}", "300");
    kube_object *relabelled = vm_new("{\"stickyvm.io/node\":\"node-9\",\"x\":\"y\"}", "301");
    kube_object *unpinned = vm_new("{}", "302");
    assert_int_equal(ev->hint(f->sv, pi, pinned, relabelled), FW_QUEUE_SKIP);
    assert_int_equal(ev->hint(f->sv, pi, relabelled, unpinned), FW_QUEUE_AFTER_BACKOFF);
    assert_int_equal(ev->hint(f->sv, pi, NULL, pinned), FW_QUEUE_AFTER_BACKOFF);
    kube_object_unref(pinned);
    kube_object_unref(relabelled);
    kube_object_unref(unpinned);

    /* Another VM's change is not this pod's business. */
    cJSON *j = cJSON_Parse("{\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":\"vm-b\","
                           "\"namespace\":\"default\",\"uid\":\"b\"}}");
    kube_object *other = NULL;
    assert_int_equal(kube_vm_codec.decode(j, &other), KUBE_OK);
    cJSON_Delete(j);
    assert_int_equal(ev->hint(f->sv, pi, NULL, other), FW_QUEUE_SKIP);
    kube_object_unref(other);
    fw_pod_info_unref(pi);
    fx_free(f);
}

static void test_vmi_hint_fires_for_own_vmi(void **state)
{
    fx *f = fx_new(NULL);
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    const fw_cluster_event_with_hint *ev = event_for(f, FW_GVK_VMI);
    kube_object *vmi = vmi_new("vmi-uid", VM_OWNER, NULL);
    assert_int_equal(ev->hint(f->sv, pi, NULL, vmi), FW_QUEUE_AFTER_BACKOFF);
    kube_object_unref(vmi);
    fw_pod_info_unref(pi);
    pi = pod_new("[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
                 "\"name\":\"vm-z\",\"uid\":\"z\",\"controller\":true}]",
                 NO_LABELS);
    vmi = vmi_new("vmi-uid", VM_OWNER, NULL);
    assert_int_equal(ev->hint(f->sv, pi, NULL, vmi), FW_QUEUE_SKIP);
    kube_object_unref(vmi);
    fw_pod_info_unref(pi);
    fx_free(f);
}

/* ------------------------------------------------------------------ */
/* Live migration rule                                                 */
/* ------------------------------------------------------------------ */

#define MIG(done, failed, src, dst, uid)                                                      \
    "{\"nodeName\":\"" dst "\",\"migrationState\":{\"completed\":" done ",\"failed\":" failed \
    ",\"sourceNode\":\"" src "\",\"targetNode\":\"" dst "\",\"migrationUid\":\"" uid "\"}}"

static void test_migration_target_rule(void **state)
{
    kube_object *running = vmi_new("vmi-uid", VM_OWNER, "{\"nodeName\":\"node-1\"}");
    kube_object *inflight =
        vmi_new("vmi-uid", VM_OWNER, MIG("false", "false", "node-1", "node-2", "m1"));
    kube_object *done =
        vmi_new("vmi-uid", VM_OWNER, MIG("true", "false", "node-1", "node-2", "m1"));
    kube_object *failed =
        vmi_new("vmi-uid", VM_OWNER, MIG("true", "true", "node-1", "node-2", "m1"));
    kube_object *pin1 = vm_new("{\"stickyvm.io/node\":\"node-1\"}", "1");
    kube_object *pin2 = vm_new("{\"stickyvm.io/node\":\"node-2\"}", "2");
    kube_object *pin3 = vm_new("{\"stickyvm.io/node\":\"node-3\"}", "3");
    kube_object *nopin = vm_new("{}", "4");
    kube_object *elsewhere = vmi_new("vmi-uid", VM_OWNER,
                                     "{\"nodeName\":\"node-1\",\"migrationState\":{"
                                     "\"completed\":true,\"sourceNode\":\"node-1\","
                                     "\"targetNode\":\"node-2\",\"migrationUid\":\"m1\"}}");
    kube_object *followed = vm_new("{\"stickyvm.io/node\":\"node-1\","
                                   "\"stickyvm.io/followed-migration\":\"m1\"}",
                                   "5");
    kube_object *followed_other = vm_new("{\"stickyvm.io/node\":\"node-1\","
                                         "\"stickyvm.io/followed-migration\":\"m0\"}",
                                         "6");
    const kube_vmi *r = kube_vmi_from(running), *i = kube_vmi_from(inflight),
                   *d = kube_vmi_from(done), *x = kube_vmi_from(failed),
                   *e = kube_vmi_from(elsewhere);
    const char *key = STICKYVM_DEFAULT_ANNOTATION;

    assert_string_equal(sched_pins_migration_target(d, kube_vm_from(pin1), key), "node-2");
    assert_string_equal(sched_pins_migration_target(d, kube_vm_from(followed_other), key),
                        "node-2");
    assert_null(sched_pins_migration_target(r, kube_vm_from(pin1), key)); /* no migration */
    assert_null(sched_pins_migration_target(i, kube_vm_from(pin1), key)); /* not done */
    assert_null(sched_pins_migration_target(x, kube_vm_from(pin1), key)); /* failed */
    assert_null(sched_pins_migration_target(e, kube_vm_from(pin1), key)); /* not running there */
    assert_null(sched_pins_migration_target(d, kube_vm_from(followed), key)); /* followed already */
    assert_null(sched_pins_migration_target(d, kube_vm_from(pin2), key));     /* already there */
    assert_null(sched_pins_migration_target(d, kube_vm_from(pin3), key));     /* re-pinned */
    assert_null(sched_pins_migration_target(d, kube_vm_from(nopin), key));    /* unpinned */
    assert_null(sched_pins_migration_target(d, NULL, key));
    assert_null(sched_pins_migration_target(NULL, kube_vm_from(pin1), key));
    assert_null(sched_pins_migration_target(d, kube_vm_from(pin1), "example.com/other"));
    /* a decision that saw m1 completed (the owner's /pin back to node-1) */
    kube_object *seen = vm_new("{\"stickyvm.io/node\":\"node-1\","
                               "\"stickyvm.io/seen-migration\":\"m1\"}",
                               "7");
    kube_object *seen_other = vm_new("{\"stickyvm.io/node\":\"node-1\","
                                     "\"stickyvm.io/seen-migration\":\"m0\"}",
                                     "8");
    assert_null(sched_pins_migration_target(d, kube_vm_from(seen), key));
    assert_string_equal(sched_pins_migration_target(d, kube_vm_from(seen_other), key), "node-2");
    kube_object_unref(seen);
    kube_object_unref(seen_other);

    kube_object_unref(elsewhere);
    kube_object_unref(followed);
    kube_object_unref(followed_other);
    kube_object *objs[] = {running, inflight, done, failed, pin1, pin2, pin3, nopin};
    for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++)
        kube_object_unref(objs[k]);
}

/* The durable first pin's rule: no pin, and the last decision did not
 * see the pod bound (seen-pods), whatever any clock says; a decision
 * recorded without seen-pods (before the rule) is never undone. */
static void test_first_pin_due_rule(void **state)
{
    (void)state;
    kube_object *fresh = vm_new("{}", "1");
    kube_object *pinned = vm_new("{\"stickyvm.io/node\":\"node-1\"}", "2");
    /* an unpin that saw pod-a and pod-b bound, pinned-at far in the future */
    kube_object *saw = vm_new("{\"stickyvm.io/pinned-at\":\"2099-01-01T00:00:00Z\","
                              "\"stickyvm.io/pin-reason\":\"API\","
                              "\"stickyvm.io/seen-pods\":\"pod-a,pod-b\"}",
                              "3");
    kube_object *saw_none = vm_new("{\"stickyvm.io/pin-reason\":\"NodeLost\","
                                   "\"stickyvm.io/pinned-at\":\"2026-01-01T00:00:09Z\","
                                   "\"stickyvm.io/seen-pods\":\"\"}",
                                   "4");
    kube_object *legacy = vm_new("{\"stickyvm.io/pinned-at\":\"2026-01-01T00:00:09Z\","
                                 "\"stickyvm.io/pin-reason\":\"API\"}",
                                 "5");
    kube_object *first = vm_new("{\"stickyvm.io/pinned-at\":\"2026-01-01T00:00:09Z\","
                                "\"stickyvm.io/pin-reason\":\"FirstPlacement\"}",
                                "6");
    const char *key = STICKYVM_DEFAULT_ANNOTATION;

    assert_true(sched_pins_first_pin_due(kube_vm_from(fresh), key, "pod-a"));
    assert_false(sched_pins_first_pin_due(kube_vm_from(pinned), key, "pod-a"));
    assert_false(sched_pins_first_pin_due(kube_vm_from(saw), key, "pod-a")); /* seen */
    assert_false(sched_pins_first_pin_due(kube_vm_from(saw), key, "pod-b"));
    assert_true(sched_pins_first_pin_due(kube_vm_from(saw), key, "pod-c")); /* newer */
    assert_true(sched_pins_first_pin_due(kube_vm_from(saw), key, "pod-"));  /* a prefix */
    assert_true(sched_pins_first_pin_due(kube_vm_from(saw_none), key, "pod-a"));
    assert_false(sched_pins_first_pin_due(kube_vm_from(legacy), key, "pod-a")); /* unknown */
    assert_true(sched_pins_first_pin_due(kube_vm_from(first), key, "pod-a"));
    assert_false(sched_pins_first_pin_due(kube_vm_from(fresh), key, ""));
    assert_false(sched_pins_first_pin_due(NULL, key, "pod-a"));
    assert_true(sched_pins_first_pin_due(kube_vm_from(pinned), "example.com/other", "pod-c"));

    kube_object *objs[] = {fresh, pinned, saw, saw_none, legacy, first};
    for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++)
        kube_object_unref(objs[k]);
}

/* ------------------------------------------------------------------ */
/* Args                                                                */
/* ------------------------------------------------------------------ */

static void expect_args(const char *in_json, const char *want_key)
{
    cJSON *in = in_json ? cJSON_Parse(in_json) : NULL, *out = NULL;
    char err[512] = "";
    if (plugin_stickyvm.default_args(in, &out, err, sizeof(err)) != KUBE_OK)
        fail_msg("args %s: %s", in_json ? in_json : "(none)", err);
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(out, "annotationKey");
    assert_true(cJSON_IsString(k));
    assert_string_equal(k->valuestring, want_key);
    cJSON_Delete(in);
    cJSON_Delete(out);
}

static void expect_args_error(const char *in_json, const char *want)
{
    cJSON *in = cJSON_Parse(in_json), *out = NULL;
    char err[512] = "";
    assert_int_equal(plugin_stickyvm.default_args(in, &out, err, sizeof(err)), KUBE_ECONFIG);
    assert_null(out);
    if (!strstr(err, want))
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
    cJSON_Delete(in);
}

/* The defaulted nodeLossGracePeriod of args in_json, as Duration.String(). */
static void expect_grace(const char *in_json, const char *want)
{
    cJSON *in = in_json ? cJSON_Parse(in_json) : NULL, *out = NULL;
    char err[512] = "";
    if (plugin_stickyvm.default_args(in, &out, err, sizeof(err)) != KUBE_OK)
        fail_msg("args %s: %s", in_json ? in_json : "(none)", err);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(out, "nodeLossGracePeriod");
    assert_true(cJSON_IsString(g));
    assert_string_equal(g->valuestring, want);
    cJSON_Delete(in);
    cJSON_Delete(out);
}

static void test_args(void **state)
{
    expect_args(NULL, "stickyvm.io/node");
    expect_args("{}", "stickyvm.io/node");
    expect_args("{\"annotationKey\":null}", "stickyvm.io/node");
    expect_args("{\"annotationKey\":\"example.com/pinned-node\"}", "example.com/pinned-node");
    expect_args("{\"annotationKey\":\"Example.COM/Node\"}", "Example.COM/Node");
    expect_args("{\"annotationKey\":\"node\"}", "node");
    expect_args_error("{\"annotationKey\":\"\"}", "annotationKey: Required value");
    expect_args_error("{\"annotationKey\":\"bad key\"}", "annotationKey: Invalid value");
    expect_args_error("{\"annotationKey\":\"example.com/\"}", "annotationKey: Invalid value");
    expect_args_error("{\"annotationKey\":\"-x.io/node\"}", "annotationKey: Invalid value");
    expect_args_error("{\"annotationKey\":3}", "annotationKey");
    expect_args_error("{\"annotationkey\":\"a/b\"}", "unknown field \"annotationkey\"");
    expect_grace(NULL, "10m0s");
    expect_grace("{\"nodeLossGracePeriod\":\"90s\"}", "1m30s");
    expect_grace("{\"nodeLossGracePeriod\":\"0\"}", "0s");
    expect_args_error("{\"nodeLossGracePeriod\":\"abc\"}",
                      "nodeLossGracePeriod: Invalid value: \"abc\": time: invalid duration");
    expect_args_error("{\"nodeLossGracePeriod\":\"-1s\"}",
                      "nodeLossGracePeriod: Invalid value: \"-1s\": must be greater than or "
                      "equal to 0");
    expect_args_error("{\"nodeLossGracePeriod\":600}", "nodeLossGracePeriod: expected a string");

    /* create() refuses what default_args refuses. */
    fw_handle h = {0};
    void *self = NULL;
    char err[256] = "";
    cJSON *bad = cJSON_Parse("{\"annotationKey\":\"a b\"}");
    assert_int_equal(plugin_stickyvm.create(bad, &h, NULL, &self, err, sizeof(err)), KUBE_ECONFIG);
    assert_null(self);
    cJSON_Delete(bad);
}

/* ------------------------------------------------------------------ */
/* Through the framework                                               */
/* ------------------------------------------------------------------ */

static fake_cache *g_cache;
static int g_filter_calls;

static int create_on_fake(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                          size_t errlen)
{
    stickyvm_lookup lk = {fake_get, g_cache};
    return stickyvm_new_with_lookup(args, h, deps, &lk, self, err, errlen);
}

static fw_status *counting_filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pi,
                                  const fw_node_info *ni)
{
    g_filter_calls++; /* the framework filters in parallel: callers use one thread */
    return plugin_stickyvm.filter(self, cs, pi, ni);
}

static const char profile_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                   "kind: KubeSchedulerConfiguration\n"
                                   "parallelism: 1\n"
                                   "leaderElection:\n"
                                   "  leaderElect: false\n"
                                   "profiles:\n"
                                   "  - schedulerName: stickyvm\n"
                                   "    plugins:\n"
                                   "      multiPoint:\n"
                                   "        enabled:\n"
                                   "          - name: StickyVM\n";

/* The default registry with StickyVM reading the fake cache and counting
 * its Filter calls. */
static fw_registry fake_registry(const fw_plugin_desc **list, size_t cap)
{
    static fw_plugin_desc sticky;
    const fw_registry *def = plugin_registry_in_tree();
    sticky = plugin_stickyvm;
    sticky.create = create_on_fake;
    sticky.filter = counting_filter;
    assert_true(def->n <= cap);
    for (size_t i = 0; i < def->n; i++)
        list[i] = def->plugins[i] == &plugin_stickyvm ? &sticky : def->plugins[i];
    return (fw_registry){list, def->n, NULL};
}

/* Builds the "stickyvm" profile (default plugins + StickyVM) and finds
 * the nodes that fit pi: returns how many, *first the first one. */
static size_t fit(fake_cache *cache, fw_snapshot *snap, fw_pod_info *pi, const char **first)
{
    const fw_plugin_desc *list[64];
    fw_registry reg = fake_registry(list, 64);
    sched_config *cfg = NULL;
    fw_framework *fw = NULL;
    char err[512] = "";
    g_cache = cache;
    if (tp_config_load(profile_yaml, "test.yaml", &reg, &cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("config: %s", err);
    fw_services svc = {.snapshot = snap};
    if (fw_framework_new(sched_config_profile(cfg, "stickyvm"), &reg, &svc, &fw, err,
                         sizeof(err)) != KUBE_OK)
        fail_msg("framework: %s", err);
    sched_config_free(cfg);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_sched_state ss = {0, 0, 1};
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    const fw_node_info **feasible = NULL;
    size_t n = 0;
    fw_status *st = fw_framework_find_nodes_that_fit(fw, cs, pi, snap, &ss, &d, &feasible, &n);
    assert_null(st);
    *first = n ? fw_snapshot_get(snap, feasible[0]->name)->name : NULL;
    free(feasible);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);
    fw_framework_free(fw);
    return n;
}

static void test_framework_filters_one_node(void **state)
{
    static const char *const names[] = {"node-1", "node-2", "node-3", "node-4", "node-5"};
    fake_cache cache = {0};
    fw_snapshot *snap = snapshot_of(names, 5);
    const char *first = NULL;
    cache_put(&cache, vmi_new("vmi-uid", VM_OWNER, NULL));
    cache_put(&cache, vm_new("{\"stickyvm.io/node\":\"node-3\"}", "239"));

    /* A pinned VM's pod: StickyVM's Filter runs once, on the pinned node. */
    fw_pod_info *pi = pod_new(VMI_OWNER, NO_LABELS);
    g_filter_calls = 0;
    assert_int_equal(fit(&cache, snap, pi, &first), 1);
    assert_string_equal(first, "node-3");
    assert_int_equal(g_filter_calls, 1);
    fw_pod_info_unref(pi);

    /* A pod that is no VM's: every node fits, StickyVM's Filter never runs. */
    pi = pod_new("[]", NO_LABELS);
    g_filter_calls = 0;
    assert_int_equal(fit(&cache, snap, pi, &first), 5);
    assert_int_equal(g_filter_calls, 0);
    fw_pod_info_unref(pi);

    /* An unpinned VM's pod: every node fits, Filter skipped too. */
    kube_object_unref(cache.objs[1]);
    cache.objs[1] = vm_new("{}", "240");
    pi = pod_new(VMI_OWNER, NO_LABELS);
    g_filter_calls = 0;
    assert_int_equal(fit(&cache, snap, pi, &first), 5);
    assert_int_equal(g_filter_calls, 0);
    fw_pod_info_unref(pi);

    for (size_t i = 0; i < cache.n; i++)
        kube_object_unref(cache.objs[i]);
    fw_snapshot_free(snap);
}

/* ------------------------------------------------------------------ */
/* The example configuration                                           */
/* ------------------------------------------------------------------ */

static int enabled_at(const sched_profile *p, sched_ext_point ep, const char *name)
{
    for (size_t i = 0; i < p->plugins[ep].n_enabled; i++)
        if (strcmp(p->plugins[ep].enabled[i].name, name) == 0)
            return 1;
    return 0;
}

static void test_example_config_loads(void **state)
{
    const char *path = STICKYVM_SOURCE_DIR "/manifests/scheduler/stickyvm-scheduler-config.yaml";
    sched_config *cfg = NULL;
    char err[512] = "";
    if (tp_config_load_file(path, NULL, &cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("%s", err);
    assert_true(cfg->leader_election.leader_elect);
    assert_string_equal(cfg->api_version, SCHED_API_V1);
    const sched_profile *p = sched_config_profile(cfg, "stickyvm");
    assert_non_null(p);
    assert_true(enabled_at(p, SCHED_EP_PRE_FILTER, "StickyVM"));
    assert_true(enabled_at(p, SCHED_EP_FILTER, "StickyVM"));
    assert_true(enabled_at(p, SCHED_EP_POST_BIND, "StickyVM"));
    const cJSON *args = sched_profile_args(p, "StickyVM");
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(args, "annotationKey");
    assert_true(cJSON_IsString(key));
    assert_string_equal(key->valuestring, "stickyvm.io/node");

    /* The default plugins are there too, and the framework builds. */
    fw_framework *fw = NULL;
    fw_services svc = {0};
    if (fw_framework_new(p, plugin_registry_in_tree(), &svc, &fw, err, sizeof(err)) != KUBE_OK)
        fail_msg("framework: %s", err);
    const char *names[32];
    size_t n = fw_framework_plugins_at(fw, FW_PT_FILTER, names, 32);
    assert_true(n >= 2);
    assert_string_equal(names[n - 1], "StickyVM");
    assert_true(fw_framework_has_plugin(fw, "DefaultBinder"));
    fw_framework_free(fw);
    sched_config_free(cfg);
}

int test_group_plugin_stickyvm(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_without_owner_is_skipped),
        cmocka_unit_test(test_non_controller_owner_is_skipped),
        cmocka_unit_test(test_wrong_kind_or_group_is_skipped),
        cmocka_unit_test(test_other_kubevirt_version_counts),
        cmocka_unit_test(test_vmi_without_vm_is_skipped),
        cmocka_unit_test(test_vmi_owned_by_other_kind_is_skipped),
        cmocka_unit_test(test_migration_target_is_skipped),
        cmocka_unit_test(test_missing_vmi_is_unschedulable),
        cmocka_unit_test(test_missing_vm_is_unschedulable),
        cmocka_unit_test(test_owner_uid_mismatch_is_missing),
        cmocka_unit_test(test_annotation_missing),
        cmocka_unit_test(test_annotation_empty),
        cmocka_unit_test(test_annotation_present),
        cmocka_unit_test(test_pinned_node_gone),
        cmocka_unit_test(test_custom_annotation_key),
        cmocka_unit_test(test_filter_without_state_is_error),
        cmocka_unit_test(test_state_clone),
        cmocka_unit_test(test_post_bind_failure_is_counted),
        cmocka_unit_test(test_post_bind_other_pod),
        cmocka_unit_test(test_metrics_registered),
        cmocka_unit_test(test_node_hint_fires_for_pinned_node_only),
        cmocka_unit_test(test_vm_hint_fires_on_pin_change),
        cmocka_unit_test(test_vmi_hint_fires_for_own_vmi),
        cmocka_unit_test(test_migration_target_rule),
        cmocka_unit_test(test_first_pin_due_rule),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_framework_filters_one_node),
        cmocka_unit_test(test_example_config_loads),
    };
    return cmocka_run_group_tests_name("plugin_stickyvm", tests, NULL, NULL);
}
