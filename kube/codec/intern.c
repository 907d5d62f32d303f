/*
 * kube/codec/intern.c - the shared pool of repeated strings and arrays. See
 * intern.h.
 *
 * An open-addressing table (linear probing, no deletion) of pointers to
 * entries under a read-write lock. Entries are bump-allocated from 64 KiB
 * chunks that are never freed, so their addresses are stable and the
 * table can be rebuilt larger without touching them.
 */
#include "kube/codec/intern.h"
#include "kube/codec/intern_testing.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/hash.h"

#define MIN_SLOTS 256u
#define CHUNK_SIZE (64u * 1024u)

typedef struct entry {
    uint32_t hash;
    uint32_t len;
    alignas(8) unsigned char data[];
} entry;

typedef struct chunk {
    struct chunk *next;
    alignas(16) unsigned char data[];
} chunk;

static pthread_rwlock_t pool_lock = PTHREAD_RWLOCK_INITIALIZER;
static entry **slots; /* cap pointers, NULL: empty */
static size_t cap, count, bytes;
static chunk *chunks; /* newest first; the newest is being filled */
static size_t chunk_used;
static atomic_ulong hits, refused;

static uint32_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = kube_fnv1a_bytes(KUBE_FNV1A_INIT ^ n, p, n);

    return (uint32_t)(h ^ (h >> 32));
}

static size_t entry_size(size_t n)
{
    return (sizeof(entry) + n + 7u) & ~(size_t)7u;
}

/* The entry holding these bytes, or NULL. Any lock held. */
static entry *find(uint32_t h, const void *p, size_t n)
{
    size_t mask = cap - 1;

    if (cap == 0)
        return NULL;
    for (size_t i = h & mask; slots[i]; i = (i + 1) & mask)
        if (slots[i]->hash == h && slots[i]->len == n && memcmp(slots[i]->data, p, n) == 0)
            return slots[i];
    return NULL;
}

static void place(entry **table, size_t tcap, entry *e)
{
    size_t i = e->hash & (tcap - 1);

    while (table[i])
        i = (i + 1) & (tcap - 1);
    table[i] = e;
}

/* Makes room for one more entry at a load of at most 3/4. Write lock held. */
static int reserve_slot(void)
{
    size_t ncap = cap ? cap * 2 : MIN_SLOTS;
    entry **table;

    if ((count + 1) * 4 <= cap * 3)
        return 0;
    if (!(table = calloc(ncap, sizeof(*table))))
        return -1;
    for (size_t i = 0; i < cap; i++)
        if (slots[i])
            place(table, ncap, slots[i]);
    free(slots);
    slots = table;
    cap = ncap;
    return 0;
}

/* size bytes (a multiple of 8, at most CHUNK_SIZE) of chunk memory. Write
 * lock held. */
static void *chunk_alloc(size_t size)
{
    chunk *c;

    if (!chunks || CHUNK_SIZE - chunk_used < size) {
        if (!(c = malloc(sizeof(*c) + CHUNK_SIZE)))
            return NULL;
        c->next = chunks;
        chunks = c;
        chunk_used = 0;
    }
    chunk_used += size;
    return chunks->data + chunk_used - size;
}

/* Adds a new entry; bounded: refused past the pool's limits. Write lock
 * held. */
static entry *insert(uint32_t h, const void *p, size_t n, int bounded)
{
    size_t size = entry_size(n);
    entry *e;

    if (bounded && (count >= KUBE_INTERN_MAX_ENTRIES || bytes + size > KUBE_INTERN_MAX_BYTES)) {
        atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
        return NULL;
    }
    if (reserve_slot() != 0 || !(e = chunk_alloc(size)))
        return NULL;
    e->hash = h;
    e->len = (uint32_t)n;
    memcpy(e->data, p, n);
    place(slots, cap, e);
    count++;
    bytes += size;
    return e;
}

static const void *intern(const void *p, size_t n, int bounded)
{
    uint32_t h;
    entry *e;

    if (!p || n == 0 || n > KUBE_INTERN_MAX_ENTRY)
        return NULL;
    h = hash_bytes(p, n);
    pthread_rwlock_rdlock(&pool_lock);
    e = find(h, p, n);
    pthread_rwlock_unlock(&pool_lock);
    if (e) {
        atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
        return e->data;
    }
    pthread_rwlock_wrlock(&pool_lock);
    if (!(e = find(h, p, n)))
        e = insert(h, p, n, bounded);
    pthread_rwlock_unlock(&pool_lock);
    return e ? e->data : NULL;
}

