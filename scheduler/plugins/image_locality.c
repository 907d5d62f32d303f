/*
 * scheduler/plugins/image_locality.c - ImageLocality (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/imagelocality): favours nodes that
 * already hold the pod's container images.
 *
 * v1.28 formula: for each container (init containers are not counted in
 * v1.28) whose normalised image is on the node, add
 * int64(size * numNodesWithImage / totalNodes); clamp the sum to
 * [23 MiB, 1000 MiB * number of containers] and scale it linearly to
 * [0, 100]. totalNodes is the number of nodes in the cycle's snapshot
 * (h->svc.snapshot); image states come from the node info (filled by the
 * cache).
 */
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

#define MB (1024LL * 1024)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)
#define DEFAULT_IMAGE_TAG "latest"

/* strcmp(base + suffix, name) without building the concatenation. */
static int cmp_suffixed(const char *base, size_t blen, const char *suffix, const char *name)
{
    int c = strncmp(base, name, blen);
    return c ? c : strcmp(suffix, name + blen); /* c == 0: name has blen chars */
}

/* The state of image on the node, looked up by normalizedImageName:
 * ":latest" is appended when the name has no tag (its last ':' is not after
 * its last '/'). A binary search of the node's name-sorted image states
 * that compares the suffixed name in place, so nothing is allocated or
 * copied. */
static const fw_image_state *image_state(const fw_node_info *ni, const char *image)
{
    const fw_image_states *st = ni->image_states;
    if (!st || st->n == 0)
        return NULL; /* no image on the node: the name needs no normalizing */
    const char *colon = strrchr(image, ':'), *slash = strrchr(image, '/');
    const char *suffix = colon && (!slash || colon > slash) ? "" : ":" DEFAULT_IMAGE_TAG;
    size_t lo = 0, hi = st->n, blen = strlen(image);

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_suffixed(image, blen, suffix, st->items[mid].name);
        if (c == 0)
            return &st->items[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* scaledImageScore: the image size weighted by its spread over the cluster. */
static int64_t scaled_image_score(const fw_image_state *st, size_t total_nodes)
{
    double spread = (double)st->num_nodes / (double)total_nodes;
    return (int64_t)((double)st->size * spread);
}

static int64_t calculate_priority(int64_t sum, size_t n_containers)
{
    int64_t max_threshold = MAX_CONTAINER_THRESHOLD * (int64_t)n_containers;
    if (sum < MIN_THRESHOLD)
        sum = MIN_THRESHOLD;
    else if (sum > max_threshold)
        sum = max_threshold;
    return FW_MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD);
}

/* The score of node ni for pod p's images in a cluster of total nodes. */
static int64_t node_score(const kube_pod *p, const fw_node_info *ni, size_t total)
{
    int64_t sum = 0;

    for (size_t i = 0; i < p->n_images; i++) {
        const fw_image_state *st = image_state(ni, p->images[i]);
        if (st)
            sum += scaled_image_score(st, total);
    }
    return calculate_priority(sum, p->n_images);
}

/* The snapshot's node count into *total, or an error status. */
static fw_status *cluster_size(const plugin_handle_only *pl, size_t *total)
{
    const fw_snapshot *snap = pl->h ? pl->h->svc.snapshot : NULL;

    *total = snap ? fw_snapshot_num_nodes(snap) : 0;
    if (*total == 0)
        return fw_status_error(KUBE_EINVAL, "listing nodes from Snapshot: no snapshot");
    return NULL;
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    size_t total;
    fw_status *st = cluster_size(self, &total);

    *out = st ? 0 : node_score(pod->pod, ni, total);
    return st;
}

static fw_status *score_nodes(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_node_info *const *nodes, size_t n, fw_node_score *scores)
{
    size_t total;
    fw_status *st = cluster_size(self, &total);

    for (size_t i = 0; !st && i < n; i++)
        scores[i].score = node_score(pod->pod, nodes[i], total);
    return st;
}

const fw_plugin_desc plugin_image_locality = {
    .name = "ImageLocality",
    .create = plugin_handle_only_create,
    .destroy = plugin_handle_only_destroy,
    .score = score,
    .score_nodes = score_nodes,
};
