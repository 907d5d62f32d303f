/*
 * kube/util/errors.c - the one error convention of stickyvm. The contract is in
 * errors.h.
 */
#include "kube/util/errors.h"
#include "kube/util/errors_testing.h"

#include <string.h>

typedef struct {
    int err;
    int http;
    const char *reason;
    const char *text;
} err_entry;

static const err_entry err_table[] = {
    {KUBE_OK, 200, "", "success"},
    {KUBE_ENOMEM, 500, "InternalError", "out of memory"},
    {KUBE_EINVAL, 500, "InternalError", "invalid argument"},
    {KUBE_EPARSE, 500, "InternalError", "malformed input"},
    {KUBE_ECONFIG, 500, "InternalError", "invalid configuration"},
    {KUBE_EIO, 503, "ServiceUnavailable", "I/O or transport error"},
    {KUBE_ETIMEDOUT, 504, "Timeout", "timed out"},
    {KUBE_ECANCELED, 503, "ServiceUnavailable", "canceled"},
    {KUBE_ERANGE, 500, "InternalError", "value out of range"},
    {KUBE_EBADREQUEST, 400, "BadRequest", "bad request"},
    {KUBE_EUNAUTHORIZED, 401, "Unauthorized", "unauthorized"},
    {KUBE_EFORBIDDEN, 403, "Forbidden", "forbidden"},
    {KUBE_ENOTFOUND, 404, "NotFound", "not found"},
    {KUBE_EMETHOD, 405, "MethodNotAllowed", "method not allowed"},
    {KUBE_ECONFLICT, 409, "Conflict", "conflict"},
    {KUBE_EEXIST, 409, "AlreadyExists", "already exists"},
    {KUBE_EGONE, 410, "Expired", "resource version expired"},
    {KUBE_EINVALID, 422, "Invalid", "invalid object"},
    {KUBE_ETOOMANY, 429, "TooManyRequests", "too many requests"},
    {KUBE_ESERVER, 500, "InternalError", "server error"},
};

static const err_entry *err_lookup(int err)
{
    for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (err_table[i].err == err)
            return &err_table[i];
    return NULL;
}

int kube_err_from_status(long http_code, const char *reason)
{
    if (http_code >= 200 && http_code < 300)
        return KUBE_OK;
    if (http_code == 409 && reason && strcmp(reason, "AlreadyExists") == 0)
        return KUBE_EEXIST;
    if (http_code >= 500)
        return KUBE_ESERVER;
    switch (http_code) {
    case 400:
        return KUBE_EBADREQUEST;
    case 401:
        return KUBE_EUNAUTHORIZED;
    case 403:
        return KUBE_EFORBIDDEN;
    case 404:
        return KUBE_ENOTFOUND;
    case 405:
        return KUBE_EMETHOD;
    case 409:
        return KUBE_ECONFLICT;
    case 410:
        return KUBE_EGONE;
    case 422:
        return KUBE_EINVALID;
    case 429:
        return KUBE_ETOOMANY;
    default:
        return http_code >= 400 ? KUBE_EBADREQUEST : KUBE_EIO;
    }
}

int kube_err_http_code(int err)
{
    const err_entry *e = err_lookup(err);
    return e ? e->http : 500;
}

const char *kube_err_reason(int err)
{
    const err_entry *e = err_lookup(err);
    return e ? e->reason : "InternalError";
}

const char *kube_strerror(int err)
{
    const err_entry *e = err_lookup(err);
    return e ? e->text : "unknown error";
}
