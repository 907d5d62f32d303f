/*
 * tests/unit/test_storage_decode.c - kube/types/storage.h and kube/types/pdb.h: the
 * decoders of PersistentVolume, PersistentVolumeClaim, StorageClass,
 * CSINode and policy/v1 PodDisruptionBudget on objects shaped as
 * kube-apiserver v1.23 returns them (managedFields, finalizers, status),
 * their defaults and rejections of malformed input, and the volume helpers
 * (storage class lookup, claimRef matching, node affinity, allowed
 * topologies, CSINode drivers, disrupted pods).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/types/pdb.h"
#include "kube/types/storage.h"
#include "kube/types/storage_testing.h"

/* ------------------------------------------------------------------ */
/* Objects as kube-apiserver v1.23 serves them                         */
/* ------------------------------------------------------------------ */

static const char PV_LOCAL[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"annotations\":"
    "{\"pv.kubernetes.io/bound-by-controller\":\"yes\"},\"creationTimestamp\":"
    "\"2023-05-02T10:11:12Z\",\"finalizers\":[\"kubernetes.io/pv-protection\"],\"labels\":"
    "{\"topology.kubernetes.io/zone\":\"us-east-1a\"},\"managedFields\":[{\"apiVersion\":\"v1\","
    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:local\":{}}},\"manager\":"
    "\"kubectl-create\",\"operation\":\"Update\",\"time\":\"2023-05-02T10:11:12Z\"}],\"name\":"
    "\"local-pv-1\",\"resourceVersion\":\"4711\",\"uid\":"
    "\"5b8f6e2a-7c1d-4e3f-9a0b-1c2d3e4f5a6b\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
    "\"capacity\":{\"storage\":\"100Gi\"},\"claimRef\":{\"apiVersion\":\"v1\",\"kind\":"
    "\"PersistentVolumeClaim\",\"name\":\"vm-disk\",\"namespace\":\"vms\",\"resourceVersion\":"
    "\"4700\",\"uid\":\"0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9\"},\"local\":{\"path\":"
    "\"/mnt/disks/ssd1\"},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
    "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":"
    "[\"node-1\"]}]}]}},\"persistentVolumeReclaimPolicy\":\"Retain\",\"storageClassName\":"
    "\"local-storage\",\"volumeMode\":\"Block\"},\"status\":{\"phase\":\"Bound\"}}";

static const char PV_CSI[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"annotations\":{"
    "\"pv.kubernetes.io/provisioned-by\":\"ebs.csi.aws.com\",\"volume.beta.kubernetes.io/"
    "storage-class\":\"gp3-beta\"},\"name\":\"pvc-0a1b\",\"resourceVersion\":\"90\",\"uid\":"
    "\"u-1\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\",\"ReadOnlyMany\",\"ReadWriteOncePod\"],"
    "\"capacity\":{\"storage\":\"1536Mi\"},\"csi\":{\"driver\":\"ebs.csi.aws.com\",\"fsType\":"
    "\"ext4\",\"volumeAttributes\":{\"storage.kubernetes.io/csiProvisionerIdentity\":\"1-2\"},"
    "\"volumeHandle\":\"vol-0123456789abcdef0\"},\"persistentVolumeReclaimPolicy\":\"Delete\","
    "\"storageClassName\":\"gp3\",\"volumeMode\":\"Filesystem\"},\"status\":{\"phase\":"
    "\"Available\"}}";

static const char PVC_BOUND[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"annotations\":{"
    "\"pv.kubernetes.io/bind-completed\":\"yes\",\"pv.kubernetes.io/bound-by-controller\":"
    "\"yes\",\"volume.kubernetes.io/selected-node\":\"node-1\"},\"creationTimestamp\":"
    "\"2023-05-02T10:11:00Z\",\"finalizers\":[\"kubernetes.io/pvc-protection\"],\"name\":"
    "\"vm-disk\",\"namespace\":\"vms\",\"resourceVersion\":\"4712\",\"uid\":"
    "\"0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
    "\"resources\":{\"requests\":{\"storage\":\"50Gi\"}},\"selector\":{\"matchLabels\":{"
    "\"disk\":\"ssd\"}},\"storageClassName\":\"local-storage\",\"volumeMode\":\"Block\","
    "\"volumeName\":\"local-pv-1\"},\"status\":{\"accessModes\":[\"ReadWriteOnce\"],"
    "\"capacity\":{\"storage\":\"100Gi\"},\"phase\":\"Bound\"}}";

static const char PVC_PENDING[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"scratch\","
    "\"namespace\":\"default\",\"uid\":\"u-2\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
    "\"resources\":{}},\"status\":{\"phase\":\"Pending\"}}";

static const char SC[] =
    "{\"allowVolumeExpansion\":true,\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":"
    "\"topology.kubernetes.io/zone\",\"values\":[\"us-east-1a\",\"us-east-1b\"]}]}],"
    "\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{\"annotations\":"
    "{\"storageclass.kubernetes.io/is-default-class\":\"true\"},\"name\":\"gp3\","
    "\"resourceVersion\":\"301\",\"uid\":\"u-3\"},\"parameters\":{\"type\":\"gp3\"},"
    "\"provisioner\":\"ebs.csi.aws.com\",\"reclaimPolicy\":\"Delete\",\"volumeBindingMode\":"
    "\"WaitForFirstConsumer\"}";

static const char CSINODE[] =
    "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{\"annotations\":{"
    "\"storage.alpha.kubernetes.io/migrated-plugins\":\"kubernetes.io/aws-ebs,kubernetes.io/"
    "gce-pd\"},\"name\":\"node-1\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Node\","
    "\"name\":\"node-1\",\"uid\":\"n-1\"}],\"resourceVersion\":\"77\",\"uid\":\"u-4\"},\"spec\":{"
    "\"drivers\":[{\"allocatable\":{\"count\":25},\"name\":\"ebs.csi.aws.com\",\"nodeID\":"
    "\"i-0abc\",\"topologyKeys\":[\"topology.ebs.csi.aws.com/zone\"]},{\"name\":"
    "\"csi.example.com\",\"nodeID\":\"node-1\",\"topologyKeys\":null}]}}";

static const char PDB[] =
    "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"generation\":"
    "1,\"name\":\"vm-pdb\",\"namespace\":\"vms\",\"resourceVersion\":\"555\",\"uid\":\"u-5\"},"
    "\"spec\":{\"minAvailable\":\"50%\",\"selector\":{\"matchLabels\":{\"app\":\"vm\"}}},"
    "\"status\":{\"conditions\":[{\"lastTransitionTime\":\"2023-05-02T10:12:00Z\",\"message\":"
    "\"\",\"observedGeneration\":1,\"reason\":\"SufficientPods\",\"status\":\"True\",\"type\":"
    "\"DisruptionAllowed\"}],\"currentHealthy\":3,\"desiredHealthy\":2,\"disruptedPods\":{"
    "\"vm-a\":\"2023-05-02T10:13:00Z\"},\"disruptionsAllowed\":1,\"expectedPods\":3,"
    "\"observedGeneration\":1}}";

static kube_object *decode(const kube_codec *codec, const char *json)
{
    cJSON *j = cJSON_Parse(json);
    kube_object *obj = NULL;

    assert_non_null(j);
    assert_int_equal(codec->decode(j, &obj), KUBE_OK);
    cJSON_Delete(j);
    return obj;
}

static int decode_rc(const kube_codec *codec, const char *json)
{
    cJSON *j = cJSON_Parse(json);
    kube_object *obj = (kube_object *)&obj;
    int rc;

    assert_non_null(j);
    rc = codec->decode(j, &obj);
    if (rc == KUBE_OK)
        kube_object_unref(obj);
    else
        assert_null(obj);
    cJSON_Delete(j);
    return rc;
}

static int64_t quantity_value(const kube_quantity *q)
{
    int64_t v;
    assert_int_equal(kube_quantity_value(q, &v), KUBE_OK);
    return v;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

static void test_pv_local(void **state)
{
    kube_object *obj = decode(&kube_pv_codec, PV_LOCAL);
    const kube_pv *pv = kube_pv_from(obj);
    const kube_kv node1[] = {{"kubernetes.io/hostname", "node-1"}};
    const kube_kv node2[] = {{"kubernetes.io/hostname", "node-2"}};

    assert_non_null(pv);
    assert_null(kube_pvc_from(obj));
    assert_string_equal(pv->base.meta.name, "local-pv-1");
    assert_string_equal(pv->base.meta.resource_version, "4711");
    assert_string_equal(pv->storage_class, "local-storage");
    assert_string_equal(kube_pv_class(pv), "local-storage");
    assert_int_equal(quantity_value(&pv->capacity), 100LL << 30);
    assert_int_equal(pv->access_modes, KUBE_ACCESS_RWO);
    assert_int_equal(pv->volume_mode, KUBE_VOLUME_BLOCK);
    assert_non_null(pv->claim_ref);
    assert_string_equal(pv->claim_ref->namespace_, "vms");
    assert_string_equal(pv->claim_ref->name, "vm-disk");
    assert_string_equal(pv->claim_ref->uid, "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9");
    assert_string_equal(pv->phase, "Bound");
    assert_int_equal(pv->source, KUBE_PV_OTHER);
    assert_non_null(pv->node_affinity);
    assert_true(kube_pv_node_affinity_matches(pv, node1, 1));
    assert_false(kube_pv_node_affinity_matches(pv, node2, 1));
    assert_false(kube_pv_node_affinity_matches(pv, NULL, 0));
    kube_object_unref(obj);
}

static void test_pv_csi(void **state)
{
    kube_object *obj = decode(&kube_pv_codec, PV_CSI);
    const kube_pv *pv = kube_pv_from(obj);

    assert_int_equal(pv->source, KUBE_PV_CSI);
    assert_string_equal(pv->driver, "ebs.csi.aws.com");
    assert_string_equal(pv->volume_handle, "vol-0123456789abcdef0");
    assert_int_equal(pv->access_modes, KUBE_ACCESS_RWO | KUBE_ACCESS_ROX | KUBE_ACCESS_RWOP);
    assert_int_equal(pv->volume_mode, KUBE_VOLUME_FILESYSTEM);
    assert_int_equal(quantity_value(&pv->capacity), 1536LL << 20);
    assert_null(pv->claim_ref);
    assert_null(pv->node_affinity);
    assert_true(kube_pv_node_affinity_matches(pv, NULL, 0));
    /* the beta annotation wins over spec.storageClassName */
    assert_string_equal(pv->storage_class, "gp3");
    assert_string_equal(kube_pv_class(pv), "gp3-beta");
    kube_object_unref(obj);
}

static void test_pvc(void **state)
{
    kube_object *obj = decode(&kube_pvc_codec, PVC_BOUND);
    const kube_pvc *pvc = kube_pvc_from(obj);
    const kube_kv ssd[] = {{"disk", "ssd"}}, hdd[] = {{"disk", "hdd"}};

    assert_non_null(pvc);
    assert_string_equal(pvc->base.meta.namespace_, "vms");
    assert_string_equal(kube_pvc_class(pvc), "local-storage");
    assert_string_equal(pvc->volume_name, "local-pv-1");
    assert_int_equal(pvc->access_modes, KUBE_ACCESS_RWO);
    assert_int_equal(pvc->volume_mode, KUBE_VOLUME_BLOCK);
    assert_true(pvc->has_request);
    assert_int_equal(quantity_value(&pvc->request), 50LL << 30);
    assert_non_null(pvc->selector);
    assert_true(kube_label_selector_matches(pvc->selector, ssd, 1));
    assert_false(kube_label_selector_matches(pvc->selector, hdd, 1));
    assert_string_equal(pvc->phase, "Bound");
    assert_string_equal(kube_meta_annotation(&pvc->base.meta, KUBE_ANN_SELECTED_NODE), "node-1");
    assert_non_null(kube_meta_annotation(&pvc->base.meta, KUBE_ANN_BIND_COMPLETED));
    kube_object_unref(obj);

    obj = decode(&kube_pvc_codec, PVC_PENDING);
    pvc = kube_pvc_from(obj);
    assert_string_equal(pvc->storage_class, "");
    assert_string_equal(pvc->volume_name, "");
    assert_false(pvc->has_request);
    assert_int_equal(quantity_value(&pvc->request), 0);
    assert_null(pvc->selector);
    assert_int_equal(pvc->volume_mode, KUBE_VOLUME_FILESYSTEM);
    assert_string_equal(pvc->phase, "Pending");
    kube_object_unref(obj);
}

static void test_claim_ref_matches(void **state)
{
    kube_object *pv_obj = decode(&kube_pv_codec, PV_LOCAL);
    kube_object *pvc_obj = decode(&kube_pvc_codec, PVC_BOUND);
    const kube_pv *pv = kube_pv_from(pv_obj);
    const kube_pvc *pvc = kube_pvc_from(pvc_obj);
    kube_claim_ref ref = {"vms", "vm-disk", ""};

    assert_true(kube_claim_ref_matches(pv->claim_ref, pvc));
    assert_true(kube_claim_ref_matches(&ref, pvc)); /* no uid: any claim of that name */
    ref.uid = "another";
    assert_false(kube_claim_ref_matches(&ref, pvc));
    ref.uid = "";
    ref.namespace_ = "default";
    assert_false(kube_claim_ref_matches(&ref, pvc));
    assert_false(kube_claim_ref_matches(NULL, pvc));
    kube_object_unref(pv_obj);
    kube_object_unref(pvc_obj);
}

static void test_storage_class(void **state)
{
    kube_object *obj = decode(&kube_storage_class_codec, SC);
    const kube_storage_class *sc = kube_storage_class_from(obj);
    const kube_kv a[] = {{"topology.kubernetes.io/zone", "us-east-1a"}};
    const kube_kv c[] = {{"topology.kubernetes.io/zone", "us-east-1c"}};

    assert_string_equal(sc->provisioner, "ebs.csi.aws.com");
    assert_int_equal(sc->binding_mode, KUBE_BINDING_WAIT_FOR_FIRST_CONSUMER);
    assert_int_equal(sc->n_allowed_topologies, 1);
    assert_true(kube_storage_class_allows(sc, a, 1));
    assert_false(kube_storage_class_allows(sc, c, 1));
    assert_false(kube_storage_class_allows(sc, NULL, 0));
    kube_object_unref(obj);

    obj = decode(&kube_storage_class_codec,
                 "{\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"plain\"},\"provisioner\":"
                 "\"kubernetes.io/no-provisioner\"}");
    sc = kube_storage_class_from(obj);
    assert_int_equal(sc->binding_mode, KUBE_BINDING_UNSET);
    assert_true(kube_storage_class_allows(sc, NULL, 0)); /* no restriction */
    kube_object_unref(obj);
    obj = decode(&kube_storage_class_codec,
                 "{\"metadata\":{\"name\":\"odd\"},\"provisioner\":\"p\",\"volumeBindingMode\":"
                 "\"Later\",\"allowedTopologies\":[{}]}");
    sc = kube_storage_class_from(obj);
    assert_int_equal(sc->binding_mode, KUBE_BINDING_UNKNOWN);
    assert_false(kube_storage_class_allows(sc, a, 1)); /* an empty term matches nothing */
    kube_object_unref(obj);
}

static void test_csi_node(void **state)
{
    kube_object *obj = decode(&kube_csi_node_codec, CSINODE);
    const kube_csi_node *cn = kube_csi_node_from(obj);
    const kube_csi_driver_info *d;

    assert_string_equal(cn->base.meta.name, "node-1");
    assert_int_equal(cn->n_drivers, 2);
    assert_non_null(d = kube_csi_node_driver(cn, "ebs.csi.aws.com"));
    assert_true(d->has_count);
    assert_int_equal(d->count, 25);
    assert_string_equal(d->node_id, "i-0abc");
    assert_int_equal(d->n_topology_keys, 1);
    assert_string_equal(d->topology_keys[0], "topology.ebs.csi.aws.com/zone");
    assert_non_null(d = kube_csi_node_driver(cn, "csi.example.com"));
    assert_false(d->has_count);
    assert_int_equal(d->n_topology_keys, 0);
    assert_null(kube_csi_node_driver(cn, "other"));
    assert_null(kube_csi_node_driver(NULL, "other"));
    assert_string_equal(kube_meta_annotation(&cn->base.meta, KUBE_ANN_MIGRATED_PLUGINS),
                        "kubernetes.io/aws-ebs,kubernetes.io/gce-pd");
    kube_object_unref(obj);
}

static void test_pdb(void **state)
{
    kube_object *obj = decode(&kube_pdb_codec, PDB);
    const kube_pdb *pdb = kube_pdb_from(obj);
    const kube_kv vm[] = {{"app", "vm"}};

    assert_non_null(pdb);
    assert_string_equal(pdb->base.meta.namespace_, "vms");
    assert_non_null(pdb->selector);
    assert_true(kube_label_selector_matches(pdb->selector, vm, 1));
    assert_int_equal(pdb->min_available.type, KUBE_IOS_STRING);
    assert_string_equal(pdb->min_available.str_val, "50%");
    assert_int_equal(pdb->max_unavailable.type, KUBE_IOS_UNSET);
    assert_int_equal(pdb->disruptions_allowed, 1);
    assert_int_equal(pdb->n_disrupted_pods, 1);
    assert_true(kube_pdb_has_disrupted_pod(pdb, "vm-a"));
    assert_false(kube_pdb_has_disrupted_pod(pdb, "vm-b"));
    kube_object_unref(obj);

    obj = decode(&kube_pdb_codec, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":"
                                  "{\"maxUnavailable\":1}}");
    pdb = kube_pdb_from(obj);
    assert_null(pdb->selector);
    assert_int_equal(pdb->max_unavailable.type, KUBE_IOS_INT);
    assert_int_equal(pdb->max_unavailable.int_val, 1);
    assert_int_equal(pdb->disruptions_allowed, 0);
    assert_int_equal(pdb->n_disrupted_pods, 0);
    kube_object_unref(obj);
}

/* Malformed input is rejected, never crashes. */
static void test_malformed(void **state)
{
    static const struct {
        const kube_codec *codec;
        const char *json;
    } bad[] = {
        {&kube_pv_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"accessModes\":\"RWO\"}}"},
        {&kube_pv_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"capacity\":{\"storage\":"
                         "\"ten\"}}}"},
        {&kube_pv_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"claimRef\":\"c\"}}"},
        {&kube_pv_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"csi\":[]}}"},
        {&kube_pv_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"nodeAffinity\":{"
                         "\"required\":{\"nodeSelectorTerms\":7}}}}"},
        {&kube_pv_codec, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}"},
        {&kube_pv_codec, "{\"metadata\":{}}"},
        {&kube_pvc_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"volumeMode\":1}}"},
        {&kube_pvc_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"selector\":[]}}"},
        {&kube_pvc_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"resources\":{\"requests\":"
                          "{\"storage\":{}}}}}"},
        {&kube_storage_class_codec, "{\"metadata\":{\"name\":\"x\"},\"volumeBindingMode\":2}"},
        {&kube_storage_class_codec, "{\"metadata\":{\"name\":\"x\"},\"allowedTopologies\":"
                                    "[{\"matchLabelExpressions\":[5]}]}"},
        {&kube_csi_node_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"drivers\":[1]}}"},
        {&kube_csi_node_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"drivers\":[{"
                               "\"name\":\"d\",\"allocatable\":{\"count\":1.5}}]}}"},
        {&kube_pdb_codec, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"minAvailable\":{}}}"},
        {&kube_pdb_codec, "{\"metadata\":{\"name\":\"x\"},\"status\":{\"disruptionsAllowed\":"
                          "\"1\"}}"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        print_message("case %zu\n", i);
        assert_int_equal(decode_rc(bad[i].codec, bad[i].json), KUBE_EPARSE);
    }
}

static void test_resources_and_modes(void **state)
{
    kube_buf b = KUBE_BUF_INIT;

    assert_int_equal(kube_path(&b, &KUBE_RES_PVS, "ignored", "pv-1", "status"), KUBE_OK);
    assert_string_equal(b.data, "/api/v1/persistentvolumes/pv-1/status");
    kube_buf_reset(&b);
    assert_int_equal(kube_path(&b, &KUBE_RES_PVCS, "vms", "c", NULL), KUBE_OK);
    assert_string_equal(b.data, "/api/v1/namespaces/vms/persistentvolumeclaims/c");
    kube_buf_reset(&b);
    assert_int_equal(kube_path(&b, &KUBE_RES_STORAGECLASSES, NULL, NULL, NULL), KUBE_OK);
    assert_string_equal(b.data, "/apis/storage.k8s.io/v1/storageclasses");
    kube_buf_reset(&b);
    assert_int_equal(kube_path(&b, &KUBE_RES_CSINODES, NULL, "n", NULL), KUBE_OK);
    assert_string_equal(b.data, "/apis/storage.k8s.io/v1/csinodes/n");
    kube_buf_reset(&b);
    assert_int_equal(kube_path(&b, &KUBE_RES_PDBS, "d", NULL, NULL), KUBE_OK);
    assert_string_equal(b.data, "/apis/policy/v1/namespaces/d/poddisruptionbudgets");
    kube_buf_free(&b);
    assert_int_equal(kube_access_mode_parse("ReadWriteOncePod"), KUBE_ACCESS_RWOP);
    assert_int_equal(kube_access_mode_parse("ReadWriteMany"), KUBE_ACCESS_RWX);
    assert_int_equal(kube_access_mode_parse("readwriteonce"), 0);
}

int test_group_storage_decode(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pv_local),
        cmocka_unit_test(test_pv_csi),
        cmocka_unit_test(test_pvc),
        cmocka_unit_test(test_claim_ref_matches),
        cmocka_unit_test(test_storage_class),
        cmocka_unit_test(test_csi_node),
        cmocka_unit_test(test_pdb),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_resources_and_modes),
    };
    return cmocka_run_group_tests_name("storage_decode", tests, NULL, NULL);
}
