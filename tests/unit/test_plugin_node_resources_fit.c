/*
 * tests/unit/test_plugin_node_resources_fit.c - NodeResourcesFit: the
 * Filter tables of kube-scheduler v1.28's fit_test.go (TestEnoughRequests
 * with init containers, overhead, extended/hugepages/kubernetes.io
 * resources and ignored resources; TestNotEnoughRequests; storage), the
 * score tables of least_allocated_test.go, most_allocated_test.go and
 * requested_to_capacity_ratio_test.go (including the bin packing ones),
 * args defaulting and validation, and the events.
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
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

/* ---- Filter ---- */

/* makeAllocatableResources(10, 20, 32, 5, 20, 5) */
#define NODE_ALLOC                                                  \
    "{'cpu':'10m','memory':'20','pods':'32','example.com/aaa':'5'," \
    "'ephemeral-storage':'20','hugepages-2Mi':'5'}"

/* init containers (a JSON array of ResourceLists) and overhead as spec members */
static const char *extra_spec(const char *init, const char *overhead)
{
    static char buf[2048];
    kube_buf b = KUBE_BUF_INIT;
    cJSON *arr, *it;
    int i = 0;

    if (init) {
        arr = cJSON_Parse(tp_json(init));
        assert_non_null(arr);
        kube_buf_puts(&b, ",'initContainers':[");
        cJSON_ArrayForEach(it, arr)
        {
            char *r = cJSON_PrintUnformatted(it);
            kube_buf_printf(&b, "%s{'name':'i%d','resources':{'requests':%s}}", i ? "," : "", i, r);
            free(r);
            i++;
        }
        kube_buf_puts(&b, "]");
        cJSON_Delete(arr);
    }
    if (overhead)
        kube_buf_printf(&b, ",'overhead':%s", overhead);
    snprintf(buf, sizeof(buf), "%s", b.data ? b.data : "");
    kube_buf_free(&b);
    return buf;
}

typedef struct fit_case {
    const char *name;
    const char *pod;      /* containers' requests */
    const char *init;     /* init containers' requests, or NULL */
    const char *overhead; /* or NULL */
    const char *existing; /* requests of the pod already on the node */
    const char *args;     /* NodeResourcesFitArgs or NULL */
    const char *want;     /* reasons, NULL: fits */
} fit_case;

#define R(cpu, mem) "{'cpu':'" cpu "','memory':'" mem "'}"
#define RA(cpu, mem, res, n) "{'cpu':'" cpu "','memory':'" mem "','" res "':'" n "'}"
#define ZERO "{'cpu':'0','memory':'0','pods':'0','ephemeral-storage':'0'}"
#define AAA "example.com/aaa"
#define BBB "example.com/bbb"
#define HP "hugepages-2Mi"

