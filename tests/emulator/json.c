/*
 * tests/emulator/json.c - JSON helpers: parsing with the syntax-error
 * messages of Go's encoding/json (which kube-apiserver puts into its 400
 * answers), key ordering, path access, uuids, base64 and Status objects.
 */
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* ------------------------------------------------------------------ */
/* A validating scanner with encoding/json's error texts               */
/* ------------------------------------------------------------------ */

typedef struct scan {
    const unsigned char *p;
    const unsigned char *end;
    char *err;
    size_t errn;
    int failed;
    int depth;
} scan;

static void quote_char(unsigned char c, char *out, size_t n)
{
    static const char *const named[] = {
        ['\a'] = "\\a", ['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n",
        ['\r'] = "\\r", ['\t'] = "\\t", ['\v'] = "\\v",
    };

    if (c == '\'')
        snprintf(out, n, "'\\''");
    else if (c < 0x20 && c < sizeof(named) / sizeof(named[0]) && named[c])
        snprintf(out, n, "'%s'", named[c]);
    else if (c < 0x20 || c == 0x7f)
        snprintf(out, n, "'\\x%02x'", c);
    else if (c >= 0x80 && c < 0xa0)
        snprintf(out, n, "'\\u%04x'", c);
    else if (c >= 0x80)
        snprintf(out, n, "'%c%c'", (char)(0xc0 | (c >> 6)), (char)(0x80 | (c & 0x3f)));
    else
        snprintf(out, n, "'%c'", c);
}

static int scan_fail(scan *s, const char *context)
{
    char q[16];

    if (s->failed)
        return -1;
    s->failed = 1;
    if (s->p >= s->end) {
        snprintf(s->err, s->errn, "unexpected end of JSON input");
        return -1;
    }
    quote_char(*s->p, q, sizeof(q));
    snprintf(s->err, s->errn, "invalid character %s %s", q, context);
    return -1;
}

static void skip_ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int scan_string(scan *s)
{
    s->p++; /* opening quote */
    while (s->p < s->end) {
        unsigned char c = *s->p;
        if (c == '"') {
            s->p++;
            return 0;
        }
        if (c < 0x20)
            return scan_fail(s, "in string literal");
        if (c != '\\') {
            s->p++;
            continue;
        }
        s->p++;
        if (s->p >= s->end)
            break;
        if (*s->p == 'u') {
            s->p++;
            for (int i = 0; i < 4; i++, s->p++)
                if (s->p >= s->end || !is_hex(*s->p))
                    return scan_fail(s, "in \\u hexadecimal character escape");
            continue;
        }
        if (!strchr("bfnrt\\/\"", *s->p) || *s->p == '\0')
            return scan_fail(s, "in string escape code");
        s->p++;
    }
    return scan_fail(s, "");
}

static int scan_digits(scan *s, const char *context)
{
    if (s->p >= s->end || *s->p < '0' || *s->p > '9')
        return scan_fail(s, context);
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return 0;
}

static int scan_number(scan *s)
{
    if (*s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (scan_digits(s, "in numeric literal") < 0)
        return -1;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (scan_digits(s, "after decimal point in numeric literal") < 0)
            return -1;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (scan_digits(s, "in exponent of numeric literal") < 0)
            return -1;
    }
    return 0;
}

static int scan_literal(scan *s, const char *word)
{
    char ctx[48];

    for (size_t i = 0; word[i]; i++, s->p++) {
        if (s->p >= s->end || *s->p != (unsigned char)word[i]) {
            snprintf(ctx, sizeof(ctx), "in literal %s (expecting '%c')", word, word[i]);
            return scan_fail(s, ctx);
        }
    }
    return 0;
}

static int scan_value(scan *s);

static int scan_object(scan *s)
{
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 0;
    }
    for (;;) {
        skip_ws(s);
        if (s->p >= s->end || *s->p != '"')
            return scan_fail(s, "looking for beginning of object key string");
        if (scan_string(s) < 0)
            return -1;
        skip_ws(s);
        if (s->p >= s->end || *s->p != ':')
            return scan_fail(s, "after object key");
        s->p++;
        if (scan_value(s) < 0)
            return -1;
        skip_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            return 0;
        }
        return scan_fail(s, "after object key:value pair");
    }
}

static int scan_array(scan *s)
{
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return 0;
    }
    for (;;) {
        if (scan_value(s) < 0)
            return -1;
        skip_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            return 0;
        }
        return scan_fail(s, "after array element");
    }
}

