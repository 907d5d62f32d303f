/*
 * tests/unit/test_plugin_image_locality.c - ImageLocality: the score
 * table of kube-scheduler v1.28's image_locality_test.go (v1.28 formula:
 * thresholds 23 MiB .. 1000 MiB x number of containers, sizes scaled by
 * spread; init containers not counted), image name normalisation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"
#include "framework/types_testing.h"

#define MB (1024LL * 1024)

typedef struct node_images {
    const char *names[4]; /* NULL-terminated */
    int64_t size_mb;
} node_images;

static int has_name(const node_images *imgs, const char *name)
{
    for (; imgs && imgs->size_mb; imgs++)
        for (size_t j = 0; imgs->names[j]; j++)
            if (strcmp(imgs->names[j], name) == 0)
                return 1;
    return 0;
}

/* Sets the image states of nodes the way the cache does: one state per
 * name, num_nodes = how many of the nodes list that name. */
static void set_image_states(fw_node_info **nodes, const node_images *const *images, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fw_image_state states[16];
        fw_image_states *s = NULL;
        size_t k = 0;
        for (const node_images *img = images[i]; img && img->size_mb; img++)
            for (size_t j = 0; img->names[j]; j++) {
                int count = 0;
                for (size_t o = 0; o < n; o++)
                    count += has_name(images[o], img->names[j]);
                states[k++] = (fw_image_state){img->names[j], img->size_mb * MB, count};
            }
        assert_int_equal(fw_image_states_new(states, k, &s), KUBE_OK);
        fw_node_info_set_image_states(nodes[i], s);
        fw_image_states_unref(s);
    }
}

/* A pod whose containers / init containers use these images (JSON arrays,
 * single-quoted). */
static fw_pod_info *pod_with_images(const char *containers, const char *init)
{
    kube_buf b = KUBE_BUF_INIT;
    const char *lists[2] = {containers, init}, *keys[2] = {"containers", "initContainers"};
    int j = 0;

    kube_buf_puts(&b, "{'metadata':{'name':'p'},'spec':{");
    for (int l = 0; l < 2; l++) {
        cJSON *arr, *it;
        if (!lists[l])
            continue;
        arr = cJSON_Parse(tp_json(lists[l]));
        assert_non_null(arr);
        kube_buf_printf(&b, "%s'%s':[", l ? "," : "", keys[l]);
        cJSON_ArrayForEach(it, arr)
        {
            kube_buf_printf(&b, "%s{'name':'c%d','image':'%s'}", it != arr->child ? "," : "", j,
                            it->valuestring);
            j++;
        }
        kube_buf_puts(&b, "]");
        cJSON_Delete(arr);
    }
    kube_buf_puts(&b, "}}");
    fw_pod_info *pi = tp_pod(b.data);
    kube_buf_free(&b);
    return pi;
}