static const fit_case enough_cases[] = {
    {"no resources requested always fits", "[]", NULL, NULL, "[" R("10m", "20") "]", NULL, NULL},
    {"too many resources fails", "[" R("1m", "1") "]", NULL, NULL, "[" R("10m", "20") "]", NULL,
     "Insufficient cpu, Insufficient memory"},
    {"too many resources fails due to init container cpu", "[" R("1m", "1") "]",
     "[" R("3m", "1") "]", NULL, "[" R("8m", "19") "]", NULL, "Insufficient cpu"},
    {"too many resources fails due to highest init container cpu", "[" R("1m", "1") "]",
     "[" R("3m", "1") "," R("2m", "1") "]", NULL, "[" R("8m", "19") "]", NULL, "Insufficient cpu"},
    {"too many resources fails due to init container memory", "[" R("1m", "1") "]",
     "[" R("1m", "3") "]", NULL, "[" R("9m", "19") "]", NULL, "Insufficient memory"},
    {"too many resources fails due to highest init container memory", "[" R("1m", "1") "]",
     "[" R("1m", "3") "," R("1m", "2") "]", NULL, "[" R("9m", "19") "]", NULL,
     "Insufficient memory"},
    {"init container fits because it's the max, not sum", "[" R("1m", "1") "]",
     "[" R("1m", "1") "]", NULL, "[" R("9m", "19") "]", NULL, NULL},
    {"multiple init containers fit because it's the max, not sum", "[" R("1m", "1") "]",
     "[" R("1m", "1") "," R("1m", "1") "]", NULL, "[" R("9m", "19") "]", NULL, NULL},
    {"both resources fit", "[" R("1m", "1") "]", NULL, NULL, "[" R("5m", "5") "]", NULL, NULL},
    {"one resource memory fits", "[" R("2m", "1") "]", NULL, NULL, "[" R("9m", "5") "]", NULL,
     "Insufficient cpu"},
    {"one resource cpu fits", "[" R("1m", "2") "]", NULL, NULL, "[" R("5m", "19") "]", NULL,
     "Insufficient memory"},
    {"equal edge case", "[" R("5m", "1") "]", NULL, NULL, "[" R("5m", "19") "]", NULL, NULL},
    {"equal edge case for init container", "[" R("4m", "1") "]", "[" R("5m", "1") "]", NULL,
     "[" R("5m", "19") "]", NULL, NULL},
    {"extended resource fits", "[{'" AAA "':'1'}]", NULL, NULL, "[" ZERO "]", NULL, NULL},
    {"extended resource fits for init container", "[" ZERO "]", "[{'" AAA "':'1'}]", NULL,
     "[" ZERO "]", NULL, NULL},
    {"extended resource capacity enforced", "[" RA("1m", "1", AAA, "10") "]", NULL, NULL,
     "[" RA("0", "0", AAA, "0") "]", NULL, "Insufficient " AAA},
    {"extended resource capacity enforced for init container", "[" ZERO "]",
     "[" RA("1m", "1", AAA, "10") "]", NULL, "[" RA("0", "0", AAA, "0") "]", NULL,
     "Insufficient " AAA},
    {"extended resource allocatable enforced", "[" RA("1m", "1", AAA, "1") "]", NULL, NULL,
     "[" RA("0", "0", AAA, "5") "]", NULL, "Insufficient " AAA},
    {"extended resource allocatable enforced for init container", "[" ZERO "]",
     "[" RA("1m", "1", AAA, "1") "]", NULL, "[" RA("0", "0", AAA, "5") "]", NULL,
     "Insufficient " AAA},
    {"extended resource allocatable enforced for multiple containers",
     "[" RA("1m", "1", AAA, "3") "," RA("1m", "1", AAA, "3") "]", NULL, NULL,
     "[" RA("0", "0", AAA, "2") "]", NULL, "Insufficient " AAA},
    {"extended resource allocatable admits multiple init containers", "[" ZERO "]",
     "[" RA("1m", "1", AAA, "3") "," RA("1m", "1", AAA, "3") "]", NULL,
     "[" RA("0", "0", AAA, "2") "]", NULL, NULL},
    {"extended resource allocatable enforced for multiple init containers", "[" ZERO "]",
     "[" RA("1m", "1", AAA, "6") "," RA("1m", "1", AAA, "3") "]", NULL,
     "[" RA("0", "0", AAA, "2") "]", NULL, "Insufficient " AAA},
    {"extended resource allocatable enforced for unknown resource", "[" RA("1m", "1", BBB, "1") "]",
     NULL, NULL, "[" R("0", "0") "]", NULL, "Insufficient " BBB},
    {"extended resource allocatable enforced for unknown resource for init container", "[" ZERO "]",
     "[" RA("1m", "1", BBB, "1") "]", NULL, "[" R("0", "0") "]", NULL, "Insufficient " BBB},
    {"kubernetes.io resource capacity enforced",
     "[" RA("1m", "1", "kubernetes.io/something", "10") "]", NULL, NULL, "[" R("0", "0") "]", NULL,
     "Insufficient kubernetes.io/something"},
    {"kubernetes.io resource capacity enforced for init container", "[" ZERO "]",
     "[" RA("1m", "1", "subdomain.kubernetes.io/something", "10") "]", NULL, "[" R("0", "0") "]",
     NULL, "Insufficient subdomain.kubernetes.io/something"},
    {"hugepages resource capacity enforced", "[" RA("1m", "1", HP, "10") "]", NULL, NULL,
     "[" RA("0", "0", HP, "0") "]", NULL, "Insufficient " HP},
    {"hugepages resource capacity enforced for init container", "[" ZERO "]",
     "[" RA("1m", "1", HP, "10") "]", NULL, "[" RA("0", "0", HP, "0") "]", NULL,
     "Insufficient " HP},
    {"hugepages resource allocatable enforced for multiple containers",
     "[" RA("1m", "1", HP, "3") "," RA("1m", "1", HP, "3") "]", NULL, NULL,
     "[" RA("0", "0", HP, "2") "]", NULL, "Insufficient " HP},
    {"skip checking ignored extended resource", "[" RA("1m", "1", BBB, "1") "]", NULL, NULL,
     "[" R("0", "0") "]", "{'ignoredResources':['" BBB "']}", NULL},
    {"resources + pod overhead fits", "[" R("1m", "1") "]", NULL, "{'cpu':'3m','memory':'13'}",
     "[" R("5m", "5") "]", NULL, NULL},
    {"requests + overhead does not fit for memory", "[" R("1m", "1") "]", NULL,
     "{'cpu':'1m','memory':'15'}", "[" R("5m", "5") "]", NULL, "Insufficient memory"},
    {"skip checking resource request with quantity zero", "[" RA("1m", "1", AAA, "0") "]", NULL,
     NULL, "[" RA("0", "0", AAA, "6") "]", NULL, NULL},
    {"skip checking extended resource request with quantity zero via resource groups",
     "[" RA("1m", "1", BBB, "1") "]", NULL, NULL, "[" R("0", "0") "]",
     "{'ignoredResourceGroups':['example.com']}", NULL},
    {"resource groups do not ignore native resources", "[" RA("1m", "1", HP, "10") "]", NULL, NULL,
     "[" R("0", "0") "]", "{'ignoredResourceGroups':['hugepages-2Mi']}", "Insufficient " HP},
    {"a zero cpu request is not checked on an overcommitted node", "[{'cpu':'0','memory':'1'}]",
     NULL, NULL, "[" R("11m", "21") "]", NULL, "Insufficient memory"},
};

