/*
 * kube/serving/authsource.c - where the authentication settings come from, kept
 * current while the server runs. The contract is in authsource.h.
 */
#include "kube/serving/authsource.h"
#include "kube/serving/authsource_testing.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/types/configmap.h"
#include "kube/util/errors.h"
#include "kube/machinery/factory.h"
#include "kube/util/log.h"

typedef struct watched_file {
    char *path; /* NULL: flag not given */
    char *pem;
    size_t len;
    struct timespec mtime;
    off_t size;
    ino_t ino;
} watched_file;

struct kube_authn_source {
    pthread_mutex_t mu;
    kube_client *client;
    watched_file client_ca, rh_ca;
    kube_strlist allowed_names, user_headers, group_headers, extra_prefixes;
    int allowed_names_set;
    cJSON *cm_data; /* last ConfigMap data seen, NULL before */
    kube_authn_config *current;
    uint64_t generation;
    int ready;
};

static int file_changed(const watched_file *f, const struct stat *st)
{
    return st->st_ino != f->ino || st->st_size != f->size ||
           st->st_mtim.tv_sec != f->mtime.tv_sec || st->st_mtim.tv_nsec != f->mtime.tv_nsec;
}

/* Reads f->path when it changed since the last read: *pem receives the new
 * content (caller frees) and f's identity is updated; f->pem is left for the
 * caller to replace. Returns 1 when new content was read, 0 when unchanged,
 * or a negative KUBE_E* code. */
