/*
 * kube/machinery/informer_int.h - what the informer's files share: the informer and
 * hub state, and the steps of the state machine. informer.c holds the hub
 * thread, the completion dispatch and the public API; informer_reflector.c
 * the list and the watch (client-go's Reflector ListAndWatch). Not a
 * public header.
 */
#ifndef KUBE_INFORMER_INT_H
#define KUBE_INFORMER_INT_H

#include "kube/machinery/informer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/transport/poller.h"
#include "kube/util/errors.h"
#include "kube/codec/jsonscratch.h"
#include "kube/codec/jsonstream.h"
#include "kube/util/log.h"
#include "kube/machinery/store.h"

#define DEFAULT_PAGE_SIZE 500
#define MIN_WATCH_TIMEOUT_S 300
#define BACKOFF_INITIAL_MS 800
#define BACKOFF_MAX_MS 30000
#define BACKOFF_RESET_MS (2 * 60 * 1000)
#define SHORT_WATCH_MS 1000
#define ERROR_BODY_MAX (64 * 1024)
#define LIST_STALL_S 60L  /* a list receiving nothing for this long fails */
#define WATCH_GRACE_S 30L /* a watch lasting timeoutSeconds + this is cut */
#define POLL_MAX_MS 1000

enum { ST_IDLE, ST_LISTING, ST_WATCHING };
enum { ACT_LIST, ACT_WATCH };
/* Why the hub ended a transfer from the write callback. */
enum { ABORT_NONE, ABORT_STOP, ABORT_GONE, ABORT_ERROR, ABORT_RELIST };

struct kube_informer {
    kube_hub *hub;
    kube_informer *next;
    kube_informer *next_all; /* the hub's index of every informer (under hub->mu) */
    /* configuration */
    const kube_resource *res;
    const kube_codec *codec;
    char *ns, *field_selector, *label_selector;
    int page_size, watch_timeout_s, backoff_initial_ms, backoff_max_ms;
    kube_informer_handlers h;
    char name[96];
    kube_store *store;
    /* state machine (hub thread) */
    int state, next_action;
    int64_t due_ms;
    CURL *easy;
    struct curl_slist *headers;
    long http_code;
    int abort;
    kube_jsonstream js;
    kube_buf err_body;
    int64_t watch_started_ms;
    unsigned long watch_events;
    /* the list in progress */
    char list_rv[KUBE_RV_MAX]; /* requested version; "" means a consistent read */
    char *cont;                /* continue token of the next page, or NULL */
    int list_limit;            /* 0: no limit */
    int full_fallback;         /* this is the pager's full list after a 410 */
    int retried_unavailable;   /* already retried with resourceVersion="" */
    int list_paginated;
    kube_object **items;
    size_t n_items, cap_items;
    /* reflector memory */
    int paginated_result, rv_unavailable;
    int64_t last_backoff_ms;
    unsigned backoff_attempt; /* retries since the last quiet spell */
    /* shared with other threads */
    pthread_mutex_t mu;
    char last_rv[KUBE_RV_MAX];
    atomic_int synced;
    atomic_ulong lists, watches, relists_410, events, bookmarks, errors;
};

struct kube_hub {
    kube_client *client;
    CURLM *multi;
    kube_poller *poller; /* drives multi; its wakeup: stop, incoming */
    pthread_t thread;
    int started;
    atomic_int stop;
    uint64_t rng;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    kube_informer *informers; /* hub thread's list */
    kube_informer *incoming;  /* added after start, adopted by the thread */
    kube_informer *all;       /* every informer, for sharing (under mu) */
    size_t n_informers, n_synced;
};

/* Uniform in [0, 1). */
double kube_inf_rng_unit(kube_hub *hub);

/* Records rv as the last synced resourceVersion (under inf->mu). */
void kube_inf_set_last_rv(kube_informer *inf, const char *rv);

/* Goes IDLE with action next, due after delay_ms. */
void kube_inf_schedule(kube_informer *inf, int action, int64_t delay_ms);

/* The next backoff delay: exponential with full jitter, capped; reset when
 * the previous failure is old. retry_after_s (0: none) is a floor. */
int64_t kube_inf_backoff_next(kube_informer *inf, long retry_after_s);

/* Drops the staged list items. */
void kube_inf_items_clear(kube_informer *inf);

/* Stages one listed object: KUBE_OK (the reference passes to inf) or
 * KUBE_ENOMEM (the caller keeps it). */
int kube_inf_items_push(kube_informer *inf, kube_object *obj);

/* Ends the transfer: the easy handle and headers released, the stream
 * decoder and error body reset. */
void kube_inf_transfer_end(kube_informer *inf);

/* Appends "?key=value" or "&key=value" (value query-escaped). */
int kube_inf_put_param(kube_buf *b, const char **sep, const char *key, const char *value);

/* Appends the selector parameters shared by lists and watches. */
int kube_inf_put_selectors(kube_informer *inf, kube_buf *b, const char **sep);

/* Starts a GET of path on the hub's multi handle. */
int kube_inf_transfer_start(kube_informer *inf, const char *path, int watch_timeout_s);

/* Starts a list attempt at the version client-go's relistResourceVersion()
 * would use, with its pager's page size. */
void kube_inf_list_begin(kube_informer *inf);

/* The jsonstream callback of a list: one element of items[]. */
int kube_inf_frame_item(void *ud, const char *frame, size_t len);

/* A list page arrived whole: the next page, or the store replaced. */
void kube_inf_list_page_done(kube_informer *inf);

/* A list request failed with err: the pager and reflector fallbacks, or a
 * new attempt after the backoff. */
void kube_inf_list_failed_status(kube_informer *inf, int err, const kube_status *st,
                                 long retry_after_s);

/* Starts the watch from the last synced resourceVersion. */
void kube_inf_watch_begin(kube_informer *inf);

/* The jsonstream callback of a watch: one event applied to the store. */
int kube_inf_frame_event(void *ud, const char *frame, size_t len);

/* A watch transfer finished: pick the next step from how it ended. */
void kube_inf_watch_done(kube_informer *inf, CURLcode cc, int err, const kube_status *st,
                         long retry_after_s);

#endif
