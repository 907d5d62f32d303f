/*
 * scheduler/plugins/stickyvm_source.c - StickyVM's reads of VMIs and VMs:
 * cache, brief wait, bounded GETs (see stickyvm_source.h).
 */
#include "plugins/stickyvm_source.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

struct stickyvm_source {
    stickyvm_lookup lookup; /* get NULL: the informers below */
    kube_informer *vmis, *vms;
    kube_client *client;
    atomic_ulong *reads;

    pthread_mutex_t mu; /* waiters */
    pthread_cond_t cv;  /* an informer delivered an add/update */
    int waiters;
};

int stickyvm_source_new(const stickyvm_lookup *lk, kube_client *client, atomic_ulong *reads,
                        stickyvm_source **out)
{
    pthread_condattr_t ca;
    stickyvm_source *s = calloc(1, sizeof(*s));

    *out = s;
    if (!s || pthread_condattr_init(&ca) != 0) {
        free(s);
        *out = NULL;
        return KUBE_ENOMEM;
    }
    if (lk)
        s->lookup = *lk;
    s->client = client;
    s->reads = reads;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    return KUBE_OK;
}

void stickyvm_source_set_informers(stickyvm_source *s, kube_informer *vmis, kube_informer *vms)
{
    s->vmis = vmis;
    s->vms = vms;
}

void stickyvm_source_free(stickyvm_source *s)
{
    if (!s)
        return;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* The informer of r (NULL before set_informers or with a lookup). */
static kube_informer *informer_for(stickyvm_source *s, const kube_resource *r)
{
    return r == &KUBE_RES_VMIS ? s->vmis : s->vms;
}

kube_object *stickyvm_source_cached(stickyvm_source *s, const kube_resource *r, const char *ns,
                                    const char *name, const char *uid)
{
    kube_object *o = NULL;
    if (s->lookup.get)
        o = s->lookup.get(s->lookup.ud, r, ns, name);
    else if (informer_for(s, r))
        o = kube_informer_get(informer_for(s, r), ns, name);
    if (o && uid && *uid && strcmp(o->meta.uid, uid) != 0) {
        kube_object_unref(o);
        o = NULL;
    }
    return o;
}

void stickyvm_source_notify(stickyvm_source *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->waiters)
        pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Waits up to STICKYVM_CACHE_WAIT_MS for a synced informer to deliver the
 * object. A new reference or NULL. */
static kube_object *wait_cached(stickyvm_source *s, const kube_resource *r, const char *ns,
                                const char *name, const char *uid)
{
    kube_informer *inf = informer_for(s, r);
    kube_object *o = NULL;
    struct timespec dl;
    if (s->lookup.get || !inf || !kube_informer_has_synced(inf))
        return NULL;
    kube_deadline_after(&dl, CLOCK_MONOTONIC, STICKYVM_CACHE_WAIT_MS);
    pthread_mutex_lock(&s->mu);
    s->waiters++;
    int rc = 0;
    while (!(o = stickyvm_source_cached(s, r, ns, name, uid)) && rc == 0)
        rc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
    s->waiters--;
    pthread_mutex_unlock(&s->mu);
    return o;
}

/* One GET of ns/name, decoded. KUBE_ENOTFOUND also when the uid differs
 * (the object named by the owner reference is gone). */
static int get_once(stickyvm_source *s, const kube_resource *r, const kube_codec *codec,
                    const char *ns, const char *name, const char *uid, kube_object **out)
{
    cJSON *json = NULL;
    kube_status st;
    *out = NULL;
    if (!s->client)
        return KUBE_ENOTFOUND;
    if (s->reads)
        atomic_fetch_add_explicit(s->reads, 1, memory_order_relaxed);
    int rc = kube_api_get(s->client, r, ns, name, &json, &st);
    if (rc == KUBE_OK)
        rc = codec->decode(json, out);
    cJSON_Delete(json);
    if (rc == KUBE_OK && uid && *uid && strcmp((*out)->meta.uid, uid) != 0) {
        kube_object_unref(*out);
        *out = NULL;
        rc = KUBE_ENOTFOUND;
    }
    return rc;
}

int stickyvm_source_fetch(stickyvm_source *s, const kube_resource *r, const kube_codec *codec,
                          const char *ns, const kube_owner_ref *ref, int *gets, kube_object **out)
{
    if ((*out = stickyvm_source_cached(s, r, ns, ref->name, ref->uid)) ||
        (*out = wait_cached(s, r, ns, ref->name, ref->uid)))
        return KUBE_OK;
    if (*gets <= 0)
        return KUBE_ENOTFOUND;
    (*gets)--;
    return get_once(s, r, codec, ns, ref->name, ref->uid, out);
}