static int read_watched(watched_file *f, char **pem, size_t *len, char *err, size_t errlen)
{
    struct stat st;

    *pem = NULL;
    if (stat(f->path, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read", f->path);
        return KUBE_EIO;
    }
    if (f->pem && !file_changed(f, &st))
        return 0;
    if (kube_read_file(f->path, pem, len) != KUBE_OK) {
        snprintf(err, errlen, "%s: cannot read", f->path);
        return KUBE_EIO;
    }
    f->mtime = st.st_mtim;
    f->size = st.st_size;
    f->ino = st.st_ino;
    return 1;
}

/* Installs new content in f; returns the content it replaced. */
static char *swap_pem(watched_file *f, char *pem, size_t len)
{
    char *old = f->pem;

    f->pem = pem;
    f->len = pem ? len : 0;
    return old;
}

static int copy_list(kube_strlist *dst, const kube_strlist *src)
{
    for (size_t i = 0; src && i < src->n; i++)
        if (kube_strlist_add(dst, src->v[i]) != KUBE_OK)
            return KUBE_ENOMEM;
    return KUBE_OK;
}

/* Sets a list from its flag when given; otherwise, when the whole
 * requestheader block comes from flags, to the default (dflt, may be NULL
 * for an empty list). */
static int override_list(kube_authn_config *cfg, kube_authn_list which, const kube_strlist *l,
                         int flag_given, int rh_flag, const char *dflt)
{
    kube_strlist d = {0};
    int rc;

    if (flag_given || (l->n > 0 && which != KUBE_AUTHN_ALLOWED_NAMES))
        return kube_authn_config_set_list(cfg, which, l);
    if (!rh_flag)
        return KUBE_OK;
    rc = dflt ? kube_strlist_add(&d, dflt) : KUBE_OK;
    if (rc == KUBE_OK)
        rc = kube_authn_config_set_list(cfg, which, &d);
    kube_strlist_free(&d);
    return rc;
}

/* Flags applied over the ConfigMap settings. */
static int apply_flags(kube_authn_source *s, kube_authn_config *cfg, char *err, size_t errlen)
{
    int rh_flag = s->rh_ca.path != NULL;
    int rc = KUBE_OK;

    if (s->client_ca.path)
        rc = kube_authn_config_set_client_ca(cfg, s->client_ca.pem, s->client_ca.len,
                                             s->client_ca.path, err, errlen);
    if (rc == KUBE_OK && rh_flag)
        rc = kube_authn_config_set_requestheader_ca(cfg, s->rh_ca.pem, s->rh_ca.len, s->rh_ca.path,
                                                    err, errlen);
    if (rc == KUBE_OK)
        rc = override_list(cfg, KUBE_AUTHN_ALLOWED_NAMES, &s->allowed_names, s->allowed_names_set,
                           rh_flag, NULL);
    if (rc == KUBE_OK)
        rc = override_list(cfg, KUBE_AUTHN_USERNAME_HEADERS, &s->user_headers, 0, rh_flag,
                           "X-Remote-User");
    if (rc == KUBE_OK)
        rc = override_list(cfg, KUBE_AUTHN_GROUP_HEADERS, &s->group_headers, 0, rh_flag,
                           "X-Remote-Group");
    if (rc == KUBE_OK)
        rc = override_list(cfg, KUBE_AUTHN_EXTRA_PREFIXES, &s->extra_prefixes, 0, rh_flag,
                           "X-Remote-Extra-");
    return rc;
}

/* Builds a snapshot from the ConfigMap data and the flags; installs it.
 * Called with s->mu held. */
static int rebuild(kube_authn_source *s, char *err, size_t errlen)
{
    kube_authn_config *cfg, *old;
    int rc = kube_authn_config_new(&cfg);

    if (rc == KUBE_OK && s->cm_data)
        rc = kube_authn_config_from_configmap(cfg, s->cm_data, err, errlen);
    if (rc == KUBE_OK)
        rc = apply_flags(s, cfg, err, errlen);
    if (rc != KUBE_OK) {
        kube_authn_config_unref(cfg);
        return rc;
    }
    old = s->current;
    s->current = cfg;
    s->generation++;
    kube_authn_config_unref(old);
    return KUBE_OK;
}

static int load_initial(watched_file *f, char *err, size_t errlen)
{
    char *pem;
    size_t len = 0;

    if (read_watched(f, &pem, &len, err, errlen) < 0)
        return KUBE_EIO;
    free(swap_pem(f, pem, len));
    return KUBE_OK;
}

int kube_authn_source_new(const kube_authn_source_options *o, kube_authn_source **out, char *err,
                          size_t errlen)
{
    kube_authn_source *s = calloc(1, sizeof(*s));
    int rc = KUBE_OK;

    *out = NULL;
    if (!s)
        return KUBE_ENOMEM;
    pthread_mutex_init(&s->mu, NULL);
    s->client = o->client;
    s->ready = o->client == NULL;
    s->allowed_names_set = o->allowed_names_set;
    if ((o->client_ca_file && !(s->client_ca.path = kube_strdup(o->client_ca_file))) ||
        (o->requestheader_ca_file && !(s->rh_ca.path = kube_strdup(o->requestheader_ca_file))) ||
        copy_list(&s->allowed_names, o->allowed_names) != KUBE_OK ||
        copy_list(&s->user_headers, o->username_headers) != KUBE_OK ||
        copy_list(&s->group_headers, o->group_headers) != KUBE_OK ||
        copy_list(&s->extra_prefixes, o->extra_prefixes) != KUBE_OK)
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK && s->client_ca.path)
        rc = load_initial(&s->client_ca, err, errlen);
    if (rc == KUBE_OK && s->rh_ca.path)
        rc = load_initial(&s->rh_ca, err, errlen);
    if (rc == KUBE_OK)
        rc = rebuild(s, err, errlen);
    if (rc != KUBE_OK) {
        kube_authn_source_free(s);
        return rc;
    }
    *out = s;
    return KUBE_OK;
}

