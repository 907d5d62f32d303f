/*
 * kube/codec/jsonstream.c - incremental framing of streamed JSON (watch lines and
 * list items) and decoding of watch events. See jsonstream.h.
 */
#include "kube/codec/jsonstream.h"

#include <string.h>

#include "kube/util/errors.h"
#include "kube/codec/jsonscratch.h"
#include "kube/util/log.h"

#define SKELETON_MAX (1024u * 1024u)
#define ITEMS_BASE_DEPTH 2

enum { ITEMS_BEFORE = 0, ITEMS_KEY = 1, ITEMS_INSIDE = 2, ITEMS_AFTER = 3 };

/* One feed call: the chunk, where the current frame and skeleton range
 * begin in it, and where frames go. */
typedef struct scan {
    kube_jsonstream *s;
    const char *data;
    size_t len;
    size_t frame_start;
    size_t skel_start;
    kube_jsonstream_fn fn;
    void *ud;
} scan;

void kube_jsonstream_init(kube_jsonstream *s, int mode, size_t max_frame)
{
    memset(s, 0, sizeof(*s));
    s->mode = mode;
    s->max_frame = max_frame ? max_frame : KUBE_JSONSTREAM_MAX_FRAME;
}

void kube_jsonstream_reset(kube_jsonstream *s)
{
    kube_buf partial = s->partial, skeleton = s->skeleton;
    int mode = s->mode;
    size_t max_frame = s->max_frame;

    kube_buf_reset(&partial);
    kube_buf_reset(&skeleton);
    memset(s, 0, sizeof(*s));
    s->mode = mode;
    s->max_frame = max_frame;
    s->partial = partial;
    s->skeleton = skeleton;
}

void kube_jsonstream_free(kube_jsonstream *s)
{
    kube_buf_free(&s->partial);
    kube_buf_free(&s->skeleton);
    kube_jsonstream_init(s, s->mode, s->max_frame);
}

static int is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static void frame_begin(scan *sc, size_t i)
{
    kube_jsonstream *s = sc->s;

    s->in_frame = 1;
    s->dropping = 0;
    s->frame_raw = !(sc->data[i] == '{' || sc->data[i] == '[');
    sc->frame_start = i;
}

static void frame_drop(kube_jsonstream *s)
{
    if (!s->dropping)
        KLOG_ERROR("json stream: dropping a frame larger than %zu bytes", s->max_frame);
    s->dropping = 1;
    kube_buf_reset(&s->partial);
}

/* Ends the current frame at data[end) and delivers it. */
static int frame_end(scan *sc, size_t end)
{
    kube_jsonstream *s = sc->s;
    const char *frame = sc->data + sc->frame_start;
    size_t n = end - sc->frame_start;
    int rc = 0;

    s->in_frame = 0;
    s->in_str = s->esc = 0;
    if (!s->dropping && s->partial.len + n > s->max_frame)
        frame_drop(s);
    if (s->dropping) {
        s->dropping = 0;
        s->dropped++;
        return 0;
    }
    if (s->partial.len > 0) {
        if (kube_buf_append(&s->partial, frame, n) != KUBE_OK)
            return KUBE_ENOMEM;
        frame = s->partial.data;
        n = s->partial.len;
    }
    s->frames++;
    rc = sc->fn(sc->ud, frame, n);
    kube_buf_reset(&s->partial);
    return rc;
}

/* Keeps the unfinished frame's bytes of this chunk for the next one. */
static int frame_carry(scan *sc)
{
    kube_jsonstream *s = sc->s;
    size_t n = sc->len - sc->frame_start;

    if (!s->in_frame || s->dropping)
        return KUBE_OK;
    if (s->partial.len + n > s->max_frame) {
        frame_drop(s);
        return KUBE_OK;
    }
    return kube_buf_append(&s->partial, sc->data + sc->frame_start, n);
}

