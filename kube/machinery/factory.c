/*
 * kube/machinery/factory.c - the shared informer factory (factory.h): one
 * informer per resource on one hub, the handlers fanned out from it, the
 * change generations and their waits.
 */
#include "kube/machinery/factory.h"
#include "kube/machinery/factory_testing.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/codec/jsonstream.h"
#include "kube/machinery/store.h"
#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

struct kube_lister {
    kube_factory *f;
    const kube_resource *res;
    const kube_codec *codec;
    char *ns, *field_selector, *label_selector; /* as requested first */
    kube_informer *inf;                         /* owned by the hub; NULL: fake */
    kube_store *store;                          /* fake listers only (owned) */
    kube_informer_handlers fan;                 /* ud = this lister */
    kube_informer_handlers *handlers;           /* added ones, fixed once started */
    size_t n_handlers, cap_handlers;
    atomic_uint_fast64_t gen;
    kube_lister *next;
};

struct kube_factory {
    kube_hub *hub;      /* NULL: fake */
    pthread_mutex_t mu; /* the lister list */
    kube_lister *listers;
    int started;
    /* waiters of kube_listers_wait() */
    pthread_mutex_t wait_mu;
    pthread_cond_t wait_cv;
    atomic_int waiters;
};

/* ------------------------------------------------------------------ */
/* Fan-out                                                             */
/* ------------------------------------------------------------------ */

/* A change of l: its generation moves and the waiters wake. */
static void changed(kube_lister *l)
{
    kube_factory *f = l->f;

    /* seq_cst both here and in the waiter (store, then load the other) */
    atomic_fetch_add(&l->gen, 1);
    if (atomic_load(&f->waiters) == 0)
        return;
    pthread_mutex_lock(&f->wait_mu);
    pthread_cond_broadcast(&f->wait_cv);
    pthread_mutex_unlock(&f->wait_mu);
}

static void fan_add(void *ud, kube_object *obj)
{
    kube_lister *l = ud;

    changed(l);
    for (size_t i = 0; i < l->n_handlers; i++)
        if (l->handlers[i].on_add)
            l->handlers[i].on_add(l->handlers[i].ud, obj);
}

static void fan_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    kube_lister *l = ud;

    changed(l);
    for (size_t i = 0; i < l->n_handlers; i++)
        if (l->handlers[i].on_update)
            l->handlers[i].on_update(l->handlers[i].ud, old_obj, new_obj);
}

static void fan_delete(void *ud, kube_object *obj)
{
    kube_lister *l = ud;

    changed(l);
    for (size_t i = 0; i < l->n_handlers; i++)
        if (l->handlers[i].on_delete)
            l->handlers[i].on_delete(l->handlers[i].ud, obj);
}

/* ------------------------------------------------------------------ */
/* The factory                                                         */
/* ------------------------------------------------------------------ */