static void install_configmap(kube_authn_source *s, const cJSON *data, const char *why)
{
    cJSON *copy = cJSON_Duplicate(data, 1);
    cJSON *old;
    char err[512] = "";

    if (!copy)
        return;
    pthread_mutex_lock(&s->mu);
    old = s->cm_data;
    s->cm_data = copy;
    if (rebuild(s, err, sizeof(err)) != KUBE_OK) {
        KLOG_ERROR("%s/%s: %s; keeping the previous authentication settings",
                   KUBE_AUTHN_CONFIGMAP_NAMESPACE, KUBE_AUTHN_CONFIGMAP_NAME, err);
        s->cm_data = old;
        old = copy;
    } else {
        s->ready = 1;
        KLOG_V(1, "authentication settings %s from %s/%s", why, KUBE_AUTHN_CONFIGMAP_NAMESPACE,
               KUBE_AUTHN_CONFIGMAP_NAME);
    }
    pthread_mutex_unlock(&s->mu);
    cJSON_Delete(old);
}

void kube_authn_source_apply_configmap(kube_authn_source *s, const cJSON *data)
{
    install_configmap(s, data, "replaced");
}

static void on_configmap(kube_authn_source *s, kube_object *obj, const char *why)
{
    const kube_configmap *cm = kube_configmap_from(obj);
    cJSON *data;

    if (!cm || strcmp(obj->meta.name, KUBE_AUTHN_CONFIGMAP_NAME) != 0)
        return;
    data = cJSON_CreateObject();
    for (size_t i = 0; data && i < cm->n_data; i++)
        cJSON_AddStringToObject(data, cm->data[i].key, cm->data[i].value);
    if (data)
        install_configmap(s, data, why);
    cJSON_Delete(data);
}

static void on_add(void *ud, kube_object *obj)
{
    on_configmap(ud, obj, "loaded");
}

static void on_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    (void)old_obj;
    on_configmap(ud, new_obj, "updated");
}

static void on_delete(void *ud, kube_object *obj)
{
    (void)ud;
    if (strcmp(obj->meta.name, KUBE_AUTHN_CONFIGMAP_NAME) == 0)
        KLOG_WARN("%s/%s was deleted; keeping the last authentication settings",
                  KUBE_AUTHN_CONFIGMAP_NAMESPACE, KUBE_AUTHN_CONFIGMAP_NAME);
}

int kube_authn_source_lookup(kube_authn_source *s, int tolerate, char *err, size_t errlen)
{
    kube_status st = {0};
    cJSON *cm = NULL;
    int rc;

    if (!s->client)
        return KUBE_OK;
    rc = kube_api_get(s->client, &KUBE_RES_CONFIGMAPS, KUBE_AUTHN_CONFIGMAP_NAMESPACE,
                      KUBE_AUTHN_CONFIGMAP_NAME, &cm, &st);
    if (rc == KUBE_OK && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cm, "data"))) {
        install_configmap(s, cJSON_GetObjectItemCaseSensitive(cm, "data"), "loaded");
    } else if (rc == KUBE_EFORBIDDEN) {
        KLOG_WARN("Unable to get configmap/%s in %s.  Usually fixed by 'kubectl create "
                  "rolebinding -n %s ROLEBINDING_NAME --role=extension-apiserver-authentication-"
                  "reader --serviceaccount=YOUR_NS:YOUR_SA'",
                  KUBE_AUTHN_CONFIGMAP_NAME, KUBE_AUTHN_CONFIGMAP_NAMESPACE,
                  KUBE_AUTHN_CONFIGMAP_NAMESPACE);
    }
    cJSON_Delete(cm);
    if (rc == KUBE_ENOTFOUND)
        rc = KUBE_OK; /* no ConfigMap: no client CA and no front proxy, as upstream */
    pthread_mutex_lock(&s->mu);
    s->ready = s->ready || rc == KUBE_OK || tolerate;
    pthread_mutex_unlock(&s->mu);
    if (rc == KUBE_OK)
        return KUBE_OK;
    if (tolerate) {
        KLOG_WARN("Error looking up in-cluster authentication configuration: %s",
                  st.message[0] ? st.message : kube_strerror(rc));
        KLOG_WARN("Continuing without authentication configuration. This may treat all requests "
                  "as anonymous.");
        KLOG_WARN("To require authentication configuration lookup to succeed, set "
                  "--authentication-tolerate-lookup-failure=false");
        return KUBE_OK;
    }
    snprintf(err, errlen, "unable to load configmap based request-header-client-ca-file: %s",
             st.message[0] ? st.message : kube_strerror(rc));
    return rc;
}

