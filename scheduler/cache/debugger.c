/*
 * scheduler/cache/debugger.c - the cache debugger (debugger.h): the
 * comparer, the dumper and the SIGUSR2 listener.
 */
#include "cache/debugger.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/cache_int.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/strmap.h"

/* ------------------------------------------------------------------ */
/* Name sets and lists                                                 */
/* ------------------------------------------------------------------ */

/* Adds key to set (a strmap used as a set); KUBE_OK or KUBE_ENOMEM. */
static int set_add(kube_strmap *set, const char *key)
{
    return kube_strmap_put(set, key, (void *)1, NULL);
}

static int list_add(sched_name_list *l, const char *s)
{
    char *c = kube_strdup(s);

    if (!c || KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) != KUBE_OK) {
        free(c);
        return KUBE_ENOMEM;
    }
    l->v[l->n++] = c;
    return KUBE_OK;
}

static void list_clear(sched_name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct diff_ctx {
    const kube_strmap *other;
    sched_name_list *out;
    int rc;
} diff_ctx;

static void diff_one(void *ud, const char *key, void *value)
{
    diff_ctx *c = ud;
    (void)value;
    if (c->rc == KUBE_OK && !kube_strmap_get(c->other, key))
        c->rc = list_add(c->out, key);
}

/* out = a - b, sorted. */
static int set_diff(const kube_strmap *a, const kube_strmap *b, sched_name_list *out)
{
    diff_ctx c = {b, out, KUBE_OK};

    kube_strmap_foreach(a, diff_one, &c);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(*out->v), cmp_str);
    return c.rc;
}

/* "[a b c]" into b. */
static void put_list(kube_buf *b, const sched_name_list *l)
{
    kube_buf_puts(b, "[");
    for (size_t i = 0; i < l->n; i++)
        kube_buf_printf(b, "%s%s", i ? " " : "", l->v[i]);
    kube_buf_puts(b, "]");
}

void sched_cache_mismatch_clear(sched_cache_mismatch *m)
{
    list_clear(&m->missed_nodes);
    list_clear(&m->redundant_nodes);
    list_clear(&m->missed_pods);
    list_clear(&m->redundant_pods);
}

/* ------------------------------------------------------------------ */
/* What the informers hold                                             */
/* ------------------------------------------------------------------ */

typedef struct collect_ctx {
    const sched_cache_debugger *d;
    kube_strmap *set;
    int rc;
} collect_ctx;

static void collect_node(void *ud, kube_object *obj)
{
    collect_ctx *c = ud;
    if (c->rc == KUBE_OK)
        c->rc = set_add(c->set, obj->meta.name);
}

/* Assigned pods, and the unassigned ones of our profiles. */
static void collect_pod(void *ud, kube_object *obj)
{
    collect_ctx *c = ud;
    const kube_pod *pod = kube_pod_from(obj);

    if (c->rc != KUBE_OK || !pod)
        return;
    if (pod->node_name[0] ||
        fw_framework_for(c->d->frameworks, c->d->n_frameworks, pod->scheduler_name))
        c->rc = set_add(c->set, obj->meta.uid);
}

/* ------------------------------------------------------------------ */
/* What the cache and the queue hold                                   */
/* ------------------------------------------------------------------ */