/* Bytes that matter inside a string, and between tokens of a value. */
static const unsigned char k_in_string[256] = {['"'] = 1, ['\\'] = 1, ['\n'] = 1};
static const unsigned char k_structural[256] = {
    ['"'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1, ['\n'] = 1};

/* The hot loop: runs through the bytes of a frame that is a JSON object or
 * array, from data[i], tracking strings and depth. Returns the index of the
 * byte that closes the frame (depth back to base), of a raw newline when
 * nl_ends, or len when the chunk ends first. */
static size_t frame_scan(kube_jsonstream *s, const char *data, size_t i, size_t len, int base,
                         int nl_ends)
{
    const unsigned char *d = (const unsigned char *)data;

    for (;;) {
        if (s->in_str) {
            if (s->esc) {
                if (i >= len)
                    return len;
                s->esc = 0;
                i++;
            }
            while (i < len && !k_in_string[d[i]])
                i++;
            if (i >= len)
                return len;
            if (d[i] == '\n' && nl_ends)
                return i;
            if (d[i] == '"')
                s->in_str = 0;
            else if (d[i] == '\\')
                s->esc = 1;
            i++;
            continue;
        }
        while (i < len && !k_structural[d[i]])
            i++;
        if (i >= len)
            return len;
        switch (d[i]) {
        case '"':
            s->in_str = 1;
            break;
        case '{':
        case '[':
            s->depth++;
            break;
        case '}':
        case ']':
            if (--s->depth == base)
                return i;
            break;
        default: /* newline */
            if (nl_ends)
                return i;
        }
        i++;
    }
}

/* Continues a structured frame from *ip; ends it when it closes. */
static int frame_continue(scan *sc, size_t *ip, int base, int nl_ends)
{
    size_t j = frame_scan(sc->s, sc->data, *ip, sc->len, base, nl_ends);

    *ip = j < sc->len ? j : sc->len - 1;
    if (j == sc->len)
        return 0;
    return frame_end(sc, sc->data[j] == '\n' ? j : j + 1);
}

/* Lexes one byte inside a string; returns non-zero when the string ended. */
static int lex_string(kube_jsonstream *s, char c)
{
    if (s->esc) {
        s->esc = 0;
        s->key_len = sizeof(s->key); /* escaped keys never match */
        return 0;
    }
    if (c == '\\') {
        s->esc = 1;
        return 0;
    }
    if (c == '"') {
        s->in_str = 0;
        return 1;
    }
    if (s->key_capture && s->key_len < sizeof(s->key))
        s->key[s->key_len++] = c;
    return 0;
}

/* ---- LINES mode ------------------------------------------------------- */

static int lines_byte(scan *sc, size_t *ip)
{
    kube_jsonstream *s = sc->s;
    size_t i = *ip;
    char c = sc->data[i];

    if (!s->in_frame) {
        if (!is_ws(c)) {
            frame_begin(sc, i);
            s->depth = s->frame_raw ? 0 : 1;
        }
        return 0;
    }
    if (s->frame_raw)
        return c == '\n' ? frame_end(sc, i) : 0;
    return frame_continue(sc, ip, 0, 1);
}

/* ---- LIST mode --------------------------------------------------------- */

static void skeleton_add(scan *sc, size_t from, size_t to)
{
    kube_jsonstream *s = sc->s;

    if (to <= from || s->skeleton_full)
        return;
    if (s->skeleton.len + (to - from) > SKELETON_MAX ||
        kube_buf_append(&s->skeleton, sc->data + from, to - from) != KUBE_OK) {
        KLOG_ERROR("json stream: list metadata larger than %u bytes", SKELETON_MAX);
        s->skeleton_full = 1;
    }
}

/* A byte at depth >= 2 inside "items": frames are the array's elements. */
static int items_byte(scan *sc, size_t *ip)
{
    kube_jsonstream *s = sc->s;
    size_t i = *ip;
    char c = sc->data[i];
    int rc = 0;

    if (!s->in_frame) {
        if (is_ws(c) || c == ',')
            return 0;
        if (c == ']' && s->depth == ITEMS_BASE_DEPTH) {
            s->depth = 1;
            s->items = ITEMS_AFTER;
            sc->skel_start = i;
            return 0;
        }
        frame_begin(sc, i);
        if (!s->frame_raw)
            s->depth++;
        else if (c == '"')
            s->in_str = 1;
        return 0;
    }
    if (!s->frame_raw)
        return frame_continue(sc, ip, ITEMS_BASE_DEPTH, 0);
    if (c == '"') {
        s->in_str = 1;
    } else if (c == ',' || c == ']') {
        rc = frame_end(sc, i);
        if (c == ']') /* the array closes: let the outer lexer see it */
            *ip = i - 1;
    }
    return rc;
}

/* A byte of the document around "items" (kept in the skeleton). */
static void document_byte(scan *sc, size_t i)
{
    kube_jsonstream *s = sc->s;
    char c = sc->data[i];

    if (s->items == ITEMS_KEY && s->depth == 1 && !is_ws(c)) {
        if (c == '[') {
            skeleton_add(sc, sc->skel_start, i + 1);
            s->items = ITEMS_INSIDE;
            s->depth = ITEMS_BASE_DEPTH;
            return;
        }
        s->items = ITEMS_BEFORE; /* "items" is not an array: nothing to frame */
    }
    if (c == '"') {
        s->in_str = 1;
        s->key_capture = (s->depth == 1 && s->expect_key);
        s->key_len = 0;
    } else if (c == '{' || c == '[') {
        s->depth++;
        if (s->depth == 1)
            s->expect_key = 1;
    } else if (c == '}' || c == ']') {
        s->depth--;
    } else if (s->depth == 1 && c == ',') {
        s->expect_key = 1;
    } else if (s->depth == 1 && c == ':') {
        s->expect_key = 0;
        if (s->key_len == 5 && memcmp(s->key, "items", 5) == 0 && s->items == ITEMS_BEFORE)
            s->items = ITEMS_KEY;
    }
}

static int list_byte(scan *sc, size_t *ip)
{
    kube_jsonstream *s = sc->s;
    size_t i = *ip;

    if (s->items == ITEMS_INSIDE && s->in_frame && !s->frame_raw)
        return frame_continue(sc, ip, ITEMS_BASE_DEPTH, 0);
    if (s->in_str) {
        if (lex_string(s, sc->data[i]))
            s->key_capture = 0;
        return 0;
    }
    if (s->items == ITEMS_INSIDE && s->depth >= ITEMS_BASE_DEPTH)
        return items_byte(sc, ip);
    document_byte(sc, i);
    return 0;
}

int kube_jsonstream_feed(kube_jsonstream *s, const char *data, size_t len, kube_jsonstream_fn fn,
                         void *ud)
{
    scan sc = {s, data, len, 0, 0, fn, ud};
    int rc = 0;

    for (size_t i = 0; i < len && rc == 0; i++)
        rc = s->mode == KUBE_JSONSTREAM_LIST ? list_byte(&sc, &i) : lines_byte(&sc, &i);
    if (rc != 0)
        return rc;
    if (s->mode == KUBE_JSONSTREAM_LIST && s->items != ITEMS_INSIDE)
        skeleton_add(&sc, sc.skel_start, len);
    return frame_carry(&sc);
}

int kube_jsonstream_finish(kube_jsonstream *s, kube_jsonstream_fn fn, void *ud)
{
    if (s->mode == KUBE_JSONSTREAM_LIST) {
        if (s->in_str || s->depth != 0 || s->in_frame || s->items == ITEMS_KEY ||
            s->items == ITEMS_INSIDE || s->skeleton_full || s->skeleton.len == 0)
            return KUBE_EPARSE;
        return KUBE_OK;
    }
    if (!s->in_frame)
        return KUBE_OK;
    scan sc = {s, "", 0, 0, 0, fn, ud};
    return frame_end(&sc, 0);
}

const char *kube_jsonstream_skeleton(const kube_jsonstream *s, size_t *len)
{
    if (len)
        *len = s->skeleton.len;
    return s->skeleton.data ? s->skeleton.data : "";
}

/* ---- watch events ------------------------------------------------------ */

static const struct {
    const char *name;
    int type;
} watch_types[] = {
    {"ADDED", KUBE_WATCH_ADDED},     {"MODIFIED", KUBE_WATCH_MODIFIED},
    {"DELETED", KUBE_WATCH_DELETED}, {"BOOKMARK", KUBE_WATCH_BOOKMARK},
    {"ERROR", KUBE_WATCH_ERROR},
};

const char *kube_watch_type_name(int type)
{
    for (size_t i = 0; i < sizeof(watch_types) / sizeof(watch_types[0]); i++)
        if (watch_types[i].type == type)
            return watch_types[i].name;
    return "?";
}

static int watch_type_parse(const char *name)
{
    for (size_t i = 0; i < sizeof(watch_types) / sizeof(watch_types[0]); i++)
        if (strcmp(watch_types[i].name, name) == 0)
            return watch_types[i].type;
    return 0;
}

int kube_json_resource_version(const cJSON *obj, char *out, size_t n)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");

    if (!cJSON_IsString(rv) || rv->valuestring == NULL)
        return KUBE_ENOTFOUND;
    return kube_strlcpy(out, rv->valuestring, n);
}

