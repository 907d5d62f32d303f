/*
 * tests/unit/test_pins_status.c - stickyvm_pinned_pods_waiting and
 * stickyvm_pinned_vms_on_unready_node (scheduler/pins/status.h) on a fake
 * informer factory: the reason comes
 * from the pinned node in the caches by the Filter plugins' predicates, in
 * their order, whatever the pod's PodScheduled message says (another
 * scheduler's words); a pod whose node could take it, or that does not
 * wait, or whose VM is not pinned, is not counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/jsonstream.h"
#include "kube/machinery/factory_testing.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node.h"
#include "kube/types/pin.h"
#include "kube/types/pod.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/metrics_testing.h"
#include "pins/status.h"
#include "unit/test_plugin_util.h"

/* kube-scheduler 1.22's words for a tainted node (the quote escaped for
 * tp_json()), and words of no scheduler. */
#define OLD_TAINT_WORDS \
    "0/3 nodes are available: 3 node(s) had taints that the pod didn\\u0027t tolerate."
#define OTHER_WORDS "waiting for capacity"

typedef struct world {
    kube_factory *informers;
    kube_lister *pods, *vms, *vmis, *nodes;
    kube_metrics *registry;
    sched_pins_status *ps;
} world;

/* Applies a watch event of type with obj (whose reference is dropped). */
static void apply(kube_lister *l, int type, kube_object *obj)
{
    assert_int_equal(kube_lister_apply(l, type, obj), KUBE_OK);
    kube_object_unref(obj);
}

static void add(kube_lister *l, kube_object *obj)
{
    apply(l, KUBE_WATCH_ADDED, obj);
}

static kube_lister *lister(kube_factory *f, const kube_resource *res, const kube_codec *codec)
{
    kube_informer_options o = {.resource = res, .codec = codec};
    kube_lister *l = NULL;

    assert_int_equal(kube_factory_lister(f, &o, &l), KUBE_OK);
    return l;
}

static int setup(void **state)
{
    world *w = calloc(1, sizeof(*w));

    assert_non_null(w);
    assert_int_equal(kube_factory_new(NULL, &w->informers), KUBE_OK);
    w->pods = lister(w->informers, &KUBE_RES_PODS, &kube_pod_codec);
    w->vms = lister(w->informers, &KUBE_RES_VMS, &kube_vm_codec);
    w->vmis = lister(w->informers, &KUBE_RES_VMIS, &kube_vmi_codec);
    w->nodes = lister(w->informers, &KUBE_RES_NODES, &kube_node_codec);
    assert_int_equal(kube_metrics_new(&w->registry), KUBE_OK);
    assert_int_equal(
        sched_pins_status_new(w->informers, w->pods, KUBE_PIN_DEFAULT_KEY, w->registry, &w->ps),
        KUBE_OK);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;

    sched_pins_status_free(w->ps);
    kube_factory_free(w->informers);
    kube_metrics_free(w->registry);
    free(w);
    return 0;
}

/* A node with 4 cpus; spec is single-quoted JSON members of spec. */
static void node(world *w, const char *name, const char *spec)
{
    char json[768];

    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'n-%s'},'spec':{%s},"
             "'status':{'allocatable':{'cpu':'4','memory':'8Gi','pods':'110'}}}",
             name, name, spec);
    add(w->nodes, tp_object(&kube_node_codec, json));
}

/* The pending launcher pod of VM vm asking for cpu, with tolerations (a
 * single-quoted JSON array), unschedulable with message. */
static kube_object *launcher(const char *vm, const char *cpu, const char *tolerations,
                             const char *message)
{
    char json[1536];

    snprintf(json, sizeof(json),
             "{'metadata':{'name':'virt-launcher-%s','namespace':'default','uid':'pod-%s',"
             "'ownerReferences':[{'apiVersion':'kubevirt.io/v1','kind':'VirtualMachineInstance',"
             "'name':'%s','uid':'vmi-%s','controller':true}]},'spec':{'tolerations':%s,"
             "'containers':[{'name':'compute','resources':{'requests':{'cpu':'%s'}}}]},"
             "'status':{'phase':'Pending','conditions':[{'type':'PodScheduled','status':'False',"
             "'reason':'Unschedulable','message':'%s'}]}}",
             vm, vm, vm, vm, tolerations, cpu, message);
    return tp_object(&kube_pod_codec, json);
}

