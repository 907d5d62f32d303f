/*
 * kube/machinery/recorder_event.c - one events.k8s.io/v1 Event as the recorder
 * holds it: built and checked from a caller's reference, reason and note,
 * keyed for aggregation, and encoded as the POST body or the series PATCH
 * (recorder.h).
 */
#include "kube/machinery/recorder_testing.h"
#include "kube/util/clock.h"

/* ---- events ----------------------------------------------------------- */

/* ObjectReference fields, in the order of ref_keys. */
static const char *const ref_keys[REF_FIELDS] = {
    "kind", "apiVersion", "namespace", "name", "uid", "resourceVersion", "fieldPath",
};

static const char *ref_field(const kube_recorder_ref *r, int i)
{
    const char *v[REF_FIELDS] = {r->kind, r->api_version,      r->namespace_, r->name,
                                 r->uid,  r->resource_version, r->field_path};
    return v[i];
}

static int ref_copy(event_ref *dst, const kube_recorder_ref *src)
{
    for (int i = 0; i < REF_FIELDS; i++) {
        const char *v = ref_field(src, i);

        dst->f[i] = NULL;
        if (v && v[0] && !(dst->f[i] = kube_strdup(v)))
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static void ref_free(event_ref *r)
{
    for (int i = 0; i < REF_FIELDS; i++)
        free(r->f[i]);
}

void kube_recorder_event_free(kube_recorder_event *ev)
{
    if (!ev)
        return;
    free(ev->name);
    free(ev->ns);
    free(ev->type);
    free(ev->reason);
    free(ev->action);
    free(ev->note);
    free(ev->controller);
    free(ev->instance);
    free(ev->key);
    ref_free(&ev->regarding);
    ref_free(&ev->related);
    free(ev);
}

/* Length-prefixed so that no two different field lists give one key.
 * Digits by hand: a printf per field was most of the cost of an event. */
static int key_put(kube_buf *b, const char *s)
{
    char num[24];
    size_t len = s ? strlen(s) : 0, i = sizeof(num);

    num[--i] = ':';
    do {
        num[--i] = (char)('0' + len % 10);
        len /= 10;
    } while (len);
    if (kube_buf_append(b, num + i, sizeof(num) - i) != KUBE_OK)
        return KUBE_ENOMEM;
    if (s && kube_buf_puts(b, s) != KUBE_OK)
        return KUBE_ENOMEM;
    return kube_buf_append(b, ";", 1);
}

static int event_make_key(kube_recorder_event *ev)
{
    kube_buf b = KUBE_BUF_INIT;
    const char *plain[] = {ev->type,       ev->action,   ev->reason,
                           ev->controller, ev->instance, ev->note};
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < sizeof(plain) / sizeof(plain[0]); i++)
        rc = key_put(&b, plain[i]);
    for (int i = 0; rc == KUBE_OK && i < REF_FIELDS; i++)
        rc = key_put(&b, ev->regarding.f[i]);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(&b, ev->has_related ? "R;" : "-;");
    for (int i = 0; rc == KUBE_OK && i < REF_FIELDS; i++)
        rc = key_put(&b, ev->related.f[i]);
    if (rc == KUBE_OK && !(ev->key = kube_buf_take(&b)))
        rc = KUBE_ENOMEM;
    kube_buf_free(&b);
    return rc;
}

/* The note cut to NOTE_MAX bytes without splitting a UTF-8 sequence. */
static char *note_copy(const char *note)
{
    size_t len = note ? strlen(note) : 0;
    char *out;

    if (len > NOTE_MAX) {
        len = NOTE_MAX;
        while (len > 0 && ((unsigned char)note[len] & 0xC0) == 0x80)
            len--;
        KLOG_V(2, "event note cut to %zu bytes", len);
    }
    out = malloc(len + 1);
    if (!out)
        return NULL;
    if (len)
        memcpy(out, note, len);
    out[len] = '\0';
    return out;
}

static int event_check(const kube_recorder_ref *regarding, const char *type, const char *reason,
                       const char *action, const char *controller, const char *instance)
{
    if (!regarding || !regarding->name || !regarding->name[0])
        return KUBE_EINVAL;
    if (!type ||
        (strcmp(type, KUBE_RECORDER_NORMAL) != 0 && strcmp(type, KUBE_RECORDER_WARNING) != 0))
        return KUBE_EINVAL;
    if (!reason || !reason[0] || !action || !action[0])
        return KUBE_EINVAL;
    if (!controller || !controller[0] || !instance || !instance[0])
        return KUBE_EINVAL;
    return KUBE_OK;
}

static int event_fill(kube_recorder_event *ev, const kube_recorder_ref *regarding,
                      const kube_recorder_ref *related, const char *type, const char *reason,
                      const char *action, const char *note, const char *controller,
                      const char *instance, int64_t wall_ns)
{
    const char *ns =
        regarding->namespace_ && regarding->namespace_[0] ? regarding->namespace_ : "default";
    kube_buf name = KUBE_BUF_INIT;

    if (kube_buf_printf(&name, "%s.%llx", regarding->name, (unsigned long long)wall_ns) ||
        !(ev->name = kube_buf_take(&name))) {
        kube_buf_free(&name);
        return KUBE_ENOMEM;
    }
    kube_time_format(wall_ns / 1000, 1, ev->event_time, sizeof(ev->event_time));
    ev->wall_ns = wall_ns;
    ev->ns = kube_strdup(ns);
    ev->type = kube_strdup(type);
    ev->reason = kube_strdup(reason);
    ev->action = kube_strdup(action);
    ev->note = note_copy(note);
    ev->controller = kube_strdup(controller);
    ev->instance = kube_strdup(instance);
    if (!ev->ns || !ev->type || !ev->reason || !ev->action || !ev->note || !ev->controller ||
        !ev->instance)
        return KUBE_ENOMEM;
    if (ref_copy(&ev->regarding, regarding) != KUBE_OK)
        return KUBE_ENOMEM;
    ev->has_related = related != NULL;
    if (related && ref_copy(&ev->related, related) != KUBE_OK)
        return KUBE_ENOMEM;
    return event_make_key(ev);
}

int kube_recorder_event_new(const kube_recorder_ref *regarding, const kube_recorder_ref *related,
                            const char *type, const char *reason, const char *action,
                            const char *note, const char *controller, const char *instance,
                            int64_t wall_ns, kube_recorder_event **out)
{
    kube_recorder_event *ev;
    int rc;

    *out = NULL;
    if ((rc = event_check(regarding, type, reason, action, controller, instance)) != KUBE_OK)
        return rc;
    ev = calloc(1, sizeof(*ev));
    if (!ev)
        return KUBE_ENOMEM;
    rc = event_fill(ev, regarding, related, type, reason, action, note, controller, instance,
                    wall_ns);
    if (rc != KUBE_OK) {
        kube_recorder_event_free(ev);
        return rc;
    }
    *out = ev;
    return KUBE_OK;
}

const char *kube_recorder_event_name(const kube_recorder_event *ev)
{
    return ev->name;
}

const char *kube_recorder_event_namespace(const kube_recorder_event *ev)
{
    return ev->ns;
}

int64_t kube_recorder_event_series_count(const kube_recorder_event *ev)
{
    return ev->series_count;
}

int kube_recorder_event_isomorphic(const kube_recorder_event *a, const kube_recorder_event *b)
{
    return strcmp(a->key, b->key) == 0;
}

static cJSON *ref_json(const event_ref *r)
{
    cJSON *o = cJSON_CreateObject();

    for (int i = 0; o && i < REF_FIELDS; i++) {
        if (r->f[i] && !cJSON_AddStringToObject(o, ref_keys[i], r->f[i])) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

static cJSON *series_json(const kube_recorder_event *ev)
{
    cJSON *s = cJSON_CreateObject();

    if (!s || !cJSON_AddNumberToObject(s, "count", (double)ev->series_count) ||
        !cJSON_AddStringToObject(s, "lastObservedTime", ev->series_last)) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

/* Adds item to o under key; takes item even on failure. */
static int add_item(cJSON *o, const char *key, cJSON *item)
{
    if (!item)
        return KUBE_ENOMEM;
    if (!cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

typedef struct kv {
    const char *key;
    const char *value;
} kv;

/* Adds the non-empty string values. */
static int add_strings(cJSON *o, const kv *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fields[i].value && fields[i].value[0] &&
            !cJSON_AddStringToObject(o, fields[i].key, fields[i].value))
            return KUBE_ENOMEM;
    return KUBE_OK;
}

static int event_body_fill(const kube_recorder_event *ev, cJSON *body)
{
    const kv meta_fields[] = {{"name", ev->name}, {"namespace", ev->ns}};
    const kv fields[] = {
        {"apiVersion", "events.k8s.io/v1"},
        {"kind", "Event"},
        {"eventTime", ev->event_time},
        {"reportingController", ev->controller},
        {"reportingInstance", ev->instance},
        {"action", ev->action},
        {"reason", ev->reason},
        {"note", ev->note},
        {"type", ev->type},
    };
    cJSON *meta = cJSON_CreateObject();
    int rc;

    if (!meta || add_strings(meta, meta_fields, 2) != KUBE_OK) {
        cJSON_Delete(meta);
        return KUBE_ENOMEM;
    }
    if ((rc = add_item(body, "metadata", meta)) ||
        (rc = add_strings(body, fields, sizeof(fields) / sizeof(fields[0]))) ||
        (rc = add_item(body, "regarding", ref_json(&ev->regarding))))
        return rc;
    if (ev->has_related && (rc = add_item(body, "related", ref_json(&ev->related))))
        return rc;
    if (ev->series_count >= 2 && (rc = add_item(body, "series", series_json(ev))))
        return rc;
    return KUBE_OK;
}

int kube_recorder_event_body(const kube_recorder_event *ev, cJSON **out)
{
    cJSON *body = cJSON_CreateObject();

    *out = NULL;
    if (!body || event_body_fill(ev, body) != KUBE_OK) {
        cJSON_Delete(body);
        return KUBE_ENOMEM;
    }
    *out = body;
    return KUBE_OK;
}

int kube_recorder_event_series_patch(const kube_recorder_event *ev, cJSON **out)
{
    cJSON *patch = cJSON_CreateObject();

    *out = NULL;
    if (!patch || add_item(patch, "series", series_json(ev)) != KUBE_OK) {
        cJSON_Delete(patch);
        return KUBE_ENOMEM;
    }
    *out = patch;
    return KUBE_OK;
}
