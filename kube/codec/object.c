/*
 * kube/codec/object.c - reference counting, metadata decoding and the JSON
 * getters every decoder shares.
 */
#include "kube/codec/object.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/codec/intern.h"

kube_object *kube_object_ref(kube_object *obj)
{
    if (obj)
        atomic_fetch_add_explicit(&obj->refs, 1, memory_order_relaxed);
    return obj;
}

void kube_object_unref(kube_object *obj)
{
    if (!obj)
        return;
    if (atomic_fetch_sub_explicit(&obj->refs, 1, memory_order_acq_rel) == 1)
        obj->codec->destroy(obj);
}

void kube_object_free_block(kube_object *obj)
{
    free(obj);
}

static const char *kv_find(const kube_kv *kv, size_t n, const char *key)
{
    if (!key)
        return NULL;
    /* keys are mostly pooled (kube/codec/intern.h), so an equal key is often the
     * same pointer; else most differ in the first byte */
    for (size_t i = 0; i < n; i++) {
        const char *k = kv[i].key;
        if (k == key || (k[0] == key[0] && strcmp(k, key) == 0))
            return kv[i].value;
    }
    return NULL;
}

int kube_kv_set_equal(const kube_kv *a, size_t na, const kube_kv *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        const char *v = kv_find(b, nb, a[i].key);
        if (!v || strcmp(a[i].value, v))
            return 0;
    }
    return 1;
}

const char *kube_meta_label(const kube_meta *m, const char *key)
{
    return m ? kv_find(m->labels, m->n_labels, key) : NULL;
}

const char *kube_meta_annotation(const kube_meta *m, const char *key)
{
    return m ? kv_find(m->annotations, m->n_annotations, key) : NULL;
}

const kube_owner_ref *kube_meta_controller(const kube_meta *m)
{
    if (!m)
        return NULL;
    for (size_t i = 0; i < m->n_owners; i++)
        if (m->owners[i].controller)
            return &m->owners[i];
    return NULL;
}

/* ---- time ---- */

/* Reads exactly n decimal digits. */
static int read_digits(const char **s, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        char c = (*s)[i];
        if (c < '0' || c > '9')
            return KUBE_EPARSE;
        v = v * 10 + (c - '0');
    }
    *s += n;
    *out = v;
    return KUBE_OK;
}

static int expect_char(const char **s, char c)
{
    if (**s != c)
        return KUBE_EPARSE;
    (*s)++;
    return KUBE_OK;
}

static int is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* ".ddddddddd": up to 9 digits, kept as microseconds (truncated). */
static int read_fraction(const char **s, int64_t *us)
{
    int n = 0;
    int64_t v = 0;

    *us = 0;
    if (**s != '.')
        return KUBE_OK;
    (*s)++;
    while (**s >= '0' && **s <= '9') {
        if (++n > 9)
            return KUBE_EPARSE;
        if (n <= 6)
            v = v * 10 + (**s - '0');
        (*s)++;
    }
    if (n == 0)
        return KUBE_EPARSE;
    for (int i = n; i < 6; i++)
        v *= 10;
    *us = v;
    return KUBE_OK;
}

static int read_offset(const char **s, int *offset_s)
{
    int sign, hh, mm;

    if (**s == 'Z') {
        (*s)++;
        *offset_s = 0;
        return KUBE_OK;
    }
    if (**s != '+' && **s != '-')
        return KUBE_EPARSE;
    sign = **s == '-' ? -1 : 1;
    (*s)++;
    if (read_digits(s, 2, &hh) || expect_char(s, ':') || read_digits(s, 2, &mm) || hh > 23 ||
        mm > 59)
        return KUBE_EPARSE;
    *offset_s = sign * (hh * 3600 + mm * 60);
    return KUBE_OK;
}