int kube_factory_new(kube_client *client, kube_factory **out)
{
    kube_factory *f = calloc(1, sizeof(*f));
    pthread_condattr_t ca;

    *out = NULL;
    if (!f)
        return KUBE_ENOMEM;
    int rc = client ? kube_hub_new(client, &f->hub) : KUBE_OK;
    if (rc != KUBE_OK) {
        free(f);
        return rc;
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_mutex_init(&f->wait_mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->wait_cv, &ca);
    pthread_condattr_destroy(&ca);
    *out = f;
    return KUBE_OK;
}

static void lister_free(kube_lister *l)
{
    kube_store_free(l->store);
    free(l->handlers);
    free(l->ns);
    free(l->field_selector);
    free(l->label_selector);
    free(l);
}

void kube_factory_free(kube_factory *f)
{
    if (!f)
        return;
    kube_hub_free(f->hub); /* stops it first: no handler runs after this */
    while (f->listers) {
        kube_lister *l = f->listers;
        f->listers = l->next;
        lister_free(l);
    }
    pthread_cond_destroy(&f->wait_cv);
    pthread_mutex_destroy(&f->wait_mu);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

static int str_same(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* 1 when o asks for the informer l already is. */
static int same_informer(const kube_lister *l, const kube_informer_options *o)
{
    return l->codec == o->codec && str_same(l->ns, o->namespace_) &&
           str_same(l->field_selector, o->field_selector) &&
           str_same(l->label_selector, o->label_selector);
}

static kube_lister *find_locked(kube_factory *f, const kube_resource *r)
{
    kube_lister *l = f->listers;

    while (l && l->res != r)
        l = l->next;
    return l;
}

/* A new lister for o, its informer added to the hub (or its fake store). */
static int lister_new(kube_factory *f, const kube_informer_options *o, kube_lister **out)
{
    kube_lister *l = calloc(1, sizeof(*l));
    int rc = KUBE_OK;

    *out = NULL;
    if (!l)
        return KUBE_ENOMEM;
    l->f = f;
    l->res = o->resource;
    l->codec = o->codec;
    l->fan = (kube_informer_handlers){fan_add, fan_update, fan_delete, l};
    if ((o->namespace_ && !(l->ns = kube_strdup(o->namespace_))) ||
        (o->field_selector && !(l->field_selector = kube_strdup(o->field_selector))) ||
        (o->label_selector && !(l->label_selector = kube_strdup(o->label_selector))))
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc =
            f->hub ? kube_hub_add_informer(f->hub, o, &l->fan, &l->inf) : kube_store_new(&l->store);
    if (rc != KUBE_OK) {
        lister_free(l);
        return rc;
    }
    *out = l;
    return KUBE_OK;
}

int kube_factory_lister(kube_factory *f, const kube_informer_options *o, kube_lister **out)
{
    kube_lister *l;
    int rc = KUBE_OK;

    *out = NULL;
    if (!f || !o || !o->resource || !o->codec)
        return KUBE_EINVAL;
    pthread_mutex_lock(&f->mu);
    l = find_locked(f, o->resource);
    if (l && !same_informer(l, o)) {
        rc = KUBE_EINVAL;
    } else if (!l && (rc = lister_new(f, o, &l)) == KUBE_OK) {
        l->next = f->listers;
        f->listers = l;
    }
    pthread_mutex_unlock(&f->mu);
    if (rc == KUBE_OK)
        *out = l;
    return rc;
}

int kube_factory_start(kube_factory *f)
{
    pthread_mutex_lock(&f->mu);
    f->started = 1;
    pthread_mutex_unlock(&f->mu);
    return f->hub ? kube_hub_start(f->hub) : KUBE_OK;
}

void kube_factory_stop(kube_factory *f)
{
    if (f && f->hub)
        kube_hub_stop(f->hub);
}

int kube_factory_wait_synced(kube_factory *f, long timeout_ms)
{
    return f->hub ? kube_hub_wait_synced(f->hub, timeout_ms) : KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Listers                                                             */
/* ------------------------------------------------------------------ */

int kube_lister_add_handlers(kube_lister *l, const kube_informer_handlers *h)
{
    int rc = KUBE_EINVAL;

    pthread_mutex_lock(&l->f->mu);
    if (!l->f->started) {
        rc = KUBE_ARRAY_RESERVE(l->handlers, l->cap_handlers, l->n_handlers + 1);
        if (rc == KUBE_OK)
            l->handlers[l->n_handlers++] = *h;
    }
    pthread_mutex_unlock(&l->f->mu);
    return rc;
}

kube_object *kube_lister_get(kube_lister *l, const char *ns, const char *name)
{
    if (!l)
        return NULL;
    return l->inf ? kube_informer_get(l->inf, ns ? ns : "", name)
                  : kube_store_get(l->store, ns ? ns : "", name);
}

void kube_lister_foreach(kube_lister *l, void (*fn)(void *ud, kube_object *obj), void *ud)
{
    if (l && l->inf)
        kube_informer_foreach(l->inf, fn, ud);
    else if (l)
        kube_store_foreach(l->store, fn, ud);
}

/* The store l reads: its informer's, or its own (fake). */
static kube_store *store_of(kube_lister *l)
{
    return l->inf ? kube_informer_store(l->inf) : l->store;
}

int kube_lister_add_index(kube_lister *l, const char *name, kube_index_fn fn)
{
    return l ? kube_store_add_index(store_of(l), name, fn) : KUBE_EINVAL;
}

int kube_lister_by_index(kube_lister *l, const char *name, const char *key,
                         void (*fn)(void *ud, kube_object *obj), void *ud)
{
    return l ? kube_store_by_index(store_of(l), name, key, fn, ud) : KUBE_OK;
}

void kube_lister_last_rv(kube_lister *l, char *out, size_t n)
{
    if (l && l->inf)
        kube_informer_last_rv(l->inf, out, n);
    else if (n)
        out[0] = '\0';
}

int kube_lister_has_synced(kube_lister *l)
{
    return l && (!l->inf || kube_informer_has_synced(l->inf));
}

uint64_t kube_lister_generation(kube_lister *l)
{
    return l ? atomic_load(&l->gen) : 0;
}

uint64_t kube_listers_generation(kube_lister *const *ls, size_t n)
{
    uint64_t g = 0;

    for (size_t i = 0; i < n; i++)
        g += kube_lister_generation(ls[i]);
    return g;
}

/* The factory of the first non-NULL lister, or NULL. */
static kube_factory *factory_of(kube_lister *const *ls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ls[i])
            return ls[i]->f;
    return NULL;
}

int kube_listers_wait(kube_lister *const *ls, size_t n, uint64_t *gen, long timeout_ms)
{
    kube_factory *f = factory_of(ls, n);
    struct timespec until;
    uint64_t now;

    if (!f) { /* nothing is listed: nothing can change, wait out the timeout */
        if (timeout_ms > 0) {
            kube_deadline_after(&until, CLOCK_MONOTONIC, timeout_ms);
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
                ;
        }
        return 0;
    }
    kube_deadline_after(&until, CLOCK_MONOTONIC, timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&f->wait_mu);
    atomic_fetch_add(&f->waiters, 1);
    while ((now = kube_listers_generation(ls, n)) == *gen &&
           pthread_cond_timedwait(&f->wait_cv, &f->wait_mu, &until) == 0)
        ;
    now = kube_listers_generation(ls, n);
    atomic_fetch_sub(&f->waiters, 1);
    pthread_mutex_unlock(&f->wait_mu);
    int moved = now != *gen;
    *gen = now;
    return moved;
}

int kube_lister_apply(kube_lister *l, int type, kube_object *obj)
{
    if (!l || l->inf)
        return KUBE_EINVAL;
    return kube_store_apply(l->store, type, obj, &l->fan);
}
