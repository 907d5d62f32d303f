/*
 * tests/unit/test_launcher_index.c - virt-launcher pods by VMI
 * (scheduler/pins/launcher_index.h) on a fake pod lister: a VMI's pods are
 * found by its namespace/name whatever else the cluster holds, a pod whose
 * controller is not a kubevirt.io VMI is not, a pod that changes owner
 * moves, a deleted pod leaves, and a lister without the index gets it on
 * the first lookup.
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
#include "kube/types/pod.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "pins/launcher_index.h"
#include "unit/test_plugin_util.h"

static const kube_informer_options pods_opts = {.resource = &KUBE_RES_PODS,
                                                .codec = &kube_pod_codec};

/* Pod ns/name controlled by (kind, apiVersion) owner; kind NULL: no owner. */
static kube_object *pod(const char *ns, const char *name, const char *api, const char *kind,
                        const char *owner, int controller)
{
    char json[768], refs[384] = "[]";

    if (kind)
        snprintf(refs, sizeof(refs),
                 "[{'apiVersion':'%s','kind':'%s','name':'%s','uid':'u-%s','controller':%s}]", api,
                 kind, owner, owner, controller ? "true" : "false");
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'%s','namespace':'%s','uid':'p-%s','ownerReferences':%s},"
             "'spec':{'containers':[{'name':'c'}]}}",
             name, ns, name, refs);
    return tp_object(&kube_pod_codec, json);
}

static void apply(kube_lister *l, int type, kube_object *obj)
{
    assert_int_equal(kube_lister_apply(l, type, obj), KUBE_OK);
    kube_object_unref(obj);
}

static void name_of(void *ud, kube_object *obj)
{
    kube_buf_printf(ud, "%s;", obj->meta.name);
}

/* The names of the pods of VMI ns/name, as "a;b;" in no set order. */
static void expect(kube_lister *l, const char *ns, const char *vmi, const char *want)
{
    kube_buf b = KUBE_BUF_INIT;

    kube_buf_puts(&b, "");
    assert_int_equal(sched_pins_launchers_foreach(l, ns, vmi, name_of, &b), KUBE_OK);
    assert_string_equal(b.data, want);
    kube_buf_free(&b);
}

static void finds_a_vmis_pods_only(void **state)
{
    kube_factory *f;
    kube_lister *l;
    (void)state;

    assert_int_equal(kube_factory_new(NULL, &f), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &pods_opts, &l), KUBE_OK);
    assert_int_equal(sched_pins_launcher_index_add(l), KUBE_OK);
    apply(l, KUBE_WATCH_ADDED,
          pod("a", "virt-launcher-vm1-x", "kubevirt.io/v1", "VirtualMachineInstance", "vm1", 1));
    apply(l, KUBE_WATCH_ADDED,
          pod("b", "virt-launcher-vm1-y", "kubevirt.io/v1", "VirtualMachineInstance", "vm1", 1));
    apply(l, KUBE_WATCH_ADDED,
          pod("a", "not-controller", "kubevirt.io/v1", "VirtualMachineInstance", "vm1", 0));
    apply(l, KUBE_WATCH_ADDED,
          pod("a", "other-group", "example.com/v1", "VirtualMachineInstance", "vm1", 1));
    apply(l, KUBE_WATCH_ADDED, pod("a", "replica", "apps/v1", "ReplicaSet", "vm1", 1));
    apply(l, KUBE_WATCH_ADDED, pod("a", "bare", NULL, NULL, NULL, 0));
    for (int i = 0; i < 200; i++) { /* the rest of the cluster */
        char name[32], vmi[32];
        snprintf(name, sizeof(name), "virt-launcher-other-%d", i);
        snprintf(vmi, sizeof(vmi), "other-%d", i);
        apply(l, KUBE_WATCH_ADDED,
              pod("a", name, "kubevirt.io/v1", "VirtualMachineInstance", vmi, 1));
    }
    expect(l, "a", "vm1", "virt-launcher-vm1-x;");
    expect(l, "b", "vm1", "virt-launcher-vm1-y;");
    expect(l, "a", "other-7", "virt-launcher-other-7;");
    expect(l, "a", "none", "");
    /* a second launcher (a migration target) joins, then the pod is
     * recreated under another VMI, then deleted */
    apply(l, KUBE_WATCH_ADDED,
          pod("a", "virt-launcher-vm1-z", "kubevirt.io/v1", "VirtualMachineInstance", "vm1", 1));
    expect(l, "a", "vm1", "virt-launcher-vm1-x;virt-launcher-vm1-z;");
    apply(l, KUBE_WATCH_MODIFIED,
          pod("a", "virt-launcher-vm1-x", "kubevirt.io/v1", "VirtualMachineInstance", "vm2", 1));
    expect(l, "a", "vm1", "virt-launcher-vm1-z;");
    expect(l, "a", "vm2", "virt-launcher-vm1-x;");
    apply(l, KUBE_WATCH_DELETED,
          pod("a", "virt-launcher-vm1-z", "kubevirt.io/v1", "VirtualMachineInstance", "vm1", 1));
    expect(l, "a", "vm1", "");
    kube_factory_free(f);
}

/* A pod lister built without the index (as a test fixture may) gets it on
 * the first lookup, from what it holds. */
static void lookup_adds_a_missing_index(void **state)
{
    kube_factory *f;
    kube_lister *l;
    (void)state;

    assert_int_equal(kube_factory_new(NULL, &f), KUBE_OK);
    assert_int_equal(kube_factory_lister(f, &pods_opts, &l), KUBE_OK);
    apply(l, KUBE_WATCH_ADDED,
          pod("a", "virt-launcher-vm1-x", "kubevirt.io/v1", "VirtualMachineInstance", "vm1", 1));
    expect(l, "a", "vm1", "virt-launcher-vm1-x;");
    assert_int_equal(sched_pins_launcher_index_add(l), KUBE_OK); /* already there */
    expect(NULL, "a", "vm1", "");                                /* nothing listed */
    kube_factory_free(f);
}

int test_group_launcher_index(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_a_vmis_pods_only),
        cmocka_unit_test(lookup_adds_a_missing_index),
    };
    return cmocka_run_group_tests_name("launcher_index", tests, NULL, NULL);
}