static int scan_value(scan *s)
{
    int rc;

    skip_ws(s);
    if (s->p >= s->end)
        return scan_fail(s, "");
    if (++s->depth > 1000) {
        snprintf(s->err, s->errn, "exceeded max depth");
        s->failed = 1;
        return -1;
    }
    switch (*s->p) {
    case '{':
        rc = scan_object(s);
        break;
    case '[':
        rc = scan_array(s);
        break;
    case '"':
        rc = scan_string(s);
        break;
    case 't':
        rc = scan_literal(s, "true");
        break;
    case 'f':
        rc = scan_literal(s, "false");
        break;
    case 'n':
        rc = scan_literal(s, "null");
        break;
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
            rc = scan_number(s);
        else
            rc = scan_fail(s, "looking for beginning of value");
    }
    s->depth--;
    return rc;
}

int emu_json_parse(const char *text, size_t len, cJSON **out, char *err, size_t errn)
{
    scan s = {(const unsigned char *)text, (const unsigned char *)text + len, err, errn, 0, 0};

    *out = NULL;
    if (errn)
        err[0] = '\0';
    if (scan_value(&s) < 0)
        return KUBE_EPARSE;
    skip_ws(&s);
    if (s.p < s.end) {
        scan_fail(&s, "after top-level value");
        return KUBE_EPARSE;
    }
    *out = cJSON_ParseWithLength(text, len);
    if (!*out) {
        snprintf(err, errn, "exceeded max depth");
        return KUBE_EPARSE;
    }
    return KUBE_OK;
}

char *emu_json_print(const cJSON *j)
{
    return cJSON_PrintUnformatted(j);
}

/* ------------------------------------------------------------------ */
/* Key order                                                           */
/* ------------------------------------------------------------------ */

static cJSON *merge_sorted(cJSON *a, cJSON *b)
{
    cJSON head = {0};
    cJSON *tail = &head;

    while (a && b) {
        cJSON **take = strcmp(a->string, b->string) <= 0 ? &a : &b;
        tail->next = *take;
        (*take)->prev = tail;
        tail = *take;
        *take = (*take)->next;
    }
    tail->next = a ? a : b;
    if (tail->next)
        tail->next->prev = tail;
    return head.next;
}

static cJSON *sort_list(cJSON *list, size_t n)
{
    cJSON *right;
    size_t half = n / 2;

    if (n < 2)
        return list;
    right = list;
    for (size_t i = 0; i < half; i++)
        right = right->next;
    right->prev->next = NULL;
    return merge_sorted(sort_list(list, half), sort_list(right, n - half));
}

static void fix_prev_links(cJSON *parent)
{
    cJSON *c = parent->child, *last = NULL;

    for (; c; c = c->next) {
        c->prev = last;
        last = c;
    }
    if (parent->child)
        parent->child->prev = last; /* cJSON keeps the tail in child->prev */
}

void emu_json_sort_keys(cJSON *j)
{
    size_t n = 0;

    if (!j)
        return;
    for (cJSON *c = j->child; c; c = c->next) {
        emu_json_sort_keys(c);
        n++;
    }
    if (cJSON_IsObject(j) && n > 1) {
        j->child = sort_list(j->child, n);
        fix_prev_links(j);
    }
}

void emu_json_order_keys(cJSON *j, const char *const *order)
{
    size_t n = 0;

    if (!cJSON_IsObject(j))
        return;
    while (order[n])
        n++;
    for (size_t i = n; i-- > 0;) {
        cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(j, order[i]);
        if (!item)
            continue;
        item->next = j->child;
        item->prev = NULL;
        if (j->child) {
            item->prev = j->child->prev;
            j->child->prev = item;
        } else {
            item->prev = item;
        }
        j->child = item;
    }
    fix_prev_links(j);
}

/* ------------------------------------------------------------------ */
/* Access                                                              */
/* ------------------------------------------------------------------ */

cJSON *emu_json_at(const cJSON *j, const char *dotted)
{
    char part[128];
    const char *p = dotted;

    while (j && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof(part) || !cJSON_IsObject(j))
            return NULL;
        memcpy(part, p, n);
        part[n] = '\0';
        j = cJSON_GetObjectItemCaseSensitive(j, part);
        p += n + (dot ? 1 : 0);
    }
    return (cJSON *)j;
}

