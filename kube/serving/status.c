/*
 * kube/serving/status.c - the metav1.Status bodies the secure servers
 * answer failures with (shaped and worded as k8s.io/apiserver writes them,
 * compact, one trailing newline), and the messages of the common failures
 * (Forbidden, Unauthorized, MethodNotAllowed). The contract is in status.h.
 */
#include "kube/serving/status.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"

int kube_status_emit(kube_buf *out, cJSON *json)
{
    char *text;
    int rc;

    if (!json)
        return KUBE_ENOMEM;
    text = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    if (!text)
        return KUBE_ENOMEM;
    rc = kube_buf_puts(out, text);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(out, "\n");
    free(text);
    return rc;
}

/* Appends one cause {"reason","message","field"} (NULL members omitted). */
static int add_cause(cJSON *causes, const kube_status_details *d, const char *message)
{
    cJSON *cause = cJSON_CreateObject();

    if (!cause)
        return KUBE_ENOMEM;
    cJSON_AddItemToArray(causes, cause);
    if ((d->cause_reason && !cJSON_AddStringToObject(cause, "reason", d->cause_reason)) ||
        (message && !cJSON_AddStringToObject(cause, "message", message)) ||
        (d->cause_field && !cJSON_AddStringToObject(cause, "field", d->cause_field)))
        return KUBE_ENOMEM;
    return KUBE_OK;
}

static int add_details(cJSON *st, const kube_status_details *d)
{
    cJSON *details, *causes;
    int rc;

    if (!d)
        return KUBE_OK;
    details = cJSON_AddObjectToObject(st, "details");
    if (!details)
        return KUBE_ENOMEM;
    if ((d->name && !cJSON_AddStringToObject(details, "name", d->name)) ||
        (d->group && !cJSON_AddStringToObject(details, "group", d->group)) ||
        (d->kind && !cJSON_AddStringToObject(details, "kind", d->kind)))
        return KUBE_ENOMEM;
    if (!d->cause_reason && !d->cause_message && !d->cause_field)
        return KUBE_OK;
    causes = cJSON_AddArrayToObject(details, "causes");
    if (!causes)
        return KUBE_ENOMEM;
    rc = add_cause(causes, d, d->cause_message);
    if (rc == KUBE_OK && d->cause_message2)
        rc = add_cause(causes, d, d->cause_message2);
    return rc;
}

int kube_status_json(kube_buf *out, int code, const char *reason, const char *message,
                     const kube_status_details *details)
{
    cJSON *st = cJSON_CreateObject();

    if (!st || !cJSON_AddStringToObject(st, "kind", "Status") ||
        !cJSON_AddStringToObject(st, "apiVersion", "v1") ||
        !cJSON_AddObjectToObject(st, "metadata") ||
        !cJSON_AddStringToObject(st, "status", "Failure") ||
        !cJSON_AddStringToObject(st, "message", message ? message : "") ||
        (reason && *reason && !cJSON_AddStringToObject(st, "reason", reason)) ||
        add_details(st, details) != KUBE_OK || !cJSON_AddNumberToObject(st, "code", code)) {
        cJSON_Delete(st);
        return KUBE_ENOMEM;
    }
    return kube_status_emit(out, st);
}

/* Go's %q for the strings we quote: backslash-escapes quotes, backslashes
 * and control bytes. */
static int put_quoted(kube_buf *b, const char *s)
{
    int rc = kube_buf_puts(b, "\"");

    for (; rc == KUBE_OK && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            rc = kube_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            rc = kube_buf_printf(b, "\\x%02x", c);
        else
            rc = kube_buf_append(b, s, 1);
    }
    return rc == KUBE_OK ? kube_buf_puts(b, "\"") : rc;
}

static int forbidden_message(kube_buf *m, const kube_forbidden *f)
{
    int rc = KUBE_OK;

    if (f->resource) {
        rc = kube_buf_printf(m, "%s.%s ", f->resource, f->group);
        if (rc == KUBE_OK && f->name && *f->name) {
            rc = put_quoted(m, f->name);
            if (rc == KUBE_OK)
                rc = kube_buf_puts(m, " ");
        }
        if (rc == KUBE_OK)
            rc = kube_buf_puts(m, "is forbidden: User ");
    } else {
        rc = kube_buf_puts(m, "forbidden: User ");
    }
    if (rc == KUBE_OK)
        rc = put_quoted(m, f->user ? f->user : "");
    if (rc == KUBE_OK)
        rc = kube_buf_printf(m, " cannot %s ", f->verb);
    if (rc != KUBE_OK)
        return rc;
    if (!f->resource) {
        rc = kube_buf_puts(m, "path ");
        return rc == KUBE_OK ? put_quoted(m, f->path ? f->path : "") : rc;
    }
    rc = kube_buf_printf(m, "resource \"%s%s%s\" in API group ", f->resource,
                         f->subresource && *f->subresource ? "/" : "",
                         f->subresource ? f->subresource : "");
    if (rc == KUBE_OK)
        rc = put_quoted(m, f->group);
    if (rc == KUBE_OK && f->namespace_ && *f->namespace_) {
        rc = kube_buf_puts(m, " in the namespace ");
        if (rc == KUBE_OK)
            rc = put_quoted(m, f->namespace_);
    } else if (rc == KUBE_OK) {
        rc = kube_buf_puts(m, " at the cluster scope");
    }
    return rc;
}

int kube_status_forbidden(kube_buf *out, const kube_forbidden *f)
{
    kube_buf m = KUBE_BUF_INIT;
    kube_status_details d = {0};
    int rc = forbidden_message(&m, f);

    if (rc == KUBE_OK && f->reason && *f->reason)
        rc = kube_buf_printf(&m, ": %s", f->reason);
    if (rc == KUBE_OK) {
        if (f->resource) {
            d.name = f->name && *f->name ? f->name : NULL;
            d.group = f->group;
            d.kind = f->resource;
        }
        rc = kube_status_json(out, 403, "Forbidden", m.data, &d);
    }
    kube_buf_free(&m);
    return rc;
}

int kube_status_unauthorized(kube_buf *out)
{
    return kube_status_json(out, 401, "Unauthorized", "Unauthorized", NULL);
}

int kube_status_method_not_allowed(kube_buf *out)
{
    return kube_status_json(out, 405, "MethodNotAllowed",
                            "the server does not allow this method on the requested resource",
                            NULL);
}