static void run_fit_case(const fit_case *c, const char *alloc, int *idx)
{
    char name[32];
    tp_plugin *p = tp_plugin_new(&plugin_node_resources_fit, c->args, NULL);
    fw_pod_info *pod = tp_pod_requests("pod", c->pod, extra_spec(c->init, c->overhead));
    snprintf(name, sizeof(name), "existing%d", (*idx)++);
    fw_pod_info *existing = tp_pod_requests(name, c->existing, NULL);
    fw_node_info *ni = tp_node_simple("node", alloc, NULL, NULL);

    print_message("case: %s\n", c->name);
    tp_node_add(ni, existing);
    tp_assert_status(tp_filter(p, pod, ni, NULL), c->want ? FW_UNSCHEDULABLE : FW_SUCCESS, c->want);
    /* noderesources.Fits (the node pre-check's) ignores nothing: it agrees
     * with Filter when no resource is ignored. */
    if (!c->args)
        assert_int_equal(plugin_node_resources_fits(pod, ni), c->want == NULL);
    fw_node_info_free(ni);
    fw_pod_info_unref(existing);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

static void enough_requests(void **state)
{
    (void)state;
    int idx = 0;
    for (size_t i = 0; i < sizeof(enough_cases) / sizeof(enough_cases[0]); i++)
        run_fit_case(&enough_cases[i], NODE_ALLOC, &idx);
}

static const fit_case not_enough_cases[] = {
    {"even without specified resources predicate fails when there's no space for additional "
     "pod",
     "[]", NULL, NULL, "[" R("10m", "20") "]", NULL, "Too many pods"},
    {"even if both resources fit predicate fails when there's no space for additional pod",
     "[" R("1m", "1") "]", NULL, NULL, "[" R("5m", "5") "]", NULL, "Too many pods"},
    {"even for equal edge case predicate fails when there's no space for additional pod",
     "[" R("5m", "1") "]", NULL, NULL, "[" R("5m", "19") "]", NULL, "Too many pods"},
    {"even for equal edge case predicate fails when there's no space for additional pod due "
     "to init container",
     "[" R("5m", "1") "]", "[" R("5m", "1") "]", NULL, "[" R("5m", "19") "]", NULL,
     "Too many pods"},
    {"too many pods and too much cpu", "[" R("6m", "1") "]", NULL, NULL, "[" R("5m", "19") "]",
     NULL, "Too many pods, Insufficient cpu"},
};

static void not_enough_requests(void **state)
{
    (void)state;
    int idx = 0;
    for (size_t i = 0; i < sizeof(not_enough_cases) / sizeof(not_enough_cases[0]); i++)
        run_fit_case(&not_enough_cases[i], "{'cpu':'10m','memory':'20','pods':'1'}", &idx);
}

static const fit_case storage_cases[] = {
    {"due to container scratch disk", "[" R("1m", "1") "]", NULL, NULL, "[" R("10m", "10") "]",
     NULL, "Insufficient cpu"},
    {"pod fit", "[" R("1m", "1") "]", NULL, NULL, "[" R("2m", "10") "]", NULL, NULL},
    {"storage ephemeral local storage request exceeds allocatable", "[{'ephemeral-storage':'25'}]",
     NULL, NULL, "[" R("2m", "2") "]", NULL, "Insufficient ephemeral-storage"},
    {"pod fits", "[{'ephemeral-storage':'10'}]", NULL, NULL, "[" R("2m", "2") "]", NULL, NULL},
};

static void storage_requests(void **state)
{
    (void)state;
    int idx = 0;
    for (size_t i = 0; i < sizeof(storage_cases) / sizeof(storage_cases[0]); i++)
        run_fit_case(&storage_cases[i], NODE_ALLOC, &idx);
}

static void kubevirt_devices(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_resources_fit, NULL, NULL);
    fw_pod_info *launcher =
        tp_pod_requests("virt-launcher",
                        "[{'cpu':'1','memory':'1Gi','devices.kubevirt.io/kvm':'1',"
                        "'devices.kubevirt.io/tun':'1'}]",
                        NULL);
    fw_node_info *no_kvm =
        tp_node_simple("n1", "{'cpu':'4','memory':'8Gi','pods':'110'}", NULL, NULL);
    fw_node_info *kvm =
        tp_node_simple("n2",
                       "{'cpu':'4','memory':'8Gi','pods':'110',"
                       "'devices.kubevirt.io/kvm':'1k','devices.kubevirt.io/tun':'1k'}",
                       NULL, NULL);

    tp_assert_status(tp_filter(p, launcher, no_kvm, NULL), FW_UNSCHEDULABLE,
                     "Insufficient devices.kubevirt.io/kvm, Insufficient devices.kubevirt.io/tun");
    tp_assert_status(tp_filter(p, launcher, kvm, NULL), FW_SUCCESS, NULL);
    fw_node_info_free(no_kvm);
    fw_node_info_free(kvm);
    fw_pod_info_unref(launcher);
    tp_plugin_free(p);
}