int kube_time_parse(const char *s, int64_t *unix_us)
{
    int y, mo, d, h, mi, sec, off;
    int64_t frac, secs;

    if (!s || !unix_us)
        return KUBE_EINVAL;
    if (read_digits(&s, 4, &y) || expect_char(&s, '-') || read_digits(&s, 2, &mo) ||
        expect_char(&s, '-') || read_digits(&s, 2, &d) || expect_char(&s, 'T') ||
        read_digits(&s, 2, &h) || expect_char(&s, ':') || read_digits(&s, 2, &mi) ||
        expect_char(&s, ':') || read_digits(&s, 2, &sec) || read_fraction(&s, &frac) ||
        read_offset(&s, &off) || *s != '\0')
        return KUBE_EPARSE;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
        return KUBE_EPARSE;
    secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
    *unix_us = secs * 1000000 + frac;
    return KUBE_OK;
}

const char *kube_arena_str(struct kube_arena *a, const char *s)
{
    const char *hit = kube_intern_static(s);
    return hit ? hit : kube_arena_strdup(a, s);
}

const char *kube_arena_str_shared(struct kube_arena *a, const char *s)
{
    const char *hit = kube_intern_str(s);
    return hit ? hit : kube_arena_strdup(a, s);
}

/* How a string read from JSON is kept: copied (static when well known),
 * or shared through the pool (kube/codec/intern.h). */
typedef enum str_mode { STR_COPY, STR_SHARED } str_mode;

static const char *keep_str(kube_arena *a, const char *s, str_mode mode)
{
    return mode == STR_SHARED ? kube_arena_str_shared(a, s) : kube_arena_str(a, s);
}

/* ---- JSON getters ---- */

/* cJSON_GetObjectItemCaseSensitive's walk (the first member named key; a
 * member without a name ends it), with the first byte compared inline:
 * most members differ there, and decoders look up ~700 keys per pod. */
static const cJSON *member(const cJSON *obj, const char *key)
{
    for (const cJSON *c = obj->child; c && c->string; c = c->next)
        if (c->string[0] == key[0] && strcmp(c->string, key) == 0)
            return c;
    return NULL;
}

const cJSON *kube_json_get(const cJSON *obj, const char *key)
{
    const cJSON *v;

    if (!cJSON_IsObject(obj) || !key)
        return NULL;
    v = member(obj, key);
    return cJSON_IsNull(v) ? NULL : v;
}

