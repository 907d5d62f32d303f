/*
 * kube/util/errors.h - the one error convention of stickyvm.
 *
 * Every function in kube/, scheduler/ and apiserver/ that can fail returns an
 * int: 0 (KUBE_OK) on success, or one of the negative KUBE_E* codes below.
 * Positive values are never errors; a function that returns a count says so
 * in its contract. Codes that mirror a metav1.Status reason are produced by
 * kube_err_from_status() when kube-apiserver (or the emulator) answers
 * with a non-2xx status, so callers switch on them exactly as client-go
 * callers use apierrors.IsNotFound() and friends.
 *
 * Memory: nothing here allocates. kube_strerror() returns a static string.
 */
#ifndef KUBE_ERRORS_H
#define KUBE_ERRORS_H

enum {
    KUBE_OK = 0,
    /* local failures */
    KUBE_ENOMEM = -1,    /* allocation failed */
    KUBE_EINVAL = -2,    /* bad argument from the caller */
    KUBE_EPARSE = -3,    /* malformed JSON/YAML/PEM input */
    KUBE_ECONFIG = -4,   /* configuration file or flag is wrong */
    KUBE_EIO = -5,       /* transport: connect, TLS, read/write, file I/O */
    KUBE_ETIMEDOUT = -6, /* a deadline passed */
    KUBE_ECANCELED = -7, /* stopped by shutdown */
    KUBE_ERANGE = -8,    /* a number does not fit */
    /* metav1.Status reasons, by HTTP code */
    KUBE_EBADREQUEST = -400,   /* BadRequest */
    KUBE_EUNAUTHORIZED = -401, /* Unauthorized */
    KUBE_EFORBIDDEN = -403,    /* Forbidden */
    KUBE_ENOTFOUND = -404,     /* NotFound */
    KUBE_EMETHOD = -405,       /* MethodNotAllowed */
    KUBE_ECONFLICT = -409,     /* Conflict (stale resourceVersion, bound pod) */
    KUBE_EEXIST = -4090,       /* AlreadyExists (also HTTP 409) */
    KUBE_EGONE = -410,         /* Expired / Gone: re-list */
    KUBE_EINVALID = -422,      /* Invalid */
    KUBE_ETOOMANY = -429,      /* TooManyRequests */
    KUBE_ESERVER = -500,       /* any 5xx: InternalError, ServiceUnavailable */
};

/* Maps an HTTP status code and a metav1.Status reason (may be NULL) to a
 * KUBE_E* code. 2xx maps to KUBE_OK. */
int kube_err_from_status(long http_code, const char *reason);

/* A short human description of a code. Static storage; never NULL. */
const char *kube_strerror(int err);

#endif