static void filter_needs_pre_filter(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_resources_fit, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'p'},'spec':{}}");
    fw_node_info *ni = tp_node_simple("n", NULL, NULL, NULL);
    fw_cycle_state *cs = fw_cycle_state_new();

    tp_assert_status(p->desc->filter(p->self, cs, pod, ni), FW_ERROR,
                     "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
    fw_cycle_state_free(cs);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

/* v1.28 (SidecarContainers gate off): a pod with a restartable init
 * container is rejected in PreFilter; an ordinary init container is not. */
static void restartable_init_container_rejected(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_resources_fit, NULL, NULL);
    fw_node_info *ni = tp_node_simple("n", "{'cpu':'4','memory':'4Gi','pods':'10'}", NULL, NULL);
    fw_pod_info *sidecar =
        tp_pod_requests("sidecar", "[{'cpu':'1'}]",
                        ",'initContainers':[{'name':'s','restartPolicy':'Always','resources':{}}]");
    fw_pod_info *plain = tp_pod_requests("plain", "[{'cpu':'1'}]",
                                         ",'initContainers':[{'name':'i','resources':{}}]");

    tp_assert_status(tp_filter(p, sidecar, ni, NULL), FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                     "Pod has a restartable init container and the SidecarContainers feature "
                     "is disabled");
    tp_assert_status(tp_filter(p, plain, ni, NULL), FW_SUCCESS, NULL);
    fw_pod_info_unref(plain);
    fw_pod_info_unref(sidecar);
    fw_node_info_free(ni);
    tp_plugin_free(p);
}

/* ---- Score ---- */

#define DEFAULT_RES "[{'name':'cpu','weight':1},{'name':'memory','weight':1}]"
#define EXT "abc.com/xyz"
#define EXT_RES \
    "[{'name':'cpu','weight':1},{'name':'memory','weight':1},{'name':'" EXT "','weight':1}]"

typedef struct score_case {
    const char *name;
    const char *pod;         /* containers' requests */
    const char *alloc[2];    /* node allocatable */
    const char *existing[2]; /* per node: containers' requests of one existing pod, or NULL */
    const char *args;
    int64_t want[2];
} score_case;

#define LEAST(res) "{'scoringStrategy':{'type':'LeastAllocated','resources':" res "}}"
#define MOST(res) "{'scoringStrategy':{'type':'MostAllocated','resources':" res "}}"
#define POD_3000_5000 "[" R("1000", "2000") "," R("2000", "3000") "]"