static int json_str(const cJSON *obj, const char *key, kube_arena *a, const char *def,
                    str_mode mode, const char **out)
{
    const cJSON *v = kube_json_get(obj, key);

    if (!v) {
        *out = def;
        return KUBE_OK;
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        return KUBE_EPARSE;
    *out = keep_str(a, v->valuestring, mode);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

int kube_json_str(const cJSON *obj, const char *key, struct kube_arena *a, const char *def,
                  const char **out)
{
    return json_str(obj, key, a, def, STR_COPY, out);
}

int kube_json_str_shared(const cJSON *obj, const char *key, struct kube_arena *a, const char *def,
                         const char **out)
{
    return json_str(obj, key, a, def, STR_SHARED, out);
}

int kube_json_int64(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t def,
                    int64_t *out)
{
    const cJSON *v = kube_json_get(obj, key);
    double d;

    if (!v) {
        *out = def;
        return KUBE_OK;
    }
    if (!cJSON_IsNumber(v))
        return KUBE_EPARSE;
    d = v->valuedouble;
    /* 2^63 is exactly representable; anything >= it does not fit. */
    if (!isfinite(d) || d != floor(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        return KUBE_EPARSE;
    if ((int64_t)d < min || (int64_t)d > max)
        return KUBE_EPARSE;
    *out = (int64_t)d;
    return KUBE_OK;
}

int kube_json_int32(const cJSON *obj, const char *key, int32_t def, int32_t *out)
{
    int64_t v;
    int rc = kube_json_int64(obj, key, INT32_MIN, INT32_MAX, def, &v);

    if (rc == KUBE_OK)
        *out = (int32_t)v;
    return rc;
}

int kube_json_bool(const cJSON *obj, const char *key, int def, int *out)
{
    const cJSON *v = kube_json_get(obj, key);

    if (!v) {
        *out = def;
        return KUBE_OK;
    }
    if (!cJSON_IsBool(v))
        return KUBE_EPARSE;
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return KUBE_OK;
}

int kube_json_object(const cJSON *obj, const char *key, const cJSON **out)
{
    const cJSON *v = kube_json_get(obj, key);

    *out = NULL;
    if (v && !cJSON_IsObject(v))
        return KUBE_EPARSE;
    *out = v;
    return KUBE_OK;
}

int kube_json_array(const cJSON *obj, const char *key, const cJSON **out, size_t *n)
{
    const cJSON *v = kube_json_get(obj, key);

    *out = NULL;
    *n = 0;
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsArray(v))
        return KUBE_EPARSE;
    *out = v;
    *n = (size_t)cJSON_GetArraySize(v);
    return KUBE_OK;
}

/* Fills the elements of arr (objects) with fn, size bytes apart. */
static int decode_objects(const cJSON *arr, kube_arena *a, char *elems, size_t size,
                          kube_json_elem_fn fn, void *ctx)
{
    const cJSON *it;
    size_t i = 0;
    int rc;

    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsObject(it))
            return KUBE_EPARSE;
        if ((rc = fn(it, a, elems + size * i++, ctx)))
            return rc;
    }
    return KUBE_OK;
}

int kube_json_objects(const cJSON *obj, const char *key, kube_arena *a, size_t size,
                      kube_json_elem_fn fn, void *ctx, void **out, size_t *n)
{
    const cJSON *arr;
    char *elems;
    size_t count;
    int rc = kube_json_array(obj, key, &arr, &count);

    *out = NULL;
    *n = 0;
    if (rc != KUBE_OK || count == 0)
        return rc;
    if (!(elems = kube_arena_alloc(a, count * size)))
        return KUBE_ENOMEM;
    if ((rc = decode_objects(arr, a, elems, size, fn, ctx)))
        return rc;
    *out = elems;
    *n = count;
    return KUBE_OK;
}

int kube_json_objects_shared(const cJSON *obj, const char *key, kube_arena *a, size_t size,
                             size_t ptrs, kube_json_elem_fn fn, void **out, size_t *n)
{
    const cJSON *arr;
    kube_arena_stage st;
    char *elems;
    size_t count;
    int rc = kube_json_array(obj, key, &arr, &count);

    *out = NULL;
    *n = 0;
    if (rc != KUBE_OK || count == 0)
        return rc;
    if (!(elems = kube_arena_stage_alloc(a, &st, count * size)))
        return KUBE_ENOMEM;
    if ((rc = decode_objects(arr, a, elems, size, fn, NULL)))
        return rc;
    if (!(*out = (void *)kube_arena_share(a, &st, elems, count, size, ptrs)))
        return KUBE_ENOMEM;
    *n = count;
    return KUBE_OK;
}

/* A string element kept as mode says; JSON null reads as "" (Go leaves
 * the zero value). NULL for other types or when memory runs out. */
static const char *null_or_string(const cJSON *it, kube_arena *a, str_mode mode)
{
    if (cJSON_IsNull(it))
        return "";
    if (!cJSON_IsString(it) || !it->valuestring)
        return NULL;
    return keep_str(a, it->valuestring, mode);
}

static int json_strings(const cJSON *obj, const char *key, kube_arena *a, str_mode mode,
                        const char *const **out, size_t *n)
{
    const cJSON *arr, *it;
    const char **v;
    size_t count, i = 0;
    kube_arena_stage st;
    int rc = kube_json_array(obj, key, &arr, &count);

    *out = NULL;
    *n = 0;
    if (rc != KUBE_OK || count == 0)
        return rc;
    v = mode == STR_SHARED ? kube_arena_stage_alloc(a, &st, count * sizeof(*v))
                           : kube_arena_alloc(a, count * sizeof(*v));
    if (!v)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        if ((v[i++] = null_or_string(it, a, mode)) == NULL)
            return cJSON_IsString(it) ? KUBE_ENOMEM : KUBE_EPARSE;
    }
    if (mode == STR_SHARED &&
        !(v = (const char **)kube_arena_share(a, &st, v, count, sizeof(*v), 1)))
        return KUBE_ENOMEM;
    *out = v;
    *n = count;
    return KUBE_OK;
}

int kube_json_strings(const cJSON *obj, const char *key, struct kube_arena *a,
                      const char *const **out, size_t *n)
{
    return json_strings(obj, key, a, STR_COPY, out, n);
}