const char *emu_json_str(const cJSON *j, const char *dotted)
{
    const cJSON *v = emu_json_at(j, dotted);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *emu_json_obj(cJSON *j, const char *key)
{
    cJSON *v;

    if (!cJSON_IsObject(j))
        return NULL;
    v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (cJSON_IsObject(v))
        return v;
    v = cJSON_CreateObject();
    if (!v || emu_json_put(j, key, v) != KUBE_OK)
        return NULL;
    return v;
}

int emu_json_put(cJSON *j, const char *key, cJSON *item)
{
    if (!item)
        return KUBE_ENOMEM;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(item);
        return KUBE_EINVAL;
    }
    if (cJSON_GetObjectItemCaseSensitive(j, key)) {
        if (!cJSON_ReplaceItemInObjectCaseSensitive(j, key, item)) {
            cJSON_Delete(item);
            return KUBE_ENOMEM;
        }
        return KUBE_OK;
    }
    if (!cJSON_AddItemToObject(j, key, item)) {
        cJSON_Delete(item);
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

int emu_json_put_str(cJSON *j, const char *key, const char *value)
{
    return emu_json_put(j, key, cJSON_CreateString(value));
}

int emu_json_equal(const cJSON *a, const cJSON *b)
{
    const cJSON *x, *y;
    size_t na = 0, nb = 0;

    if (!a || !b)
        return a == b;
    if ((a->type & 0xff) != (b->type & 0xff))
        return 0;
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsArray(a)) {
        for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
            if (!emu_json_equal(x, y))
                return 0;
        return x == NULL && y == NULL;
    }
    if (cJSON_IsObject(a)) {
        for (x = a->child; x; x = x->next, na++)
            if (!emu_json_equal(x, cJSON_GetObjectItemCaseSensitive(b, x->string)))
                return 0;
        for (y = b->child; y; y = y->next)
            nb++;
        return na == nb;
    }
    return 1; /* true/false/null of the same type */
}

/* ------------------------------------------------------------------ */
/* uuid, base64                                                        */
/* ------------------------------------------------------------------ */

void emu_uuid(char out[37])
{
    unsigned char b[16];

    if (RAND_bytes(b, sizeof(b)) != 1) {
        for (size_t i = 0; i < sizeof(b); i++)
            b[i] = (unsigned char)(random() & 0xff);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *emu_b64url_encode(const void *data, size_t n)
{
    const unsigned char *in = data;
    char *out = malloc(n / 3 * 4 + 5);
    size_t o = 0, i = 0;

    if (!out)
        return NULL;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
        out[o++] = b64url[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)in[i] << 16;
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
    }
    out[o] = '\0';
    return out;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-' || c == '+')
        return 62;
    if (c == '_' || c == '/')
        return 63;
    return -1;
}

unsigned char *emu_b64_decode(const char *s, size_t *n)
{
    size_t len = strlen(s), o = 0;
    unsigned acc = 0;
    int bits = 0;
    unsigned char *out;

    while (len > 0 && s[len - 1] == '=')
        len--;
    out = malloc(len * 3 / 4 + 2);
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value(s[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    *n = o;
    return out;
}

/* ------------------------------------------------------------------ */
/* Status                                                              */
/* ------------------------------------------------------------------ */

cJSON *emu_status_new(int code, const char *reason, const char *message, cJSON *details)
{
    cJSON *st = cJSON_CreateObject();

    if (!st) {
        cJSON_Delete(details);
        return NULL;
    }
    cJSON_AddStringToObject(st, "kind", "Status");
    cJSON_AddStringToObject(st, "apiVersion", "v1");
    cJSON_AddItemToObject(st, "metadata", cJSON_CreateObject());
    cJSON_AddStringToObject(st, "status", code >= 200 && code < 300 ? "Success" : "Failure");
    if (message && *message)
        cJSON_AddStringToObject(st, "message", message);
    if (reason && *reason)
        cJSON_AddStringToObject(st, "reason", reason);
    if (details)
        cJSON_AddItemToObject(st, "details", details);
    cJSON_AddNumberToObject(st, "code", code);
    return st;
}

cJSON *emu_details(const char *name, const char *group, const char *kind)
{
    cJSON *d = cJSON_CreateObject();

    if (!d)
        return NULL;
    if (name && *name)
        cJSON_AddStringToObject(d, "name", name);
    if (group && *group)
        cJSON_AddStringToObject(d, "group", group);
    if (kind && *kind)
        cJSON_AddStringToObject(d, "kind", kind);
    return d;
}

int emu_err_for(int code, const char *reason)
{
    return kube_err_from_status(code, reason);
}

int emu_fail(cJSON **st, int code, const char *reason, cJSON *details, const char *fmt, ...)
{
    char *msg = NULL;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && (msg = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (st) {
        cJSON_Delete(*st);
        *st = emu_status_new(code, reason, msg ? msg : "", details);
    } else {
        cJSON_Delete(details);
    }
    free(msg);
    return emu_err_for(code, reason);
}