static const score_case least_cases[] = {
    {"nothing scheduled, nothing requested",
     "[]",
     {R("4000", "10000"), R("4000", "10000")},
     {NULL, NULL},
     LEAST(DEFAULT_RES),
     {100, 100}},
    {"nothing scheduled, resources requested, differently sized nodes",
     POD_3000_5000,
     {R("4000", "10000"), R("6000", "10000")},
     {NULL, NULL},
     LEAST(DEFAULT_RES),
     {37, 50}},
    {"no resources requested, pods scheduled",
     "[]",
     {R("4000", "10000"), R("4000", "10000")},
     {"[]", "[]"},
     LEAST(DEFAULT_RES),
     {100, 100}},
    {"no resources requested, pods scheduled with resources",
     "[]",
     {R("10000", "20000"), R("10000", "20000")},
     {"[" R("3000", "0") "," R("3000", "0") "]", "[" R("3000", "0") "," R("3000", "5000") "]"},
     LEAST(DEFAULT_RES),
     {70, 57}},
    {"resources requested, pods scheduled with resources",
     POD_3000_5000,
     {R("10000", "20000"), R("10000", "20000")},
     {"[" R("3000", "0") "]", "[" R("3000", "5000") "]"},
     LEAST(DEFAULT_RES),
     {57, 45}},
    {"resources requested, pods scheduled with resources, differently sized nodes",
     POD_3000_5000,
     {R("10000", "20000"), R("10000", "50000")},
     {"[" R("3000", "0") "]", "[" R("3000", "5000") "]"},
     LEAST(DEFAULT_RES),
     {57, 60}},
    {"requested resources exceed node capacity",
     "[" R("3000", "0") "]",
     {R("4000", "10000"), R("4000", "10000")},
     {"[" R("3000", "0") "]", "[" R("3000", "5000") "]"},
     LEAST(DEFAULT_RES),
     {50, 25}},
    {"zero node resources, pods scheduled with resources",
     "[]",
     {"{}", "{}"},
     {"[" R("3000", "0") "]", "[" R("3000", "5000") "]"},
     LEAST(DEFAULT_RES),
     {0, 0}},
    {"different weight on cpu and memory",
     POD_3000_5000,
     {R("4000", "10000"), R("6000", "10000")},
     {NULL, NULL},
     LEAST("[{'name':'memory','weight':2},{'name':'cpu','weight':1}]"),
     {41, 50}},
    {"bypass extended resource if the pod does not request",
     POD_3000_5000,
     {R("6000", "10000"), RA("6000", "10000", EXT, "4")},
     {NULL, NULL},
     LEAST(EXT_RES),
     {50, 50}},
    {"honor extended resource if the pod requests",
     "[" RA("3000", "5000", EXT, "2") "]",
     {RA("6000", "10000", EXT, "4"), RA("6000", "10000", EXT, "10")},
     {NULL, NULL},
     LEAST(EXT_RES),
     {50, 60}},
    {"if the node doesn't have a resource",
     "[" R("3000", "4000") "]",
     {R("6000", "10000"), RA("6000", "10000", EXT, "4")},
     {NULL, NULL},
     LEAST("[{'name':'" EXT
           "','weight':2},{'name':'cpu','weight':1},{'name':'memory','weight':1}]"),
     {55, 55}},
    {"default args are LeastAllocated on cpu and memory",
     POD_3000_5000,
     {R("4000", "10000"), R("6000", "10000")},
     {NULL, NULL},
     NULL,
     {37, 50}},
};

static const score_case most_cases[] = {
    {"nothing scheduled, nothing requested",
     "[]",
     {R("4000", "10000"), R("4000", "10000")},
     {NULL, NULL},
     MOST(DEFAULT_RES),
     {0, 0}},
    {"nothing scheduled, resources requested, differently sized nodes",
     POD_3000_5000,
     {R("4000", "10000"), R("6000", "10000")},
     {NULL, NULL},
     MOST(DEFAULT_RES),
     {62, 50}},
    {"no resources requested, pods scheduled with resources",
     "[]",
     {R("10000", "20000"), R("10000", "20000")},
     {"[" R("3000", "0") "," R("3000", "0") "]", "[" R("3000", "0") "," R("3000", "5000") "]"},
     MOST(DEFAULT_RES),
     {30, 42}},
    {"resources requested, pods scheduled with resources",
     POD_3000_5000,
     {R("10000", "20000"), R("10000", "20000")},
     {"[" R("3000", "0") "]", "[" R("3000", "5000") "]"},
     MOST(DEFAULT_RES),
     {42, 55}},
    {"resources requested equal node capacity",
     "[" R("2000", "4000") "," R("3000", "5000") "]",
     {R("5000", "10000"), R("10000", "9000")},
     {NULL, NULL},
     MOST(DEFAULT_RES),
     {95, 75}},
    {"different weight on cpu and memory",
     POD_3000_5000,
     {R("4000", "10000"), R("6000", "10000")},
     {NULL, NULL},
     MOST("[{'name':'memory','weight':2},{'name':'cpu','weight':1}]"),
     {58, 50}},
    {"no resources requested, pods scheduled, nonzero request for resource",
     "[{}]",
     {R("250m", "1000Mi"), R("250m", "1000Mi")},
     {"[{},{}]", NULL},
     MOST(DEFAULT_RES),
     {80, 30}},
    {"bypass extended resource if the pod does not request",
     POD_3000_5000,
     {R("6000", "10000"), RA("6000", "10000", EXT, "4")},
     {NULL, NULL},
     MOST(EXT_RES),
     {50, 50}},
    {"honor extended resource if the pod request",
     "[" RA("3000", "5000", EXT, "2") "]",
     {RA("6000", "10000", EXT, "4"), RA("6000", "10000", EXT, "10")},
     {NULL, NULL},
     MOST(EXT_RES),
     {50, 40}},
    {"if the node doesn't have a resource",
     "[" R("3000", "4000") "]",
     {R("6000", "10000"), RA("6000", "10000", EXT, "4")},
     {NULL, NULL},
     MOST("[{'name':'" EXT "','weight':2},{'name':'cpu','weight':1},{'name':'memory','weight':1}]"),
     {45, 45}},
};

