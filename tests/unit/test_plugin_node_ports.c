/*
 * tests/unit/test_plugin_node_ports.c - NodePorts: the host port conflict
 * table of kube-scheduler's node_ports_test.go (0.0.0.0 wildcard rules),
 * PreFilter's Skip, the missing-state error, and the events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "kube/util/buf.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

#define REASON "node(s) didn't have free ports for the requested pod ports"

/* A pod with one container per "PROTO/IP/PORT" entry of a comma list. */
static fw_pod_info *pod_with_ports(const char *name, const char *ports)
{
    kube_buf b = KUBE_BUF_INIT;
    char copy[256], *save = NULL;
    int i = 0;

    kube_buf_printf(&b, "{'metadata':{'name':'%s'},'spec':{'containers':[", name);
    snprintf(copy, sizeof(copy), "%s", ports);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char proto[8] = "", ip[64] = "";
        int port = 0;
        assert_int_equal(sscanf(tok, "%7[^/]/%63[^/]/%d", proto, ip, &port), 3);
        kube_buf_printf(&b,
                        "%s{'name':'c%d','ports':[{'containerPort':%d,'hostPort':%d,"
                        "'protocol':'%s','hostIP':'%s'}]}",
                        i ? "," : "", i, port, port, proto, ip);
        i++;
    }
    kube_buf_puts(&b, "]}}");
    fw_pod_info *pi = tp_pod(b.data);
    kube_buf_free(&b);
    return pi;
}

typedef struct ports_case {
    const char *name;
    const char *pod;      /* wanted ports */
    const char *existing; /* ports of a pod already on the node ("" none) */
    int fits;
} ports_case;

static const ports_case cases[] = {
    {"other port", "UDP/127.0.0.1/8080", "UDP/127.0.0.1/9090", 1},
    {"same udp port", "UDP/127.0.0.1/8080", "UDP/127.0.0.1/8080", 0},
    {"same tcp port", "TCP/127.0.0.1/8080", "TCP/127.0.0.1/8080", 0},
    {"different host ip", "TCP/127.0.0.1/8080", "TCP/127.0.0.2/8080", 1},
    {"different protocol", "UDP/127.0.0.1/8080", "TCP/127.0.0.1/8080", 1},
    {"second udp port conflict", "UDP/127.0.0.1/8000,UDP/127.0.0.1/8080", "UDP/127.0.0.1/8080", 0},
    {"first tcp port conflict", "TCP/127.0.0.1/8001,UDP/127.0.0.1/8080",
     "TCP/127.0.0.1/8001,UDP/127.0.0.1/8081", 0},
    {"first tcp port conflict due to 0.0.0.0 hostIP", "TCP/0.0.0.0/8001", "TCP/127.0.0.1/8001", 0},
    {"TCP hostPort conflict due to 0.0.0.0 hostIP", "TCP/10.0.10.10/8001,TCP/0.0.0.0/8001",
     "TCP/127.0.0.1/8001", 0},
    {"second tcp port conflict to 0.0.0.0 hostIP", "TCP/127.0.0.1/8001", "TCP/0.0.0.0/8001", 0},
    {"second different protocol", "UDP/127.0.0.1/8001", "TCP/0.0.0.0/8001", 1},
    {"UDP hostPort conflict due to 0.0.0.0 hostIP", "UDP/127.0.0.1/8001",
     "TCP/0.0.0.0/8001,UDP/0.0.0.0/8001", 0},
};

static void host_port_conflicts(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_ports, NULL, NULL);

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const ports_case *c = &cases[i];
        fw_pod_info *pod = pod_with_ports("p", c->pod);
        fw_pod_info *existing = pod_with_ports("e", c->existing);
        fw_node_info *ni = tp_node_simple("n1", "{'pods':'10'}", NULL, NULL);
        print_message("case: %s\n", c->name);
        tp_node_add(ni, existing);
        tp_assert_status(tp_filter(p, pod, ni, NULL), c->fits ? FW_SUCCESS : FW_UNSCHEDULABLE,
                         c->fits ? NULL : REASON);
        fw_node_info_free(ni);
        fw_pod_info_unref(existing);
        fw_pod_info_unref(pod);
    }
    tp_plugin_free(p);
}

static void empty_host_ip_and_protocol_default(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_ports, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c',"
                              "'ports':[{'containerPort':80,'hostPort':8080}]}]}}");
    fw_pod_info *tcp_any = pod_with_ports("e", "TCP/127.0.0.1/8080");
    fw_pod_info *udp = pod_with_ports("u", "UDP/127.0.0.1/8080");
    fw_node_info *busy = tp_node_simple("n1", NULL, NULL, NULL);
    fw_node_info *other = tp_node_simple("n2", NULL, NULL, NULL);

    tp_node_add(busy, tcp_any);
    tp_node_add(other, udp);
    /* "" host IP is 0.0.0.0 and "" protocol TCP: conflicts with TCP 127.0.0.1 */
    tp_assert_status(tp_filter(p, pod, busy, NULL), FW_UNSCHEDULABLE, REASON);
    tp_assert_status(tp_filter(p, pod, other, NULL), FW_SUCCESS, NULL);
    fw_node_info_free(busy);
    fw_node_info_free(other);
    fw_pod_info_unref(udp);
    fw_pod_info_unref(tcp_any);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

static void pre_filter_skips_pods_without_host_ports(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_node_ports, NULL, NULL);
    fw_pod_info *none = tp_pod("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c',"
                               "'ports':[{'containerPort':80}]}]}}");
    fw_pod_info *some = pod_with_ports("q", "TCP/127.0.0.1/80");
    fw_node_info *ni = tp_node_simple("n1", NULL, NULL, NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    fw_pre_filter_result *r = NULL;

    tp_assert_status(p->desc->pre_filter(p->self, cs, none, &r), FW_SKIP, NULL);
    assert_null(r);
    /* Filter without PreFilter's state is an error */
    tp_assert_status(p->desc->filter(p->self, cs, some, ni), FW_ERROR,
                     "reading \"PreFilterNodePorts\" from cycleState: not found");
    tp_assert_status(p->desc->pre_filter(p->self, cs, some, &r), FW_SUCCESS, NULL);
    assert_null(r);
    fw_cycle_state *clone = fw_cycle_state_clone(cs);
    tp_assert_status(p->desc->filter(p->self, clone, some, ni), FW_SUCCESS, NULL);
    fw_cycle_state_free(clone);
    fw_cycle_state_free(cs);
    fw_node_info_free(ni);
    fw_pod_info_unref(none);
    fw_pod_info_unref(some);
    tp_plugin_free(p);
}

static void registers_pod_delete_and_node_changes(void **state)
{
    (void)state;
    static const fw_cluster_event want[] = {
        {FW_GVK_POD, FW_ACT_DELETE, NULL},
        {FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, NULL},
    };
    tp_plugin *p = tp_plugin_new(&plugin_node_ports, NULL, NULL);

    tp_assert_events(p, want, 2);
    tp_plugin_free(p);
}

int test_group_plugin_node_ports(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_port_conflicts),
        cmocka_unit_test(empty_host_ip_and_protocol_default),
        cmocka_unit_test(pre_filter_skips_pods_without_host_ports),
        cmocka_unit_test(registers_pod_delete_and_node_changes),
    };
    return cmocka_run_group_tests_name("plugin_node_ports", tests, NULL, NULL);
}
