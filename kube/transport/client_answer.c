/*
 * kube/transport/client_answer.c - what kube/transport/client makes of an answer, as pure
 * functions: metav1.Status decoding, the error a non-2xx answer maps to,
 * the Retry-After header, and the retry policy (see kube/transport/client.h).
 */
#include "kube/transport/client.h"

#include "kube/util/backoff.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CLIENT_RETRY_AFTER_CAP_S 60 /* longest Retry-After honoured */

/* ---- retry policy ------------------------------------------------------ */

static int client_idempotent(const char *method)
{
    return strcmp(method, "GET") == 0 || strcmp(method, "PUT") == 0 ||
           strcmp(method, "DELETE") == 0;
}

int kube_retry_decide(const char *method, long code, long retry_after_s, int attempt,
                      int max_retries, long base_ms, long cap_ms, unsigned rnd, long *delay_ms)
{
    int retry;

    *delay_ms = 0;
    if (attempt >= max_retries)
        return 0;
    if (code == 0)
        retry = strcmp(method, "GET") == 0;
    else if (code == 429)
        retry = 1;
    else if (code >= 500 && code <= 599)
        retry = client_idempotent(method) || retry_after_s >= 0;
    else
        retry = 0;
    if (!retry)
        return 0;
    if (retry_after_s >= 0 && code != 0) {
        *delay_ms =
            (retry_after_s > CLIENT_RETRY_AFTER_CAP_S ? CLIENT_RETRY_AFTER_CAP_S : retry_after_s) *
            1000;
        return 1;
    }
    kube_backoff b = {base_ms, cap_ms, 2.0, -0.5}; /* never past the cap */
    *delay_ms = (long)kube_backoff_at(&b, (unsigned)attempt, (double)rnd / 4294967296.0);
    return 1;
}

long kube_retry_after_header(long current, const char *line, size_t len)
{
    char value[32];
    const char *v;
    size_t vlen;
    int64_t secs;

    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0)
        return -1; /* a new response (after 100 Continue) */
    if (len <= 12 || strncasecmp(line, "Retry-After:", 12) != 0)
        return current;
    v = line + 12;
    vlen = len - 12;
    while (vlen > 0 && (*v == ' ' || *v == '\t'))
        v++, vlen--;
    while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
        vlen--;
    /* Only delay-seconds, as client-go; an HTTP-date is ignored. */
    if (vlen >= sizeof(value))
        return current;
    memcpy(value, v, vlen);
    value[vlen] = '\0';
    return kube_parse_int64(value, 0, INT32_MAX, &secs) == KUBE_OK ? (long)secs : current;
}

/* ---- Status decoding -------------------------------------------------- */

/* Copies src into dst (size n), cutting at a UTF-8 character boundary. */
static void client_copy_utf8(char *dst, const char *src, size_t n)
{
    size_t len = strlen(src);

    if (len >= n) {
        len = n - 1;
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
}

int kube_status_decode(const char *json, size_t len, long http_code, kube_status *st)
{
    const cJSON *kind, *reason, *message, *code;
    cJSON *root;
    int rc = KUBE_EPARSE;

    memset(st, 0, sizeof(*st));
    st->code = (int)http_code;
    if (!json || len == 0)
        return KUBE_EPARSE;
    root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root))
        goto out;
    kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    reason = cJSON_GetObjectItemCaseSensitive(root, "reason");
    message = cJSON_GetObjectItemCaseSensitive(root, "message");
    code = cJSON_GetObjectItemCaseSensitive(root, "code");
    if (kind ? !(cJSON_IsString(kind) && strcmp(kind->valuestring, "Status") == 0)
             : !(reason || message || code))
        goto out;
    if (cJSON_IsString(reason))
        client_copy_utf8(st->reason, reason->valuestring, sizeof(st->reason));
    if (cJSON_IsString(message))
        client_copy_utf8(st->message, message->valuestring, sizeof(st->message));
    if (cJSON_IsNumber(code) && code->valuedouble >= 100 && code->valuedouble <= 599)
        st->code = code->valueint;
    rc = KUBE_OK;
out:
    cJSON_Delete(root);
    return rc;
}

/* The reason client-go gives a response that carries no Status. */
static const char *client_generic_reason(long code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return code >= 500 ? "InternalError" : "Unknown";
    }
}

int kube_response_error(long http_code, const char *body, size_t len, kube_status *st)
{
    char text[sizeof(st->message)];
    size_t n;

    if (http_code >= 200 && http_code < 300) {
        memset(st, 0, sizeof(*st));
        st->code = (int)http_code;
        return KUBE_OK;
    }
    if (kube_status_decode(body, len, http_code, st) == KUBE_OK) {
        if (!st->reason[0])
            kube_strlcpy(st->reason, client_generic_reason(http_code), sizeof(st->reason));
        return kube_err_from_status(http_code, st->reason);
    }
    /* Not a Status (e.g. "404 page not found\n"): keep the text. */
    kube_strlcpy(st->reason, client_generic_reason(http_code), sizeof(st->reason));
    n = body && len < sizeof(text) - 1 ? len : body ? sizeof(text) - 1 : 0;
    memcpy(text, body ? body : "", n);
    text[n] = '\0';
    n = strlen(text); /* a NUL inside ends the text */
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
        text[--n] = '\0';
    if (n > 0)
        client_copy_utf8(st->message, text, sizeof(st->message));
    else
        snprintf(st->message, sizeof(st->message), "the server answered HTTP %ld", http_code);
    return kube_err_from_status(http_code, NULL);
}

void kube_response_clear(kube_response *resp)
{
    free(resp->body);
    memset(resp, 0, sizeof(*resp));
}
