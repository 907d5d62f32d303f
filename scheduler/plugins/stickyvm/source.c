/*
 * scheduler/plugins/stickyvm/source.c - StickyVM's reads of VMIs and VMs:
 * cache, brief wait, bounded GETs (see source.h).
 */
#include "plugins/stickyvm/source.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

struct stickyvm_source {
    stickyvm_lookup lookup; /* get NULL: the listers below */
    kube_lister *vmis, *vms;
    kube_client *client;
    atomic_ulong *reads;
};

int stickyvm_source_new(const stickyvm_lookup *lk, kube_client *client, atomic_ulong *reads,
                        stickyvm_source **out)
{
    stickyvm_source *s = calloc(1, sizeof(*s));

    *out = s;
    if (!s)
        return KUBE_ENOMEM;
    if (lk)
        s->lookup = *lk;
    s->client = client;
    s->reads = reads;
    return KUBE_OK;
}

void stickyvm_source_set_listers(stickyvm_source *s, kube_lister *vmis, kube_lister *vms)
{
    s->vmis = vmis;
    s->vms = vms;
}

void stickyvm_source_free(stickyvm_source *s)
{
    free(s);
}

/* The lister of r (NULL before set_listers or with a lookup). */
static kube_lister *lister_for(stickyvm_source *s, const kube_resource *r)
{
    return r == &KUBE_RES_VMIS ? s->vmis : s->vms;
}

kube_object *stickyvm_source_cached(stickyvm_source *s, const kube_resource *r, const char *ns,
                                    const char *name, const char *uid)
{
    kube_object *o = NULL;
    if (s->lookup.get)
        o = s->lookup.get(s->lookup.ud, r, ns, name);
    else if (lister_for(s, r))
        o = kube_lister_get(lister_for(s, r), ns, name);
    if (o && uid && *uid && strcmp(o->meta.uid, uid) != 0) {
        kube_object_unref(o);
        o = NULL;
    }
    return o;
}

/* Waits up to STICKYVM_CACHE_WAIT_MS for a synced lister to deliver the
 * object. A new reference or NULL. */
static kube_object *wait_cached(stickyvm_source *s, const kube_resource *r, const char *ns,
                                const char *name, const char *uid)
{
    kube_lister *l = lister_for(s, r);
    kube_object *o = NULL;
    int64_t until = kube_now_ms() + STICKYVM_CACHE_WAIT_MS, left;
    uint64_t gen;

    if (s->lookup.get || !l || !kube_lister_has_synced(l))
        return NULL;
    gen = kube_lister_generation(l);
    while (!(o = stickyvm_source_cached(s, r, ns, name, uid)) && (left = until - kube_now_ms()) > 0)
        kube_listers_wait(&l, 1, &gen, (long)left);
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