static void status_decode(const cJSON *obj, kube_watch_event *ev)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(obj, "reason");
    const cJSON *message = cJSON_GetObjectItemCaseSensitive(obj, "message");

    if (cJSON_IsNumber(code) && code->valuedouble >= 0 && code->valuedouble < 1000)
        ev->code = code->valueint;
    if (cJSON_IsString(reason))
        kube_strlcpy(ev->reason, reason->valuestring, sizeof(ev->reason));
    if (cJSON_IsString(message))
        kube_strlcpy(ev->message, message->valuestring, sizeof(ev->message));
}

static int fail(char *err, size_t errlen, const char *why, int rc)
{
    if (err && errlen)
        kube_strlcpy(err, why, errlen);
    return rc;
}

static int event_object(const cJSON *obj, const kube_codec *codec, kube_watch_event *ev, char *err,
                        size_t errlen)
{
    int rc = kube_json_resource_version(obj, ev->rv, sizeof(ev->rv));

    if (rc == KUBE_ERANGE)
        return fail(err, errlen, "resourceVersion too long", KUBE_EPARSE);
    if (ev->type == KUBE_WATCH_BOOKMARK)
        return rc == KUBE_OK ? KUBE_OK
                             : fail(err, errlen, "bookmark without resourceVersion", KUBE_EPARSE);
    rc = codec->decode(obj, &ev->obj);
    if (rc != KUBE_OK) {
        ev->obj = NULL;
        return fail(err, errlen, "object does not decode", rc == KUBE_ENOMEM ? rc : KUBE_EPARSE);
    }
    if (ev->obj->meta.name == NULL || ev->obj->meta.name[0] == '\0') {
        kube_watch_event_clear(ev);
        return fail(err, errlen, "object without name", KUBE_EPARSE);
    }
    return KUBE_OK;
}

