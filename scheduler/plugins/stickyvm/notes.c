/*
 * scheduler/plugins/stickyvm/notes.c - the pins StickyVM wrote, until the
 * VM informer shows them (see notes.h).
 */
#include "plugins/stickyvm/notes.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/clock.h"
#include "kube/util/strmap.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* "namespace/name": a namespace is <= 63 bytes, a name <= 253. */
#define KEY_MAX 320

/* A pin this process wrote (rv set) or is writing (rv NULL). */
typedef struct pin_note {
    char *uid; /* the VM's uid */
    char *node;
    char *rv; /* resourceVersion of our write; NULL while in flight */
    int64_t at_ms;
} pin_note;

struct stickyvm_notes {
    pthread_mutex_t mu;
    kube_strmap map; /* "ns/name" -> pin_note * */
};

/* "ns/name" into out (KEY_MAX bytes). */
static void make_key(char *out, const char *ns, const char *name)
{
    snprintf(out, KEY_MAX, "%s/%s", ns, name);
}

/* 1 when resourceVersion have is at least want (numeric when both are, as
 * etcd's are; otherwise only equality counts). */
static int rv_reached(const char *have, const char *want)
{
    int cmp;
    if (!have || !want)
        return 0;
    if (kube_rv_compare(have, want, &cmp) == KUBE_OK)
        return cmp >= 0;
    return strcmp(have, want) == 0;
}

/* Frees one note; NULL-safe. */
static void note_free(pin_note *n)
{
    if (!n)
        return;
    free(n->uid);
    free(n->node);
    free(n->rv);
    free(n);
}

/* kube_strmap_foreach() callback freeing every note. */
static void note_free_cb(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    note_free(value);
}

/* 1 when the note no longer says anything the VM vm (may be NULL: gone)
 * does not: another object, our write seen, or too old. */
static int note_stale(const pin_note *n, const kube_vm *vm, int64_t now_ms)
{
    if (!vm || strcmp(n->uid, vm->base.meta.uid) != 0)
        return 1;
    if (n->rv)
        return rv_reached(vm->base.meta.resource_version, n->rv) ||
               now_ms - n->at_ms > STICKYVM_NOTE_TTL_MS;
    return 0;
}

/* Drops the note of key when vm makes it stale. Caller locks. */
static void prune_locked(stickyvm_notes *ns, const char *key, const kube_vm *vm)
{
    pin_note *n = kube_strmap_get(&ns->map, key);
    if (n && note_stale(n, vm, kube_now_ms()))
        note_free(kube_strmap_del(&ns->map, key));
}

int stickyvm_notes_new(stickyvm_notes **out)
{
    stickyvm_notes *n = calloc(1, sizeof(*n));
    *out = n;
    if (!n)
        return KUBE_ENOMEM;
    pthread_mutex_init(&n->mu, NULL);
    return KUBE_OK;
}

void stickyvm_notes_free(stickyvm_notes *n)
{
    if (!n)
        return;
    kube_strmap_foreach(&n->map, note_free_cb, NULL);
    kube_strmap_free(&n->map);
    pthread_mutex_destroy(&n->mu);
    free(n);
}

void stickyvm_notes_effective_pin(stickyvm_notes *n, const kube_vm *vm, const char *pin, char *out,
                                  size_t len)
{
    char key[KEY_MAX];
    kube_strlcpy(out, pin ? pin : "", len);
    make_key(key, vm->base.meta.namespace_, vm->base.meta.name);
    pthread_mutex_lock(&n->mu);
    prune_locked(n, key, vm);
    const pin_note *note = kube_strmap_get(&n->map, key);
    if (note && (note->rv || !*out))
        kube_strlcpy(out, note->node, len);
    pthread_mutex_unlock(&n->mu);
}

int stickyvm_notes_claim(stickyvm_notes *n, const kube_vm *vm, const char *node)
{
    char key[KEY_MAX];
    int ok = 0;
    make_key(key, vm->base.meta.namespace_, vm->base.meta.name);
    pthread_mutex_lock(&n->mu);
    prune_locked(n, key, vm);
    if (!kube_strmap_get(&n->map, key)) {
        pin_note *note = calloc(1, sizeof(*note));
        if (note && (note->uid = kube_strdup(vm->base.meta.uid)) &&
            (note->node = kube_strdup(node)) &&
            kube_strmap_put(&n->map, key, note, NULL) == KUBE_OK)
            ok = 1;
        else
            note_free(note);
    }
    pthread_mutex_unlock(&n->mu);
    return ok;
}

/* Fills note (allocated when NULL) with final's pin and version; the note
 * on success, NULL (note freed) when memory ran out. */
static pin_note *note_fill(pin_note *note, const kube_vm *final, const char *pin)
{
    char *uid = kube_strdup(final->base.meta.uid), *node = kube_strdup(pin);
    char *rv = kube_strdup(final->base.meta.resource_version);
    if (!note)
        note = calloc(1, sizeof(*note));
    if (!note || !uid || !node || !rv) {
        free(uid), free(node), free(rv);
        note_free(note);
        return NULL;
    }
    free(note->uid), free(note->node), free(note->rv);
    note->uid = uid, note->node = node, note->rv = rv, note->at_ms = kube_now_ms();
    return note;
}

void stickyvm_notes_settle(stickyvm_notes *n, const char *ns, const char *name,
                           const kube_vm *final, const char *pin)
{
    char key[KEY_MAX];
    make_key(key, ns, name);
    pthread_mutex_lock(&n->mu);
    pin_note *note = kube_strmap_del(&n->map, key);
    if (final && pin && *pin) {
        note = note_fill(note, final, pin);
        if (note && kube_strmap_put(&n->map, key, note, NULL) == KUBE_OK)
            note = NULL;
    }
    note_free(note);
    pthread_mutex_unlock(&n->mu);
}

/* The keys of a sweep, copied (the map may not change under foreach). */
typedef struct key_list {
    char **v;
    size_t n, cap;
} key_list;

static void collect_key(void *ud, const char *key, void *value)
{
    key_list *l = ud;
    char *k = kube_strdup(key);
    (void)value;
    if (k && KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) == KUBE_OK)
        l->v[l->n++] = k;
    else
        free(k); /* swept next time */
}

/* Drops the note of key when the cached VM makes it stale or, when the VM
 * is not cached, when it is a written note older than the TTL. Caller
 * locks. */
static void sweep_one(stickyvm_notes *n, char *key, stickyvm_vm_get_fn get_vm, void *ud,
                      int64_t now_ms)
{
    pin_note *note = kube_strmap_get(&n->map, key);
    char *slash = strchr(key, '/');
    kube_object *vm;
    int stale;

    if (!note || !slash)
        return;
    *slash = '\0';
    vm = get_vm(ud, key, slash + 1);
    *slash = '/';
    stale = vm ? note_stale(note, kube_vm_from(vm), now_ms)
               : note->rv && now_ms - note->at_ms > STICKYVM_NOTE_TTL_MS;
    kube_object_unref(vm);
    if (stale)
        note_free(kube_strmap_del(&n->map, key));
}

void stickyvm_notes_sweep(stickyvm_notes *n, stickyvm_vm_get_fn get_vm, void *ud)
{
    key_list keys = {0};
    int64_t now = kube_now_ms();

    pthread_mutex_lock(&n->mu);
    kube_strmap_foreach(&n->map, collect_key, &keys);
    for (size_t i = 0; i < keys.n; i++) {
        sweep_one(n, keys.v[i], get_vm, ud, now);
        free(keys.v[i]);
    }
    pthread_mutex_unlock(&n->mu);
    free(keys.v);
}
