/*
 * scheduler/framework/status.h - the result of running a plugin, as
 * kube-scheduler's framework.Status, and the FitError message of a pod that
 * fits no node ("0/5 nodes are available: ...").
 *
 * A NULL fw_status * means Success, exactly as a nil *Status in Go: every
 * function here accepts NULL and treats it as Success. Plugins return NULL
 * for success and a fw_status_new()'d status otherwise.
 *
 * Memory: a status is one heap object owned by whoever holds the pointer.
 * A plugin returns a new status and the framework takes ownership; the
 * framework returns statuses the caller frees with fw_status_free(). Reasons
 * are copied into the status. The failed-plugin name is a BORROWED pointer to
 * static storage (the plugin descriptor's name, a string literal), so a
 * status may outlive the framework that produced it.
 *
 * Threads: a status is not shared between threads while it is mutated.
 */
#ifndef FW_STATUS_H
#define FW_STATUS_H

#include <stddef.h>
#include <stdint.h>

typedef enum fw_code {
    FW_SUCCESS = 0,
    FW_ERROR = 1,
    /* Rejected, but preemption (PostFilter) might make the pod schedulable. */
    FW_UNSCHEDULABLE = 2,
    /* Rejected, and preemption will not help on this node. */
    FW_UNSCHEDULABLE_AND_UNRESOLVABLE = 3,
    FW_WAIT = 4, /* Permit: the pod waits */
    FW_SKIP = 5, /* PreFilter/PreScore: skip my Filter/Score; Bind: not mine */
} fw_code;

typedef struct fw_status {
    fw_code code;
    char **reasons; /* owned; n_reasons entries */
    size_t n_reasons;
    const char *plugin; /* failed plugin, borrowed static name, or NULL */
    int err;            /* KUBE_E* code for FW_ERROR (KUBE_EINVAL default) */
} fw_status;

/* The code's name as kube-scheduler prints it and metrics label it:
 * "Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable",
 * "Wait", "Skip". Static storage. */
const char *fw_code_string(fw_code code);

/* Allocates a status with code and zero or one reason (reason NULL: none).
 * Returns NULL for FW_SUCCESS with no reason (that IS success) and, when
 * memory runs out, a static out-of-memory FW_ERROR status that
 * fw_status_free() ignores - so callers never need to check for NULL
 * separately from success. Caller owns the result. */