/* VM vm (pinned to node unless NULL), its VMI and its launcher pod
 * (launcher(), no toleration). */
static void pinned_vm(world *w, const char *vm, const char *node, const char *cpu,
                      const char *message)
{
    char json[768], annotations[128] = "{}";

    if (node)
        snprintf(annotations, sizeof(annotations), "{'" KUBE_PIN_DEFAULT_KEY "':'%s'}", node);
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'vm-%s','annotations':%s},"
             "'spec':{'running':true}}",
             vm, vm, annotations);
    add(w->vms, tp_object(&kube_vm_codec, json));
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'vmi-%s','ownerReferences':"
             "[{'apiVersion':'kubevirt.io/v1','kind':'VirtualMachine','name':'%s','uid':"
             "'vm-%s','controller':true}]}}",
             vm, vm, vm, vm);
    add(w->vmis, tp_object(&kube_vmi_codec, json));
    add(w->pods, launcher(vm, cpu, "[]", message));
}

/* A pod of no VM bound to node, asking for cpu. */
static void bound_pod(world *w, const char *name, const char *node, const char *cpu)
{
    char json[512];

    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'default','uid':'pod-%s'},'spec':{'nodeName':"
             "'%s','containers':[{'name':'c','resources':{'requests':{'cpu':'%s'}}}]},"
             "'status':{'phase':'Running'}}",
             name, name, node, cpu);
    add(w->pods, tp_object(&kube_pod_codec, json));
}

static double waiting(world *w, const char *reason)
{
    const char *values[] = {reason};

    return kube_metric_value(kube_metrics_find(w->registry, "stickyvm_pinned_pods_waiting"),
                             values);
}

/* Asserts the five series after a refresh. */
static void assert_waiting(world *w, int not_ready, int missing, int unschedulable, int tainted,
                           int insufficient)
{
    sched_pins_status_refresh(w->ps);
    assert_int_equal((int)waiting(w, "NodeNotReady"), not_ready);
    assert_int_equal((int)waiting(w, "NodeMissing"), missing);
    assert_int_equal((int)waiting(w, "NodeUnschedulable"), unschedulable);
    assert_int_equal((int)waiting(w, "NodeTainted"), tainted);
    assert_int_equal((int)waiting(w, "Insufficient"), insufficient);
}

/* Each reason from the node, the message saying otherwise every time. */
static void reason_comes_from_the_node_not_the_message(void **state)
{
    world *w = *state;

    node(w, "cordoned", "'unschedulable':true");
    node(w, "lost", "'taints':[{'key':'node.kubernetes.io/unreachable','effect':'NoSchedule'}]");
    node(w, "maint", "'taints':[{'key':'maintenance','value':'disk','effect':'NoExecute'}]");
    node(w, "full", "");
    bound_pod(w, "hog", "full", "3");
    pinned_vm(w, "vm-cordoned", "cordoned", "1", OLD_TAINT_WORDS);
    pinned_vm(w, "vm-lost", "lost", "1", OTHER_WORDS);
    pinned_vm(w, "vm-maint", "maint", "1", "1 node(s) were unschedulable");
    pinned_vm(w, "vm-full", "full", "2", OLD_TAINT_WORDS);
    pinned_vm(w, "vm-gone", "gone", "1", "1 Insufficient cpu");
    assert_waiting(w, 1, 1, 1, 1, 1);
}

/* A cordoned and tainted node is NodeUnschedulable (its plugin filters
 * first); a pod that tolerates the cordon is refused by the taint next. */
static void first_failing_predicate_names_it(void **state)
{
    world *w = *state;

    node(w, "n1",
         "'unschedulable':true,'taints':[{'key':'node.kubernetes.io/not-ready',"
         "'effect':'NoSchedule'}]");
    pinned_vm(w, "vm-a", "n1", "1", OTHER_WORDS);
    assert_waiting(w, 0, 0, 1, 0, 0);
    apply(w->pods, KUBE_WATCH_MODIFIED,
          launcher("vm-a", "1",
                   "[{'key':'node.kubernetes.io/unschedulable','operator':'Exists',"
                   "'effect':'NoSchedule'}]",
                   OTHER_WORDS));
    assert_waiting(w, 1, 0, 0, 0, 0);
}