/* The cache's nodes (those with a node object) and pod UIDs. */
static int cache_sets(sched_cache *c, kube_strmap *nodes, kube_strmap *pods)
{
    int rc = KUBE_OK;

    pthread_mutex_lock(&c->mu);
    for (node_item *it = c->head; it && rc == KUBE_OK; it = it->next)
        if (it->info->node)
            rc = set_add(nodes, it->name);
    for (size_t i = 0; i < c->pods.cap && rc == KUBE_OK; i++) {
        const pod_state *ps = c->pods.slots[i];
        if (ps && ps != PT_TOMB)
            rc = set_add(pods, ps->pi->uid);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void collect_pending(void *ud, const fw_pod_info *pi)
{
    collect_ctx *c = ud;
    if (c->rc == KUBE_OK)
        c->rc = set_add(c->set, pi->uid);
}

/* ------------------------------------------------------------------ */
/* The comparer                                                        */
/* ------------------------------------------------------------------ */

/* Logs one "Cache mismatch" line when there is a difference. */
static void log_mismatch(const char *missed_key, const sched_name_list *missed,
                         const char *redundant_key, const sched_name_list *redundant)
{
    kube_buf b = {0};

    if (missed->n + redundant->n == 0)
        return;
    kube_buf_printf(&b, "%s=", missed_key);
    put_list(&b, missed);
    kube_buf_printf(&b, " %s=", redundant_key);
    put_list(&b, redundant);
    KLOG_INFO("\"Cache mismatch\" %s", b.data ? b.data : "");
    kube_buf_free(&b);
}

/* The four sets: the informers' nodes and pods, the cache's (+ queue). */
typedef struct compare_sets {
    kube_strmap actual_nodes, cached_nodes, actual_pods, cached_pods;
} compare_sets;

static void sets_free(compare_sets *s)
{
    kube_strmap_free(&s->actual_nodes);
    kube_strmap_free(&s->cached_nodes);
    kube_strmap_free(&s->actual_pods);
    kube_strmap_free(&s->cached_pods);
}

static int sets_fill(const sched_cache_debugger *d, compare_sets *s)
{
    collect_ctx n = {d, &s->actual_nodes, KUBE_OK}, p = {d, &s->actual_pods, KUBE_OK};
    collect_ctx q = {d, &s->cached_pods, KUBE_OK};
    int rc;

    kube_lister_foreach(d->nodes, collect_node, &n);
    kube_lister_foreach(d->pods, collect_pod, &p);
    rc = cache_sets(d->cache, &s->cached_nodes, &s->cached_pods);
    if (d->queue)
        sched_queue_foreach_pending(d->queue, collect_pending, &q);
    return n.rc ? n.rc : p.rc ? p.rc : rc ? rc : q.rc;
}

int sched_cache_compare(const sched_cache_debugger *d, sched_cache_mismatch *out)
{
    compare_sets s;
    sched_cache_mismatch m;
    int rc;

    memset(&s, 0, sizeof(s));
    memset(&m, 0, sizeof(m));
    KLOG_V(3, "Cache comparer started");
    rc = sets_fill(d, &s);
    if (rc == KUBE_OK)
        rc = set_diff(&s.actual_nodes, &s.cached_nodes, &m.missed_nodes);
    if (rc == KUBE_OK)
        rc = set_diff(&s.cached_nodes, &s.actual_nodes, &m.redundant_nodes);
    if (rc == KUBE_OK)
        rc = set_diff(&s.actual_pods, &s.cached_pods, &m.missed_pods);
    if (rc == KUBE_OK)
        rc = set_diff(&s.cached_pods, &s.actual_pods, &m.redundant_pods);
    sets_free(&s);
    if (rc == KUBE_OK) {
        log_mismatch("missedNodes", &m.missed_nodes, "redundantNodes", &m.redundant_nodes);
        log_mismatch("missedPods", &m.missed_pods, "redundantPods", &m.redundant_pods);
    }
    KLOG_V(3, "Cache comparer finished");
    if (out && rc == KUBE_OK)
        *out = m;
    else
        sched_cache_mismatch_clear(&m);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The dumper                                                          */
/* ------------------------------------------------------------------ */

/* framework.Resource as Go's %+v prints it. */
static void put_resource(kube_buf *b, const fw_resource *r)
{
    kube_buf_printf(b,
                    "{MilliCPU:%lld Memory:%lld EphemeralStorage:%lld AllowedPodNumber:%lld "
                    "ScalarResources:map[",
                    (long long)r->milli_cpu, (long long)r->memory, (long long)r->ephemeral_storage,
                    (long long)r->allowed_pod_number);
    for (uint32_t i = 0; i < r->n_scalars; i++)
        kube_buf_printf(b, "%s%s:%lld", i ? " " : "", r->scalars[i].name,
                        (long long)r->scalars[i].value);
    kube_buf_puts(b, "]}");
}

/* printPod, one tab-indented line (without its newline). */
static void put_pod(kube_buf *b, const fw_pod_info *pi)
{
    kube_buf_printf(b, "\tname: %s, namespace: %s, uid: %s, phase: %s, nominated node: %s",
                    pi->name, pi->namespace_, pi->uid, pi->pod->phase,
                    pi->pod->nominated_node_name);
}

/* printNodeInfo. */
static void put_node(kube_buf *b, const node_item *it)
{
    const fw_node_info *ni = it->info;

    kube_buf_printf(b, "\tNode name: %s\n\tDeleted: %s\n\tRequested Resources: ", it->name,
                    ni->node ? "false" : "true");
    put_resource(b, &ni->requested);
    kube_buf_puts(b, "\n\tAllocatable Resources:");
    put_resource(b, &ni->allocatable);
    kube_buf_printf(b, "\n\tScheduled Pods(number: %zu):\n", (size_t)ni->n_pods);
    for (size_t i = 0; i < ni->n_pods; i++) {
        put_pod(b, ni->pods[i]);
        kube_buf_puts(b, "\n");
    }
}

/* The cache's nodes and assumed pods, each part a multi-line value. */
static void cache_text(sched_cache *c, kube_buf *nodes, kube_buf *assumed)
{
    pthread_mutex_lock(&c->mu);
    for (node_item *it = c->head; it; it = it->next)
        put_node(nodes, it);
    for (size_t i = 0; i < c->pods.cap; i++) {
        const pod_state *ps = c->pods.slots[i];
        if (!ps || ps == PT_TOMB || !ps->assumed)
            continue;
        put_pod(assumed, ps->pi);
        kube_buf_printf(assumed, ", node: %s\n", ps->item ? ps->item->name : "");
    }
    pthread_mutex_unlock(&c->mu);
}

static void queue_line(void *ud, const fw_pod_info *pi)
{
    put_pod(ud, pi);
    kube_buf_puts(ud, "\n");
}

/* Logs msg with its value as klog lays out a multi-line value. */
static void log_block(const char *msg, const char *key, const kube_buf *b)
{
    KLOG_INFO("\"%s\" %s=<\n%s >", msg, key, b->data ? b->data : "");
}

int sched_cache_dump(const sched_cache_debugger *d)
{
    kube_buf nodes = {0}, assumed = {0}, pending = {0};

    cache_text(d->cache, &nodes, &assumed);
    if (d->queue)
        sched_queue_foreach_pending(d->queue, queue_line, &pending);
    log_block("Dump of cached NodeInfo", "nodes", &nodes);
    log_block("Dump of assumed pods", "pods", &assumed);
    log_block("Dump of scheduling queue", "pods", &pending);
    kube_buf_free(&nodes);
    kube_buf_free(&assumed);
    kube_buf_free(&pending);
    return KUBE_OK;
}

void sched_cache_debug(const sched_cache_debugger *d)
{
    int rc = sched_cache_compare(d, NULL);

    if (rc != KUBE_OK)
        KLOG_ERROR("cache comparer: %s", kube_strerror(rc));
    sched_cache_dump(d);
}

/* ------------------------------------------------------------------ */
/* SIGUSR2                                                             */
/* ------------------------------------------------------------------ */

#define WAKE_DUMP 'd'
#define WAKE_QUIT 'q'

static pthread_mutex_t g_setup_mu = PTHREAD_MUTEX_INITIALIZER; /* listen, unlisten */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;       /* the list */
static sched_cache_debugger *g_list;
static int g_pipe[2] = {-1, -1};
static pthread_t g_thread;
static struct sigaction g_old;

/* The handler: one byte to the pipe (async-signal-safe), nothing else. */
static void on_sigusr2(int sig)
{
    int saved = errno;
    char c = WAKE_DUMP;
    ssize_t n = write(g_pipe[1], &c, 1); /* a full pipe already has a dump queued */

    (void)sig;
    (void)n;
    errno = saved;
}

/* Reads what the pipe holds; the last byte read, or 0 when none. */
static char drain(void)
{
    char buf[64], last = 0;
    ssize_t n;

    while ((n = read(g_pipe[0], buf, sizeof(buf))) > 0)
        last = buf[n - 1];
    return last;
}

static void *listener_main(void *arg)
{
    struct pollfd p = {.events = POLLIN};

    (void)arg;
    pthread_setname_np(pthread_self(), "sched-debug");
    p.fd = g_pipe[0];
    for (;;) {
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            break;
        char c = drain();
        if (c == WAKE_QUIT)
            break;
        if (c != WAKE_DUMP)
            continue;
        pthread_mutex_lock(&g_mu);
        for (sched_cache_debugger *d = g_list; d; d = d->next)
            sched_cache_debug(d);
        pthread_mutex_unlock(&g_mu);
    }
    return NULL;
}

/* The pipe, the handler and the thread. Called with g_setup_mu held. */
static int listener_start(void)
{
    struct sigaction sa;

    if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return KUBE_EIO;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigusr2;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (pthread_create(&g_thread, NULL, listener_main, NULL) != 0) {
        close(g_pipe[0]), close(g_pipe[1]);
        g_pipe[0] = g_pipe[1] = -1;
        return KUBE_EIO;
    }
    sigaction(SIGUSR2, &sa, &g_old);
    return KUBE_OK;
}

/* Restores the handler, ends the thread, closes the pipe. Called with
 * g_setup_mu held, g_mu NOT held (the thread may be waiting for it). */
static void listener_stop(void)
{
    char c = WAKE_QUIT;
    ssize_t n;

    sigaction(SIGUSR2, &g_old, NULL);
    n = write(g_pipe[1], &c, 1);
    (void)n;
    pthread_join(g_thread, NULL);
    close(g_pipe[0]), close(g_pipe[1]);
    g_pipe[0] = g_pipe[1] = -1;
}

int sched_cache_debugger_listen(sched_cache_debugger *d)
{
    int rc = KUBE_OK;

    pthread_mutex_lock(&g_setup_mu);
    if (!g_list)
        rc = listener_start();
    if (rc == KUBE_OK) {
        pthread_mutex_lock(&g_mu);
        d->next = g_list;
        g_list = d;
        pthread_mutex_unlock(&g_mu);
    }
    pthread_mutex_unlock(&g_setup_mu);
    return rc;
}

void sched_cache_debugger_unlisten(sched_cache_debugger *d)
{
    int last = 0;

    pthread_mutex_lock(&g_setup_mu);
    pthread_mutex_lock(&g_mu);
    for (sched_cache_debugger **p = &g_list; *p; p = &(*p)->next) {
        if (*p == d) {
            *p = d->next;
            last = g_list == NULL;
            break;
        }
    }
    pthread_mutex_unlock(&g_mu);
    if (last)
        listener_stop();
    pthread_mutex_unlock(&g_setup_mu);
}
