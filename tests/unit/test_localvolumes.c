/*
 * tests/unit/test_localvolumes.c - kube/types/localvolumes.h, the rule the
 * API server's /pin guard and the scheduler's node-loss unpin share: a
 * VM's claims (from JSON and from the decoded VM and VMI, alike), a PV's
 * home node, whether a PV allows a node, and the conflict's message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "kube/types/kubevirt.h"
#include "kube/types/localvolumes.h"
#include "kube/types/node.h"
#include "kube/types/storage.h"
#include "kube/util/errors.h"
#include "unit/test_plugin_util.h"

#define VM_JSON                                                                   \
    "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\","             \
    "\"metadata\":{\"name\":\"vm\",\"namespace\":\"default\"},"                   \
    "\"spec\":{\"template\":{\"spec\":{\"volumes\":["                             \
    "{\"name\":\"root\",\"dataVolume\":{\"name\":\"root-dv\"}},"                  \
    "{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"data-pvc\"}}," \
    "{\"name\":\"cloudinit\",\"cloudInitNoCloud\":{}}]}}}}"
#define VMI_JSON                                                                        \
    "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","           \
    "\"metadata\":{\"name\":\"vm\",\"namespace\":\"default\"},"                         \
    "\"spec\":{\"volumes\":[{\"name\":\"root\",\"dataVolume\":{\"name\":\"root-dv\"}}," \
    "{\"name\":\"hp1\",\"persistentVolumeClaim\":{\"claimName\":\"hot-1\"}}]},"         \
    "\"status\":{\"volumeStatus\":[{\"name\":\"hp2\",\"hotplugVolume\":{},"             \
    "\"persistentVolumeClaimInfo\":{\"claimName\":\"hot-2\"}},{\"name\":\"cloudinit\"}]}}"

static void expect_four_claims(const kube_vm_claims *cl)
{
    assert_int_equal(cl->n, 4);
    assert_string_equal(cl->items[0].claim, "root-dv");
    assert_string_equal(cl->items[0].volume, "root");
    assert_string_equal(cl->items[1].claim, "data-pvc");
    assert_string_equal(cl->items[2].claim, "hot-1");
    assert_string_equal(cl->items[3].claim, "hot-2");
    assert_string_equal(cl->items[3].volume, "hp2");
}

static void collects_claims_from_json(void **state)
{
    cJSON *vm = cJSON_Parse(VM_JSON), *vmi = cJSON_Parse(VMI_JSON);
    kube_vm_claims cl = {.n = 0};
    (void)state;

    kube_vm_claims_collect(vm, vmi, &cl);
    expect_four_claims(&cl);
    cJSON_Delete(vm);
    cJSON_Delete(vmi);
}

/* The decoders keep the claims: the scheduler's cached VM and VMI give
 * the same list as the API server's JSON. */
static void decoded_objects_keep_their_claims(void **state)
{
    kube_object *vm = tp_object(&kube_vm_codec, VM_JSON),
                *vmi = tp_object(&kube_vmi_codec, VMI_JSON);
    kube_vm_claims cl = {.n = 0};
    (void)state;

    assert_int_equal(kube_vm_from(vm)->n_claims, 2);
    assert_int_equal(kube_vmi_from(vmi)->n_claims, 3);
    kube_vm_claims_of(kube_vm_from(vm), kube_vmi_from(vmi), &cl);
    expect_four_claims(&cl);
    cl.n = 0;
    kube_vm_claims_of(NULL, NULL, &cl);
    assert_int_equal(cl.n, 0);
    kube_object_unref(vm);
    kube_object_unref(vmi);
}

static void claims_are_capped(void **state)
{
    kube_vm_claims cl = {.n = 0};
    char names[KUBE_VM_MAX_CLAIMS + 1][16];
    (void)state;

    for (int i = 0; i <= KUBE_VM_MAX_CLAIMS; i++) {
        snprintf(names[i], sizeof(names[i]), "c%d", i);
        kube_vm_claims_add(&cl, NULL, names[i]);
    }
    kube_vm_claims_add(&cl, "again", "c0");
    kube_vm_claims_add(&cl, "none", NULL);
    assert_int_equal(cl.n, KUBE_VM_MAX_CLAIMS);
    assert_string_equal(cl.items[0].volume, "c0");
}