int kube_authn_source_watch(kube_authn_source *s, kube_factory *f)
{
    kube_informer_options io = {0};
    kube_informer_handlers h = {on_add, on_update, on_delete, s};
    kube_lister *l = NULL;
    int rc;

    if (!s->client)
        return KUBE_OK;
    io.resource = &KUBE_RES_CONFIGMAPS;
    io.codec = &kube_configmap_codec;
    io.namespace_ = KUBE_AUTHN_CONFIGMAP_NAMESPACE;
    io.field_selector = "metadata.name=" KUBE_AUTHN_CONFIGMAP_NAME;
    rc = kube_factory_lister(f, &io, &l);
    if (rc == KUBE_OK)
        rc = kube_lister_add_handlers(l, &h);
    return rc;
}

void kube_authn_source_free(kube_authn_source *s)
{
    if (!s)
        return;
    kube_authn_config_unref(s->current);
    cJSON_Delete(s->cm_data);
    free(s->client_ca.path);
    free(s->client_ca.pem);
    free(s->rh_ca.path);
    free(s->rh_ca.pem);
    kube_strlist_free(&s->allowed_names);
    kube_strlist_free(&s->user_headers);
    kube_strlist_free(&s->group_headers);
    kube_strlist_free(&s->extra_prefixes);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

kube_authn_config *kube_authn_source_get(kube_authn_source *s)
{
    kube_authn_config *cfg;

    pthread_mutex_lock(&s->mu);
    cfg = kube_authn_config_ref(s->current);
    pthread_mutex_unlock(&s->mu);
    return cfg;
}

int kube_authn_source_ready(kube_authn_source *s)
{
    int r;

    pthread_mutex_lock(&s->mu);
    r = s->ready;
    pthread_mutex_unlock(&s->mu);
    return r;
}

uint64_t kube_authn_source_generation(kube_authn_source *s)
{
    uint64_t g;

    pthread_mutex_lock(&s->mu);
    g = s->generation;
    pthread_mutex_unlock(&s->mu);
    return g;
}

/* Re-reads one file; on new content returns 1 with the previous content in
 * *old (to restore if the rebuild fails). */
static int refresh_file(watched_file *f, char **old, char *err, size_t errlen)
{
    char *pem;
    size_t len = 0;
    int rc;

    *old = NULL;
    if (!f->path)
        return 0;
    rc = read_watched(f, &pem, &len, err, errlen);
    if (rc > 0)
        *old = swap_pem(f, pem, len);
    return rc;
}

static void restore_file(watched_file *f, char *old)
{
    char *failed;

    if (!old)
        return;
    failed = swap_pem(f, old, strlen(old));
    free(failed);
}

void kube_authn_source_check_files(kube_authn_source *s)
{
    char err[512] = "";
    char *old_client = NULL, *old_rh = NULL;
    int c, r;

    pthread_mutex_lock(&s->mu);
    c = refresh_file(&s->client_ca, &old_client, err, sizeof(err));
    r = c < 0 ? 0 : refresh_file(&s->rh_ca, &old_rh, err, sizeof(err));
    if (c < 0 || r < 0) {
        KLOG_WARN("authentication CA not reloaded: %s", err);
        restore_file(&s->client_ca, old_client);
        restore_file(&s->rh_ca, old_rh);
    } else if ((c > 0 || r > 0) && rebuild(s, err, sizeof(err)) != KUBE_OK) {
        /* the file identities stay recorded: retried when they change again */
        KLOG_ERROR("reloaded CA file rejected: %s; keeping the previous settings", err);
        restore_file(&s->client_ca, old_client);
        restore_file(&s->rh_ca, old_rh);
    } else {
        if (c > 0 || r > 0)
            KLOG_INFO("authentication CA files reloaded");
        free(old_client);
        free(old_rh);
    }
    pthread_mutex_unlock(&s->mu);
}
