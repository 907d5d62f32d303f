/*
 * kube/types/node_target.c - whether a node can take a pinned VM's next
 * pod (node_target.h).
 */
#include "kube/types/node_target.h"

#include <string.h>

const kube_taint *kube_node_untolerated_taint(const kube_node *node, const kube_toleration *tols,
                                              size_t n)
{
    for (size_t i = 0; i < node->n_taints; i++) {
        const kube_taint *t = &node->taints[i];
        int tolerated = 0;
        if (t->effect != KUBE_EFFECT_NO_SCHEDULE && t->effect != KUBE_EFFECT_NO_EXECUTE)
            continue;
        for (size_t j = 0; j < n && !tolerated; j++)
            tolerated = kube_toleration_tolerates(&tols[j], t);
        if (!tolerated)
            return t;
    }
    return NULL;
}

/* NodeUnschedulable's predicate: not cordoned, or the cordon tolerated. */
static int cordon_tolerated(const kube_node *node, const kube_toleration *tols, size_t n)
{
    static const kube_taint unschedulable = {"node.kubernetes.io/unschedulable", "",
                                             KUBE_EFFECT_NO_SCHEDULE};

    if (!node->unschedulable)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (kube_toleration_tolerates(&tols[i], &unschedulable))
            return 1;
    return 0;
}

kube_node_refusal kube_node_refuses(const kube_node *node, const kube_toleration *tols, size_t n,
                                    const kube_taint **taint)
{
    const kube_taint *t = NULL;
    kube_node_refusal r = KUBE_NODE_TAKES;

    if (!node)
        r = KUBE_NODE_MISSING;
    else if (!cordon_tolerated(node, tols, n))
        r = KUBE_NODE_CORDONED;
    else if ((t = kube_node_untolerated_taint(node, tols, n)) != NULL)
        r = KUBE_NODE_TAINTED;
    else if (node->ready == KUBE_NODE_READY_FALSE)
        r = KUBE_NODE_NOT_READY;
    else if (node->ready != KUBE_NODE_READY_TRUE)
        r = KUBE_NODE_UNKNOWN;
    if (taint)
        *taint = t;
    return r;
}

int kube_taint_is_not_ready(const kube_taint *t)
{
    return strcmp(t->key, "node.kubernetes.io/not-ready") == 0 ||
           strcmp(t->key, "node.kubernetes.io/unreachable") == 0;
}

const char *kube_taint_effect_name(kube_taint_effect e)
{
    switch (e) {
    case KUBE_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case KUBE_EFFECT_PREFER_NO_SCHEDULE:
        return "PreferNoSchedule";
    case KUBE_EFFECT_NO_EXECUTE:
        return "NoExecute";
    default:
        return "";
    }
}