const void *kube_intern_bytes(const void *p, size_t n)
{
    return intern(p, n, 1);
}

static const char *intern_str(const char *s, int bounded)
{
    const char *hit;
    size_t n;

    if (!s)
        return NULL;
    if ((hit = kube_intern_static(s)))
        return hit;
    n = strnlen(s, KUBE_INTERN_MAX_ENTRY);
    return n < KUBE_INTERN_MAX_ENTRY ? intern(s, n + 1, bounded) : NULL;
}

const char *kube_intern_str(const char *s)
{
    return intern_str(s, 1);
}

const char *kube_intern_name(const char *s)
{
    return intern_str(s, 0);
}

void kube_intern_stats_get(kube_intern_stats *out)
{
    pthread_rwlock_rdlock(&pool_lock);
    out->entries = count;
    out->bytes = bytes;
    pthread_rwlock_unlock(&pool_lock);
    out->hits = atomic_load(&hits);
    out->refused = atomic_load(&refused);
}

/* ---- the well-known strings: static, no pool entry ---- */

/* Strings that recur in most pods, nodes and VMs: kept once, statically. */
static const char *const intern_table[] = {
    "",
    "default",
    "kube-system",
    "true",
    "false",
    "v1",
    "apps/v1",
    "batch/v1",
    "kubevirt.io/v1",
    "VirtualMachineInstance",
    "VirtualMachine",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "Node",
    "Pod",
    "stickyvm",
    "default-scheduler",
    "kubevirt.io",
    "virt-launcher",
    "kubevirt.io/created-by",
    "vm.kubevirt.io/name",
    "kubevirt.io/migrationJobUID",
    "kubevirt.io/nodeName",
    "kubevirt.io/domain",
    "kubevirt.io/vm",
    "kubevirt.io/schedulable",
    "kubevirt.io/size",
    "app",
    "pod-template-hash",
    "controller-revision-hash",
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "linux",
    "amd64",
    "arm64",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
    "Exists",
    "Equal",
    "NoSchedule",
    "NoExecute",
    "PreferNoSchedule",
    "Pending",
    "Running",
    "Succeeded",
    "Failed",
    "Unknown",
    "Scheduling",
    "Scheduled",
    "PodScheduled",
    "Initialized",
    "ContainersReady",
    "Ready",
    "PodReadyToStartContainers",
    "DisruptionTarget",
    "True",
    "False",
    "Unschedulable",
    "SchedulingGated",
    "cpu",
    "memory",
    "pods",
    "ephemeral-storage",
    "devices.kubevirt.io/kvm",
    "devices.kubevirt.io/tun",
    "devices.kubevirt.io/vhost-net",
    "hugepages-2Mi",
    "hugepages-1Gi",
    "TCP",
    "UDP",
    "SCTP",
    "0.0.0.0",
    "compute",
    "Always",
    "IfNotPresent",
    "PreemptLowerPriority",
    "Never",
    "DoNotSchedule",
    "ScheduleAnyway",
    "Honor",
    "Ignore",
};

#define INTERN_SLOTS 512u
#define INTERN_MAX_LEN 48u

/* Open-addressing index over intern_table, built once. */
static const char *intern_slots[INTERN_SLOTS];
static pthread_once_t intern_once = PTHREAD_ONCE_INIT;

static unsigned intern_hash(const char *s, size_t n)
{
    unsigned h = (unsigned)n * 2654435761u;

    if (n)
        h ^= (unsigned char)s[0] * 31u + (unsigned char)s[n / 2] * 131u +
             (unsigned char)s[n - 1] * 1031u;
    return (h ^ (h >> 9)) & (INTERN_SLOTS - 1);
}

static void intern_build(void)
{
    for (size_t i = 0; i < sizeof(intern_table) / sizeof(intern_table[0]); i++) {
        const char *t = intern_table[i];
        unsigned h = intern_hash(t, strlen(t));
        while (intern_slots[h])
            h = (h + 1) & (INTERN_SLOTS - 1);
        intern_slots[h] = t;
    }
}

const char *kube_intern_static(const char *s)
{
    size_t n;
    unsigned h;

    if (!s)
        return NULL;
    n = strnlen(s, INTERN_MAX_LEN + 1);
    if (n > INTERN_MAX_LEN)
        return NULL;
    pthread_once(&intern_once, intern_build);
    for (h = intern_hash(s, n); intern_slots[h]; h = (h + 1) & (INTERN_SLOTS - 1))
        if (strcmp(intern_slots[h], s) == 0)
            return intern_slots[h];
    return NULL;
}