fw_status *fw_status_new(fw_code code, const char *reason);
/* Same with a formatted reason. */
fw_status *fw_status_newf(fw_code code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An FW_ERROR status carrying a KUBE_E* code and a message (kube-scheduler's
 * AsStatus(err)). fmt may be NULL: the message is kube_strerror(err). */
fw_status *fw_status_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a reason (copied). Returns KUBE_OK or KUBE_ENOMEM. st non-NULL. */
int fw_status_add_reason(fw_status *st, const char *reason);
/* Deep copy; NULL for NULL. Caller owns the copy. */
fw_status *fw_status_clone(const fw_status *st);
/* fw_status_free() of a non-NULL status (status.c). */
void fw__status_release(fw_status *st);
/* Frees a status. NULL-safe; ignores the static out-of-memory status.
 * Inline so that freeing success (NULL) in per-node loops costs no call. */
static inline void fw_status_free(fw_status *st)
{
    if (st)
        fw__status_release(st);
}

/* Setters and predicates, NULL meaning Success. */
static inline fw_code fw_status_code(const fw_status *st)
{
    return st ? st->code : FW_SUCCESS;
}
static inline int fw_status_is_success(const fw_status *st)
{
    return fw_status_code(st) == FW_SUCCESS;
}
static inline int fw_status_is_skip(const fw_status *st)
{
    return fw_status_code(st) == FW_SKIP;
}
static inline int fw_status_is_wait(const fw_status *st)
{
    return fw_status_code(st) == FW_WAIT;
}
/* Unschedulable or UnschedulableAndUnresolvable (Go's IsUnschedulable). */
static inline int fw_status_is_unschedulable(const fw_status *st)
{
    fw_code c = fw_status_code(st);
    return c == FW_UNSCHEDULABLE || c == FW_UNSCHEDULABLE_AND_UNRESOLVABLE;
}
/* Records the failed plugin (static name). No-op on NULL. */
void fw_status_set_plugin(fw_status *st, const char *plugin);

/* The reasons joined with ", " (Go's Status.Message()), into out (size n,
 * truncated, always terminated). "" for NULL. */
void fw_status_message(const fw_status *st, char *out, size_t n);
/* Same, allocated; caller frees. NULL only on out-of-memory. */
char *fw_status_message_dup(const fw_status *st);

/*
 * Per-node results of a failed scheduling attempt: kube-scheduler's
 * framework.Diagnosis and NodeToStatusMap.
 */
typedef struct fw_node_status {
    char *node;        /* owned copy of the node name */
    fw_status *status; /* owned, never NULL (a failure) */
} fw_node_status;

typedef struct fw_diagnosis {
    fw_node_status *nodes; /* NodeToStatusMap, in evaluation order */
    size_t n_nodes, cap_nodes;
    const char **unschedulable_plugins; /* set of static plugin names */
    size_t n_unschedulable_plugins, cap_unschedulable_plugins;
    const char **pending_plugins; /* set of static plugin names (Pending) */
    size_t n_pending_plugins, cap_pending_plugins;
    char *pre_filter_msg;  /* owned, NULL when PreFilter passed */
    char *post_filter_msg; /* owned, NULL when none */
    /* From the PreFilterResult (fw_pre_filter_result_explain), NULL when
     * none: the reason of the nodes absent from nodes[], and a note. */
    char *absent_reason; /* owned */
    char *note;          /* owned */
} fw_diagnosis;

#define FW_DIAGNOSIS_INIT \
    {                     \
        0                 \
    }

/* Records a node's failure. The node name is copied; ownership of st is
 * taken (even on error). Returns KUBE_OK or KUBE_ENOMEM. */
int fw_diagnosis_add_node(fw_diagnosis *d, const char *node, fw_status *st);
/* Inserts a plugin name (static storage) into a set if absent. */
int fw_diagnosis_add_unschedulable_plugin(fw_diagnosis *d, const char *plugin);
/* Sets the PreFilter/PostFilter message (copied; NULL clears). */
int fw_diagnosis_set_pre_filter_msg(fw_diagnosis *d, const char *msg);
int fw_diagnosis_set_post_filter_msg(fw_diagnosis *d, const char *msg);
/* Sets the reason counted for each node absent from d->nodes, and the
 * note the FitError message ends with (both copied; NULL clears). KUBE_OK
 * or KUBE_ENOMEM. */
int fw_diagnosis_set_explanation(fw_diagnosis *d, const char *absent_reason, const char *note);
/* The status recorded for node, or NULL. Linear. */
const fw_status *fw_diagnosis_node_status(const fw_diagnosis *d, const char *node);
/* Frees everything inside and zeroes d. */
void fw_diagnosis_clear(fw_diagnosis *d);

/*
 * The FailedScheduling message, byte for byte as FitError.Error():
 *   "0/<num_all_nodes> nodes are available:" then
 *   - " <pre_filter_msg>." when PreFilter failed (node statuses ignored), else
 *   - " <n> <reason>, <n> <reason>." - a histogram of every reason of every
 *     node status, each entry "<count> <reason>", the entries sorted as
 *     strings (so "10 x" sorts before "2 y", as Go's sort.Strings), omitted
 *     when there are no reasons; with d->absent_reason, the nodes of the
 *     cluster that d->nodes lacks (num_all_nodes - n_nodes) count with it,
 *     as kube-scheduler >= 1.31 counts the nodes a PreFilterResult left out;
 *   - then " <note>." when d->note is set (what a PreFilter plugin adds to
 *     the summary, e.g. StickyVM's pin);
 *   - then " <post_filter_msg>." when set (the preemption suffix; v1.28
 *     appends it with the same " %v." separator, so a preemption FitError
 *     ends in "..": "... preemption: 0/5 nodes are available: 5 No
 *     preemption victims found for incoming pod..", as real events show).
 * Allocated; caller frees. NULL only on out-of-memory.
 */
char *fw_fit_error_message(int num_all_nodes, const fw_diagnosis *d);

/* kube-scheduler's NoNodeAvailableMsg prefix format, "0/%d nodes are available". */
#define FW_NO_NODE_AVAILABLE_FMT "0/%d nodes are available"

#endif