int kube_json_strings_shared(const cJSON *obj, const char *key, struct kube_arena *a,
                             const char *const **out, size_t *n)
{
    return json_strings(obj, key, a, STR_SHARED, out, n);
}

/* How string_map() keeps keys and values; a value equal to self (a string
 * of the object, may be NULL) is stored as self. */
typedef struct map_mode {
    str_mode keys, values;
    const char *self;
} map_mode;

static const char *map_value(const cJSON *it, kube_arena *a, const map_mode *mm)
{
    if (mm->self && cJSON_IsString(it) && it->valuestring && strcmp(it->valuestring, mm->self) == 0)
        return mm->self;
    return null_or_string(it, a, mm->values);
}

static int string_map(const cJSON *obj, const char *key, kube_arena *a, const map_mode *mm,
                      const kube_kv **out, size_t *n)
{
    const cJSON *map, *it;
    kube_kv *kv;
    size_t count = 0, i = 0;
    kube_arena_stage st;
    int share = mm->keys == STR_SHARED && mm->values == STR_SHARED;
    int rc = kube_json_object(obj, key, &map);

    *out = NULL;
    *n = 0;
    if (rc != KUBE_OK || !map)
        return rc;
    cJSON_ArrayForEach(it, map) count++;
    if (count == 0)
        return KUBE_OK;
    kv = share ? kube_arena_stage_alloc(a, &st, count * sizeof(*kv))
               : kube_arena_alloc(a, count * sizeof(*kv));
    if (!kv)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, map)
    {
        if (!it->string || (!cJSON_IsString(it) && !cJSON_IsNull(it)))
            return KUBE_EPARSE;
        kv[i].key = keep_str(a, it->string, mm->keys);
        kv[i].value = map_value(it, a, mm);
        if (!kv[i].key || !kv[i].value)
            return KUBE_ENOMEM;
        i++;
    }
    if (share && !(kv = (kube_kv *)kube_arena_share(a, &st, kv, count, sizeof(*kv), 2)))
        return KUBE_ENOMEM;
    *out = kv;
    *n = count;
    return KUBE_OK;
}

int kube_json_string_map(const cJSON *obj, const char *key, struct kube_arena *a,
                         const kube_kv **out, size_t *n)
{
    static const map_mode copy = {STR_COPY, STR_COPY, NULL};
    return string_map(obj, key, a, &copy, out, n);
}

int kube_json_string_map_shared(const cJSON *obj, const char *key, struct kube_arena *a,
                                const kube_kv **out, size_t *n)
{
    static const map_mode shared = {STR_SHARED, STR_SHARED, NULL};
    return string_map(obj, key, a, &shared, out, n);
}

int kube_rv_compare(const char *a, const char *b, int *cmp)
{
    int64_t x, y;

    if (!a || !b || kube_parse_int64(a, 0, INT64_MAX, &x) != KUBE_OK ||
        kube_parse_int64(b, 0, INT64_MAX, &y) != KUBE_OK)
        return KUBE_EINVAL;
    *cmp = x < y ? -1 : x > y;
    return KUBE_OK;
}

int kube_json_time(const cJSON *obj, const char *key, int64_t *unix_us)
{
    const cJSON *v = kube_json_get(obj, key);

    *unix_us = 0;
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v) || !v->valuestring)
        return KUBE_EPARSE;
    return kube_time_parse(v->valuestring, unix_us) == KUBE_OK ? KUBE_OK : KUBE_EPARSE;
}

/* ---- metadata ---- */

static int decode_owner(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_owner_ref *o = elem;
    int rc;

    if ((rc = kube_json_str_shared(j, "apiVersion", a, "", &o->api_version)) ||
        (rc = kube_json_str_shared(j, "kind", a, "", &o->kind)) ||
        (rc = kube_json_str(j, "name", a, "", &o->name)) ||
        (rc = kube_json_str(j, "uid", a, "", &o->uid)) ||
        (rc = kube_json_bool(j, "controller", 0, &o->controller)))
        return rc;
    return KUBE_OK;
}

static int decode_owners(const cJSON *md, kube_arena *a, kube_meta *m)
{
    size_t n;
    int rc = kube_json_objects(md, "ownerReferences", a, sizeof(kube_owner_ref), decode_owner, NULL,
                               (void **)&m->owners, &n);

    m->n_owners = (uint32_t)n;
    return rc;
}