static kube_object *pv_object(const char *affinity)
{
    char json[1024];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv\"},"
             "\"spec\":{%s}}",
             affinity);
    return tp_object(&kube_pv_codec, json);
}

#define AFFINITY(term) "\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[" term "]}}"

static kube_object *node_object(const char *name, const char *zone)
{
    char json[512];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
             "\"kubernetes.io/hostname\":\"%s\",\"topology.kubernetes.io/zone\":\"%s\"}}}",
             name, name, zone);
    return tp_object(&kube_node_codec, json);
}

static void finds_the_node_a_volume_lives_on(void **state)
{
    kube_object *pv =
        pv_object(AFFINITY("{\"matchExpressions\":[{\"key\":\"kubernetes.io/"
                           "hostname\",\"operator\":\"In\",\"values\":[\"node-1\"]}]}"));
    (void)state;

    assert_string_equal(kube_pv_home(kube_pv_from(pv)), "node-1");
    kube_object_unref(pv);
    pv = pv_object(AFFINITY("{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                            "\"values\":[\"node-7\"]}]}"));
    assert_string_equal(kube_pv_home(kube_pv_from(pv)), "node-7");
    kube_object_unref(pv);
    pv = pv_object(AFFINITY("{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\","
                            "\"operator\":\"In\",\"values\":[\"z1\"]}]}"));
    assert_null(kube_pv_home(kube_pv_from(pv)));
    kube_object_unref(pv);
    pv = pv_object("\"capacity\":{\"storage\":\"1Gi\"}");
    assert_null(kube_pv_home(kube_pv_from(pv)));
    kube_object_unref(pv);
}

/* A local PV allows its node only; a zonal PV every node of its zone; a
 * PV without node affinity every node. */
static void pv_allows_nodes_by_their_labels(void **state)
{
    kube_object *n1 = node_object("node-1", "z1"), *n2 = node_object("node-2", "z1");
    kube_object *n3 = node_object("node-3", "z2");
    kube_object *local = pv_object(
        AFFINITY("{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
                 "\"values\":[\"node-1\"]}]}"));
    kube_object *zonal = pv_object(AFFINITY(
        "{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\","
        "\"values\":[\"z1\"]}]}"));
    kube_object *free_pv = pv_object("\"capacity\":{\"storage\":\"1Gi\"}");
    (void)state;

    assert_true(kube_pv_allows_node(kube_pv_from(local), kube_node_from(n1)));
    assert_false(kube_pv_allows_node(kube_pv_from(local), kube_node_from(n2)));
    assert_true(kube_pv_allows_node(kube_pv_from(zonal), kube_node_from(n2)));
    assert_false(kube_pv_allows_node(kube_pv_from(zonal), kube_node_from(n3)));
    assert_true(kube_pv_allows_node(kube_pv_from(free_pv), kube_node_from(n3)));
    kube_object *objs[] = {n1, n2, n3, local, zonal, free_pv};
    for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
        kube_object_unref(objs[i]);
}

static void describes_the_conflict(void **state)
{
    kube_object *local = pv_object(
        AFFINITY("{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
                 "\"values\":[\"node-1\"]}]}"));
    kube_object *zonal = pv_object(AFFINITY(
        "{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\","
        "\"values\":[\"z1\"]}]}"));
    kube_vm_claim cl = {"data", "data-pvc"};
    char why[512];
    (void)state;

    kube_pv_conflict_describe(&cl, kube_pv_from(local), "node-2", why, sizeof(why));
    assert_string_equal(why, "volume \"data\" (PersistentVolumeClaim \"data-pvc\", "
                             "PersistentVolume \"pv\") lives on node node-1, and its node "
                             "affinity does not allow node node-2");
    kube_pv_conflict_describe(&cl, kube_pv_from(zonal), "node-3", why, sizeof(why));
    assert_non_null(strstr(why, "lives on other nodes, and its node affinity does not allow "
                                "node node-3"));
    kube_object_unref(local);
    kube_object_unref(zonal);
}

int test_group_localvolumes(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(collects_claims_from_json),
        cmocka_unit_test(decoded_objects_keep_their_claims),
        cmocka_unit_test(claims_are_capped),
        cmocka_unit_test(finds_the_node_a_volume_lives_on),
        cmocka_unit_test(pv_allows_nodes_by_their_labels),
        cmocka_unit_test(describes_the_conflict),
    };
    return cmocka_run_group_tests_name("localvolumes", tests, NULL, NULL);
}