#define SHAPE_10_0 "[{'utilization':0,'score':10},{'utilization':100,'score':0}]"
#define SHAPE_0_1 "[{'utilization':0,'score':0},{'utilization':100,'score':1}]"
#define RTCR(res, shape)                                                         \
    "{'scoringStrategy':{'type':'RequestedToCapacityRatio','resources':" res "," \
    "'requestedToCapacityRatio':{'shape':" shape "}}}"
#define FOO "intel.com/foo"
#define BAR "intel.com/bar"
#define NODE_FOO(n) "{'cpu':'4000m','memory':'10000Mi','" FOO "':'" n "'}"
#define NODE_FOO_BAR(f, b) "{'cpu':'4000m','memory':'10000Mi','" FOO "':'" f "','" BAR "':'" b "'}"
#define FOO1 RTCR("[{'name':'" FOO "','weight':1}]", SHAPE_0_1)
#define FOO3_BAR5 RTCR("[{'name':'" FOO "','weight':3},{'name':'" BAR "','weight':5}]", SHAPE_0_1)

static const score_case ratio_cases[] = {
    {"nothing scheduled, nothing requested (least requested nodes have priority)",
     "[]",
     {R("4000", "10000"), R("4000", "10000")},
     {"[]", NULL},
     RTCR(DEFAULT_RES, SHAPE_10_0),
     {100, 100}},
    {"nothing scheduled, resources requested, differently sized nodes",
     POD_3000_5000,
     {R("4000", "10000"), R("6000", "10000")},
     {"[]", NULL},
     RTCR(DEFAULT_RES, SHAPE_10_0),
     {38, 50}},
    {"no resources requested, pods scheduled with resources",
     "[]",
     {R("4000", "10000"), R("6000", "10000")},
     {"[" R("3000", "5000") "]", "[" R("3000", "5000") "]"},
     RTCR(DEFAULT_RES, SHAPE_10_0),
     {38, 50}},
    /* TestResourceBinPackingSingleExtended */
    {"single extended: nothing requested",
     "[]",
     {NODE_FOO("8"), NODE_FOO("4")},
     {NULL, NULL},
     FOO1,
     {0, 0}},
    {"single extended: pods scheduled with less resources",
     "[{'" FOO "':'2'}]",
     {NODE_FOO("8"), NODE_FOO("4")},
     {"[]", NULL},
     FOO1,
     {2, 5}},
    {"single extended: on node with existing pod running",
     "[{'" FOO "':'2'}]",
     {NODE_FOO("8"), NODE_FOO("4")},
     {NULL, "[{'" FOO "':'2'}]"},
     FOO1,
     {2, 10}},
    {"single extended: pods scheduled with more resources",
     "[{'" FOO "':'4'}]",
     {NODE_FOO("8"), NODE_FOO("4")},
     {"[]", NULL},
     FOO1,
     {5, 10}},
    /* TestResourceBinPackingMultipleExtended */
    {"multiple extended: nothing requested",
     "[]",
     {NODE_FOO_BAR("8", "4"), NODE_FOO_BAR("4", "8")},
     {NULL, NULL},
     FOO3_BAR5,
     {0, 0}},
    {"multiple extended: pods scheduled with less resources",
     "[{'" FOO "':'2','" BAR "':'2'}]",
     {NODE_FOO_BAR("8", "4"), NODE_FOO_BAR("4", "8")},
     {"[]", NULL},
     FOO3_BAR5,
     {4, 3}},
    {"multiple extended: on node with existing pod running",
     "[{'" FOO "':'2','" BAR "':'2'}]",
     {NODE_FOO_BAR("8", "4"), NODE_FOO_BAR("4", "8")},
     {NULL, "[{'" FOO "':'4','" BAR "':'2'}]"},
     FOO3_BAR5,
     {4, 7}},
    {"multiple extended: pods scheduled with more resources",
     "[{'" FOO "':'4','" BAR "':'2'}]",
     {NODE_FOO_BAR("8", "4"), NODE_FOO_BAR("4", "8")},
     {"[]", NULL},
     FOO3_BAR5,
     {5, 5}},
};