/* Labels and their keys and values are shared (a value equal to the
 * object's name, as kubernetes.io/hostname on nodes, points at the name);
 * annotation keys are shared, their values (often long or unique) copied. */
static int meta_maps(const cJSON *metadata, kube_arena *arena, kube_meta *m, const kube_kv **labels,
                     const kube_kv **annotations)
{
    map_mode lm = {STR_SHARED, STR_SHARED, m->name}, am = {STR_SHARED, STR_COPY, NULL};
    size_t n_labels = 0, n_annotations = 0;
    int rc = string_map(metadata, "labels", arena, &lm, labels, &n_labels);

    if (rc == KUBE_OK)
        rc = string_map(metadata, "annotations", arena, &am, annotations, &n_annotations);
    m->n_labels = (uint32_t)n_labels; /* cJSON counts fit: fewer than INT_MAX */
    m->n_annotations = (uint32_t)n_annotations;
    return rc;
}

int kube_meta_decode(const cJSON *metadata, struct kube_arena *arena, kube_meta *m)
{
    const kube_kv *labels, *annotations;
    int64_t created_us, deleted_us;
    int rc;

    if (!cJSON_IsObject(metadata))
        return KUBE_EPARSE;
    if ((rc = kube_json_str(metadata, "name", arena, NULL, &m->name)))
        return rc;
    if (!m->name || !m->name[0])
        return KUBE_EPARSE;
    if ((rc = kube_json_str_shared(metadata, "namespace", arena, "", &m->namespace_)) ||
        (rc = kube_json_str(metadata, "uid", arena, "", &m->uid)) ||
        (rc = kube_json_str(metadata, "resourceVersion", arena, "", &m->resource_version)) ||
        (rc = kube_json_str_shared(metadata, "generateName", arena, "", &m->generate_name)) ||
        (rc = meta_maps(metadata, arena, m, &labels, &annotations)) ||
        (rc = decode_owners(metadata, arena, m)) ||
        (rc = kube_json_time(metadata, "creationTimestamp", &created_us)) ||
        (rc = kube_json_time(metadata, "deletionTimestamp", &deleted_us)))
        return rc;
    m->labels = (kube_kv *)labels;
    m->annotations = (kube_kv *)annotations;
    m->creation_unix = created_us / 1000000;
    m->deleting = kube_json_get(metadata, "deletionTimestamp") != NULL;
    (void)deleted_us;
    return KUBE_OK;
}

/* ---- building ---- */

typedef struct build_ctx {
    const kube_codec *codec;
    size_t size;
    const cJSON *json;
    kube_object_fill_fn fill;
} build_ctx;

static int build_fill(kube_arena *a, void *vctx, void **first)
{
    build_ctx *ctx = vctx;
    kube_object *obj = kube_arena_alloc(a, ctx->size);
    int rc;

    *first = obj;
    if (!obj)
        return KUBE_ENOMEM;
    obj->codec = ctx->codec;
    if ((rc = kube_meta_decode(kube_json_get(ctx->json, "metadata"), a, &obj->meta)))
        return rc;
    return ctx->fill(ctx->json, a, obj);
}

static int kind_matches(const cJSON *json, const kube_codec *codec)
{
    const cJSON *kind = kube_json_get(json, "kind");

    if (!kind)
        return 1;
    return cJSON_IsString(kind) && kind->valuestring && strcmp(kind->valuestring, codec->kind) == 0;
}

int kube_object_build(const kube_codec *codec, size_t size, const cJSON *json,
                      kube_object_fill_fn fill, kube_object **out)
{
    build_ctx ctx = {codec, size, json, fill};
    void *block;
    int rc;

    *out = NULL;
    if (!cJSON_IsObject(json) || !kind_matches(json, codec))
        return KUBE_EPARSE;
    rc = kube_arena_build(build_fill, &ctx, &block);
    if (rc != KUBE_OK)
        return rc == KUBE_ENOMEM ? KUBE_ENOMEM : KUBE_EPARSE;
    *out = block;
    atomic_init(&(*out)->refs, 1);
    return KUBE_OK;
}