int kube_watch_event_decode(const char *frame, size_t len, const kube_codec *codec,
                            kube_watch_event *ev, char *err, size_t errlen)
{
    cJSON *root = kube_jsonscratch_parse(frame, len);
    const cJSON *type, *obj;
    int rc;

    memset(ev, 0, sizeof(*ev));
    if (err && errlen)
        err[0] = '\0';
    if (root == NULL)
        return fail(err, errlen, "not JSON", KUBE_EPARSE);
    type = cJSON_GetObjectItemCaseSensitive(root, "type");
    obj = cJSON_GetObjectItemCaseSensitive(root, "object");
    if (!cJSON_IsString(type) || (ev->type = watch_type_parse(type->valuestring)) == 0)
        rc = fail(err, errlen, "missing or unknown event type", KUBE_EPARSE);
    else if (!cJSON_IsObject(obj))
        rc = fail(err, errlen, "event without object", KUBE_EPARSE);
    else if (ev->type == KUBE_WATCH_ERROR)
        status_decode(obj, ev), rc = KUBE_OK;
    else
        rc = event_object(obj, codec, ev, err, errlen);
    kube_jsonscratch_release(root);
    return rc;
}

void kube_watch_event_clear(kube_watch_event *ev)
{
    kube_object_unref(ev->obj);
    memset(ev, 0, sizeof(*ev));
}