static void run_score_cases(const score_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        const score_case *c = &cases[i];
        fw_node_info *nodes[2];
        fw_pod_info *existing[2] = {NULL, NULL};
        int64_t got[2];
        char name[32];

        print_message("case: %s\n", c->name);
        tp_plugin *p = tp_plugin_new(&plugin_node_resources_fit, c->args, NULL);
        fw_pod_info *pod = tp_pod_requests("pod", c->pod, NULL);
        for (int k = 0; k < 2; k++) {
            char alloc[256];
            snprintf(name, sizeof(name), "node%d", k + 1);
            /* the pods resource, so nodes look like real ones; not scored */
            snprintf(alloc, sizeof(alloc), "%.*s,'pods':'110'}", (int)strlen(c->alloc[k]) - 1,
                     c->alloc[k]);
            if (strcmp(c->alloc[k], "{}") == 0)
                snprintf(alloc, sizeof(alloc), "{}");
            nodes[k] = tp_node_simple(name, alloc, NULL, NULL);
            if (c->existing[k]) {
                snprintf(name, sizeof(name), "existing%d", k + 1);
                existing[k] = tp_pod_requests(name, c->existing[k], NULL);
                tp_node_add(nodes[k], existing[k]);
            }
        }
        assert_int_equal(tp_score(p, pod, nodes, 2, 1, got), FW_SUCCESS);
        for (int k = 0; k < 2; k++) {
            assert_int_equal(got[k], c->want[k]);
            fw_node_info_free(nodes[k]);
            fw_pod_info_unref(existing[k]);
        }
        fw_pod_info_unref(pod);
        tp_plugin_free(p);
    }
}

static void least_allocated(void **state)
{
    (void)state;
    run_score_cases(least_cases, sizeof(least_cases) / sizeof(least_cases[0]));
}

static void most_allocated(void **state)
{
    (void)state;
    run_score_cases(most_cases, sizeof(most_cases) / sizeof(most_cases[0]));
}

static void requested_to_capacity_ratio(void **state)
{
    (void)state;
    run_score_cases(ratio_cases, sizeof(ratio_cases) / sizeof(ratio_cases[0]));
}

static void score_without_pre_score_and_errors(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_resources_fit, NULL, NULL);
    fw_pod_info *pod = tp_pod_requests("pod", POD_3000_5000, NULL);
    fw_node_info *ni = tp_node_simple("n", R("4000", "10000"), NULL, NULL);
    fw_node_info *empty = fw_node_info_new();
    fw_cycle_state *cs = fw_cycle_state_new();
    int64_t s = -1;

    /* without PreScore the request is computed on the spot */
    tp_assert_status(p->desc->score(p->self, cs, pod, ni, &s), FW_SUCCESS, NULL);
    assert_int_equal(s, 37);
    tp_assert_status(p->desc->score(p->self, cs, pod, empty, &s), FW_ERROR, "node not found");
    /* the list form: the same score; a node without its Node fails it all,
     * which sends the framework node by node (to the error above) */
    const fw_node_info *list[2] = {ni, empty};
    fw_node_score scores[2] = {{NULL, -1}, {NULL, -1}};
    tp_assert_status(p->desc->score_nodes(p->self, cs, pod, list, 1, scores), FW_SUCCESS, NULL);
    assert_int_equal(scores[0].score, 37);
    tp_assert_status(p->desc->score_nodes(p->self, cs, pod, list, 2, scores), FW_ERROR,
                     "node not found");
    fw_cycle_state_free(cs);
    fw_node_info_free(empty);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

/* ---- Args ---- */

static void args_defaults(void **state)
{
    (void)state;
    char *s = tp_defaulted(&plugin_node_resources_fit, NULL);
    assert_string_equal(s, tp_json("{'scoringStrategy':{'type':'LeastAllocated','resources':"
                                   "[{'name':'cpu','weight':1},{'name':'memory','weight':1}]}}"));
    free(s);
    s = tp_defaulted(&plugin_node_resources_fit,
                     "{'ignoredResources':['example.com/foo'],'scoringStrategy':{'type':"
                     "'MostAllocated','resources':[{'name':'cpu'},{'name':'memory','weight':3}]}}");
    assert_string_equal(s, tp_json("{'ignoredResources':['example.com/foo'],'scoringStrategy':"
                                   "{'type':'MostAllocated','resources':[{'name':'cpu','weight':1},"
                                   "{'name':'memory','weight':3}]}}"));
    free(s);
    s = tp_defaulted(&plugin_node_resources_fit, "{'scoringStrategy':{'type':'MostAllocated'}}");
    assert_string_equal(s, tp_json("{'scoringStrategy':{'type':'MostAllocated','resources':"
                                   "[{'name':'cpu','weight':1},{'name':'memory','weight':1}]}}"));
    free(s);
    s = tp_defaulted(&plugin_node_resources_fit, RTCR("[]", SHAPE_10_0));
    assert_string_equal(s,
                        tp_json("{'scoringStrategy':{'type':'RequestedToCapacityRatio',"
                                "'resources':[{'name':'cpu','weight':1},{'name':'memory',"
                                "'weight':1}],'requestedToCapacityRatio':{'shape':"
                                "[{'utilization':0,'score':10},{'utilization':100,'score':0}]}}}"));
    free(s);
}