/* Not counted: the node could take the pod (it recovered, or the pod
 * waits for something else), the VM is not pinned, the pod is bound. */
static void pods_their_node_could_take_do_not_count(void **state)
{
    world *w = *state;

    node(w, "n1", "");
    pinned_vm(w, "vm-fits", "n1", "1", "1 Insufficient cpu");
    pinned_vm(w, "vm-unpinned", NULL, "1", "1 node(s) were unschedulable");
    bound_pod(w, "bound", "n1", "1");
    assert_waiting(w, 0, 0, 0, 0, 0);
    bound_pod(w, "hog", "n1", "3");
    assert_waiting(w, 0, 0, 0, 0, 1);
}

/* A node whose Ready condition is ready ("True", "False", "Unknown"). */
static void node_ready(world *w, int type, const char *name, const char *ready)
{
    char json[768];

    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','uid':'n-%s'},'spec':{},'status':{'allocatable':{'cpu':'4',"
             "'memory':'8Gi','pods':'110'},'conditions':[{'type':'Ready','status':'%s'}]}}",
             name, name, ready);
    apply(w->nodes, type, tp_object(&kube_node_codec, json));
}

/* The registry's exposition after a refresh (caller frees). */
static char *exposition(world *w)
{
    kube_buf b = KUBE_BUF_INIT;

    sched_pins_status_refresh(w->ps);
    assert_int_equal(kube_metrics_write(w->registry, &b), KUBE_OK);
    return kube_buf_take(&b);
}

/* stickyvm_pinned_vms_on_unready_node names each node that is not Ready
 * with its VMs; a Ready node has no series, and with every node Ready the
 * family is not written at all. */
static void unready_nodes_are_named(void **state)
{
    world *w = *state;
    char *text;

    node_ready(w, KUBE_WATCH_ADDED, "n-ok", "True");
    node_ready(w, KUBE_WATCH_ADDED, "n-down", "False");
    node_ready(w, KUBE_WATCH_ADDED, "n-lost", "Unknown");
    pinned_vm(w, "vm-a", "n-ok", "1", OTHER_WORDS);
    pinned_vm(w, "vm-b", "n-down", "1", OTHER_WORDS);
    pinned_vm(w, "vm-c", "n-down", "1", OTHER_WORDS);
    pinned_vm(w, "vm-d", "n-lost", "1", OTHER_WORDS);
    pinned_vm(w, "vm-e", "n-gone", "1", OTHER_WORDS);
    text = exposition(w);
    assert_non_null(strstr(
        text, "stickyvm_pinned_vms_on_unready_node{node=\"n-down\",node_status=\"NotReady\"} 2\n"));
    assert_non_null(strstr(
        text, "stickyvm_pinned_vms_on_unready_node{node=\"n-lost\",node_status=\"Unknown\"} 1\n"));
    assert_non_null(strstr(
        text, "stickyvm_pinned_vms_on_unready_node{node=\"n-gone\",node_status=\"Missing\"} 1\n"));
    assert_null(strstr(text, "node=\"n-ok\""));
    free(text);
    /* n-down recovers: its series goes, the others stay */
    node_ready(w, KUBE_WATCH_MODIFIED, "n-down", "True");
    text = exposition(w);
    assert_null(strstr(text, "node=\"n-down\""));
    assert_non_null(strstr(text, "node=\"n-lost\""));
    free(text);
    node_ready(w, KUBE_WATCH_MODIFIED, "n-lost", "True");
    node_ready(w, KUBE_WATCH_ADDED, "n-gone", "True");
    text = exposition(w);
    assert_null(strstr(text, "stickyvm_pinned_vms_on_unready_node"));
    free(text);
}

int test_group_pins_status(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reason_comes_from_the_node_not_the_message, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(first_failing_predicate_names_it, setup, teardown),
        cmocka_unit_test_setup_teardown(pods_their_node_could_take_do_not_count, setup, teardown),
        cmocka_unit_test_setup_teardown(unready_nodes_are_named, setup, teardown),
    };
    return cmocka_run_group_tests_name("pins_status", tests, NULL, NULL);
}