static const node_images node_40_300_2000[] = {
    {{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1", NULL}, 40},
    {{"gcr.io/300:latest", "gcr.io/300:v1", NULL}, 300},
    {{"gcr.io/2000:latest", NULL}, 2000},
    {{NULL}, 0},
};
static const node_images node_250_10[] = {
    {{"gcr.io/250:latest", NULL}, 250},
    {{"gcr.io/10:latest", "gcr.io/10:v1", NULL}, 10},
    {{NULL}, 0},
};
static const node_images node_600_40_900[] = {
    {{"gcr.io/600:latest", NULL}, 600},
    {{"gcr.io/40:latest", NULL}, 40},
    {{"gcr.io/900:latest", NULL}, 900},
    {{NULL}, 0},
};
static const node_images node_300_600_900[] = {
    {{"gcr.io/300:latest", NULL}, 300},
    {{"gcr.io/600:latest", NULL}, 600},
    {{"gcr.io/900:latest", NULL}, 900},
    {{NULL}, 0},
};
static const node_images node_registry_port[] = {
    {{"localhost:5000/img:latest", "registry/app@sha256:abc", NULL}, 900},
    {{NULL}, 0},
};

typedef struct il_case {
    const char *name;
    const char *containers; /* JSON array of images */
    const char *init;       /* init containers' images, or NULL */
    size_t n;               /* nodes */
    const node_images *nodes[3];
    int64_t want[3];
} il_case;

static const il_case cases[] = {
    /* 40MB/2 < 23MB; 100 * (250MB/2 - 23MB) / (1000MB * 2 - 23MB) = 5 */
    {"two images spread on two nodes, prefer the larger image one",
     "['gcr.io/40','gcr.io/250']",
     NULL,
     2,
     {node_40_300_2000, node_250_10, NULL},
     {0, 5}},
    /* 100 * ((40MB + 300MB)/2 - 23MB) / (1000MB * 2 - 23MB) = 7 */
    {"two images on one node, prefer this node",
     "['gcr.io/40','gcr.io/300']",
     NULL,
     2,
     {node_40_300_2000, node_250_10, NULL},
     {7, 0}},
    /* 100 * (2000MB/2 - 23MB) / (1000MB * 2 - 23MB) = 49 */
    {"if exceed limit, use limit",
     "['gcr.io/10','gcr.io/2000']",
     NULL,
     2,
     {node_40_300_2000, node_250_10, NULL},
     {49, 0}},
    /* 100 * (2000MB/3 - 23MB) / (1000MB * 2 - 23MB) = 32 */
    {"if exceed limit, use limit (with node which has no images present)",
     "['gcr.io/10','gcr.io/2000']",
     NULL,
     3,
     {node_40_300_2000, node_250_10, NULL},
     {32, 0, 0}},
    /* node1: (600 + 900)MB, node2: (300/2 + 600 + 900)MB over (3000 - 23)MB */
    {"pod with multiple large images, node2 is preferred",
     "['gcr.io/300','gcr.io/600','gcr.io/900']",
     NULL,
     2,
     {node_600_40_900, node_300_600_900, NULL},
     {49, 54}},
    /* init containers are not counted in v1.28 */
    {"init container images are ignored",
     "['gcr.io/10']",
     "['gcr.io/2000']",
     2,
     {node_40_300_2000, node_250_10, NULL},
     {0, 0}},
    /* "localhost:5000/img" gets ":latest"; a digest keeps its name */
    {"normalised names",
     "['localhost:5000/img','registry/app@sha256:abc']",
     NULL,
     2,
     {node_registry_port, node_250_10, NULL},
     {44, 0}},
    {"explicit tag",
     "['gcr.io/300:v1','gcr.io/40:latest']",
     NULL,
     2,
     {node_40_300_2000, node_250_10, NULL},
     {7, 0}},
};

static void score_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const il_case *c = &cases[i];
        fw_node_info *nodes[3];
        fw_snapshot *snap = NULL;
        int64_t got[3];
        char name[32];

        print_message("case: %s\n", c->name);
        for (size_t k = 0; k < c->n; k++) {
            snprintf(name, sizeof(name), "node%zu", k + 1);
            nodes[k] = tp_node_simple(name, NULL, NULL, NULL);
        }
        set_image_states(nodes, c->nodes, c->n);
        assert_int_equal(fw_snapshot_from_nodes(nodes, c->n, &snap), KUBE_OK);
        tp_plugin *p = tp_plugin_new(&plugin_image_locality, NULL, snap);
        fw_pod_info *pod = pod_with_images(c->containers, c->init);

        assert_int_equal(tp_score(p, pod, nodes, c->n, 1, got), FW_SUCCESS);
        for (size_t k = 0; k < c->n; k++) {
            assert_int_equal(got[k], c->want[k]);
            fw_node_info_free(nodes[k]);
        }
        fw_pod_info_unref(pod);
        tp_plugin_free(p);
        fw_snapshot_free(snap);
    }
}

static void needs_a_snapshot(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_image_locality, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c',"
                              "'image':'gcr.io/40'}]}}");
    fw_node_info *ni = tp_node_simple("n", NULL, NULL, NULL);
    fw_cycle_state *cs = fw_cycle_state_new();
    int64_t s;

    tp_assert_status(p->desc->score(p->self, cs, pod, ni, &s), FW_ERROR, NULL);
    assert_null(p->desc->default_args);
    assert_null(p->desc->events_to_register);
    fw_cycle_state_free(cs);
    fw_node_info_free(ni);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

int test_group_plugin_image_locality(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(score_table),
        cmocka_unit_test(needs_a_snapshot),
    };
    return cmocka_run_group_tests_name("plugin_image_locality", tests, NULL, NULL);
}