typedef struct args_case {
    const char *args;
    const char *want;
} args_case;

static const args_case bad_args[] = {
    {LEAST("[{'name':'memory','weight':-1},{'name':'cpu','weight':1}]"),
     "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in "
     "valid range (0, 100]"},
    {LEAST("[{'name':'memory','weight':1},{'name':'cpu','weight':101}]"),
     "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in "
     "valid range (0, 100]"},
    {"{'scoringStrategy':{'type':'Invalid'}}",
     "scoringStrategy.type: Unsupported value: \"Invalid\": supported values: "
     "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
    {"{'scoringStrategy':{}}",
     "scoringStrategy.type: Unsupported value: \"\": supported values: \"LeastAllocated\", "
     "\"MostAllocated\", \"RequestedToCapacityRatio\""},
    {RTCR(DEFAULT_RES, "[]"), "scoringStrategy.shape: Required value: at least one point must "
                              "be specified"},
    {RTCR(DEFAULT_RES, "[{'utilization':10,'score':1},{'utilization':10,'score':2}]"),
     "scoringStrategy.shape[1].utilization: Invalid value: 10: should be greater than previous "
     "element"},
    {RTCR(DEFAULT_RES, "[{'utilization':-10,'score':11},{'utilization':110,'score':2}]"),
     "[scoringStrategy.shape[0].utilization: Invalid value: -10: not in valid range [0, 100], "
     "scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10], "
     "scoringStrategy.shape[1].utilization: Invalid value: 110: not in valid range [0, 100]]"},
    {"{'scoringStrategy':{'type':'RequestedToCapacityRatio'}}",
     "scoringStrategy.requestedToCapacityRatio: Required value: a shape is required by the "
     "RequestedToCapacityRatio strategy"},
    {"{'ignoredResourceGroups':['example.com/aaa']}",
     "ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name can't "
     "contain '/'"},
    {"{'ignoredResourceGroups':['a/b/']}",
     "[ignoredResourceGroups[0]: Invalid value: \"a/b/\": resource group name can't contain "
     "'/', ignoredResourceGroups[0]: Invalid value: \"a/b/\": a qualified name must consist of "
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
     "(e.g. 'example.com/MyName')]"},
    {"{'ignoredResources':['-bad']}",
     "ignoredResources[0]: Invalid value: \"-bad\": name part must consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {"{'ignoredResources':'x'}", "ignoredResources: expected an array"},
    {"{'scoringStrategy':{'type':'LeastAllocated','resources':[{'name':'cpu','weight':'1'}]}}",
     "scoringStrategy.resources[0].weight: expected an integer"},
    {"{'foo':1}", "unknown field \"foo\""},
};

static void args_validation(void **state)
{
    (void)state;
    char err[2048];
    for (size_t i = 0; i < sizeof(bad_args) / sizeof(bad_args[0]); i++) {
        print_message("args: %s\n", bad_args[i].args);
        assert_int_equal(
            tp_default_args(&plugin_node_resources_fit, bad_args[i].args, err, sizeof(err)),
            KUBE_ECONFIG);
        assert_string_equal(err, bad_args[i].want);
    }
    /* weight 0 defaults to 1; ignored groups without '/' are fine */
    assert_int_equal(tp_default_args(&plugin_node_resources_fit,
                                     LEAST("[{'name':'memory','weight':0}]"), err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(tp_default_args(&plugin_node_resources_fit,
                                     "{'ignoredResourceGroups':['example.com']}", err, sizeof(err)),
                     KUBE_OK);
}

static void registers_pod_delete_and_node_changes(void **state)
{
    (void)state;
    static const fw_cluster_event want[] = {
        {FW_GVK_POD, FW_ACT_DELETE, NULL},
        {FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, NULL},
    };
    tp_plugin *p = tp_plugin_new(&plugin_node_resources_fit, NULL, NULL);

    tp_assert_events(p, want, 2);
    tp_plugin_free(p);
}

int test_group_plugin_node_resources_fit(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enough_requests),
        cmocka_unit_test(not_enough_requests),
        cmocka_unit_test(storage_requests),
        cmocka_unit_test(kubevirt_devices),
        cmocka_unit_test(filter_needs_pre_filter),
        cmocka_unit_test(restartable_init_container_rejected),
        cmocka_unit_test(least_allocated),
        cmocka_unit_test(most_allocated),
        cmocka_unit_test(requested_to_capacity_ratio),
        cmocka_unit_test(score_without_pre_score_and_errors),
        cmocka_unit_test(args_defaults),
        cmocka_unit_test(args_validation),
        cmocka_unit_test(registers_pod_delete_and_node_changes),
    };
    return cmocka_run_group_tests_name("plugin_node_resources_fit", tests, NULL, NULL);
}
