/*
 * kube/serving/observer.h - what the secure server reports as it serves:
 * each request's outcome, the requests in flight, how a request was
 * authenticated and how it was authorized. A daemon turns these into its
 * own metrics (stickyvm-apiserver's stickyvm_apiserver_* families).
 *
 * Threads: the callbacks run on the service thread and on the workers, at
 * once: they must be thread-safe and must not block.
 * Memory: an observer is borrowed; it must outlive the server and the
 * delegate it is given to.
 */
#ifndef KUBE_SERVING_OBSERVER_H
#define KUBE_SERVING_OBSERVER_H

typedef enum kube_authn_result {
    KUBE_AUTHN_FRONT_PROXY,
    KUBE_AUTHN_CLIENT_CERT,
    KUBE_AUTHN_TOKEN,
    KUBE_AUTHN_FAILED,
    KUBE_AUTHN_RESULT_COUNT
} kube_authn_result;

typedef enum kube_authz_result {
    KUBE_AUTHZ_ALWAYS_ALLOWED, /* always-allow path or group */
    KUBE_AUTHZ_CACHE_HIT,
    KUBE_AUTHZ_ALLOWED, /* SubjectAccessReview said yes */
    KUBE_AUTHZ_DENIED,
    KUBE_AUTHZ_ERROR,
    KUBE_AUTHZ_RESULT_COUNT
} kube_authz_result;

/* Every member may be NULL. */
typedef struct kube_serving_observer {
    /* One finished request: its method, the handler's label for it (""
     * when none), the status code and its duration. */
    void (*request)(void *ud, const char *method, const char *label, int code, double seconds);
    void (*inflight)(void *ud, int delta);
    void (*authn)(void *ud, kube_authn_result r);
    void (*authz)(void *ud, kube_authz_result r);
    void *ud;
} kube_serving_observer;

/* The calls, doing nothing for a NULL observer or member. */
void kube_observe_request(const kube_serving_observer *o, const char *method, const char *label,
                          int code, double seconds);
void kube_observe_inflight(const kube_serving_observer *o, int delta);
void kube_observe_authn(const kube_serving_observer *o, kube_authn_result r);
void kube_observe_authz(const kube_serving_observer *o, kube_authz_result r);

#endif
