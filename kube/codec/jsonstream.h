/*
 * kube/codec/jsonstream.h - incremental framing of streamed JSON, and decoding of
 * watch events.
 *
 * A kube_jsonstream is fed the body of a response chunk by chunk, as curl
 * delivers it, and calls back once per complete frame, whatever the chunk
 * boundaries: a frame may be split across any number of chunks, and one
 * chunk may hold many frames. Bytes are copied only for a frame that
 * straddles chunks; a frame wholly inside one chunk is handed out in place.
 *
 * Two modes:
 *
 *   KUBE_JSONSTREAM_LINES - a watch stream. kube-apiserver writes one
 *   compact JSON object per event, each followed by "\n". A frame ends at a
 *   newline, or where a JSON object or array that started the frame closes
 *   (so `{...}{...}` on one line is two frames, as Go's json.Decoder reads
 *   it). A raw newline always ends a frame, so a truncated or garbage line
 *   costs that line only and never swallows the events after it. Frames are
 *   delivered as they are, garbage included: the consumer's parser decides
 *   (see kube_watch_event_decode()). Blank lines are skipped.
 *
 *   KUBE_JSONSTREAM_LIST - a list response
 *   `{"kind":"PodList",...,"metadata":{...},"items":[{...},{...}]}`. Each
 *   element of the top-level "items" array is a frame, so a list of any
 *   size is decoded item by item without holding the whole body. Everything
 *   outside "items" (kind, apiVersion, metadata) is kept, with "items"
 *   emptied, as the skeleton: kube_jsonstream_skeleton() gives it as a small
 *   JSON text to read metadata.resourceVersion and metadata.continue from.
 *
 * Frames larger than max_frame bytes are dropped (counted, logged); the
 * skeleton is limited to 1 MiB (beyond, kube_jsonstream_finish() fails).
 *
 * Memory: a kube_jsonstream is caller storage initialised with
 * kube_jsonstream_init() and released with kube_jsonstream_free(). Frame
 * pointers passed to the callback are borrowed and valid only during the
 * call. Not thread-safe: one stream is fed by one thread.
 */
#ifndef KUBE_JSONSTREAM_H
#define KUBE_JSONSTREAM_H

#include <stddef.h>

#include "kube/util/buf.h"
#include "kube/codec/object.h"

enum { KUBE_JSONSTREAM_LINES = 0, KUBE_JSONSTREAM_LIST = 1 };

/* Default frame limit: larger than any object etcd accepts (1.5 MiB), with
 * room for the JSON escaping of a watch event around it. */
#define KUBE_JSONSTREAM_MAX_FRAME (8u * 1024u * 1024u)

/* Called once per frame. Returns 0 to go on; any other value stops the feed,
 * which then returns that value. */
typedef int (*kube_jsonstream_fn)(void *ud, const char *frame, size_t len);

typedef struct kube_jsonstream {
    int mode;
    size_t max_frame;
    /* lexical state */
    int depth;
    int in_str, esc;
    /* the current frame */
    int in_frame, frame_raw, dropping;
    size_t frame_len;
    kube_buf partial;
    /* list mode: where "items" is, and everything around it */
    int items; /* 0 before, 1 key read, 2 inside the array, 3 after */
    int expect_key, key_capture;
    char key[8];
    size_t key_len;
    kube_buf skeleton;
    int skeleton_full;
    /* counters */
    unsigned long frames, dropped;
} kube_jsonstream;

/* Prepares s for a new body. max_frame 0 means KUBE_JSONSTREAM_MAX_FRAME.
 * Allocates nothing until data is fed. */
void kube_jsonstream_init(kube_jsonstream *s, int mode, size_t max_frame);
/* Forgets the current body (keeps the mode, limit and allocated memory). */
void kube_jsonstream_reset(kube_jsonstream *s);
/* Releases the memory held by s (s can be re-initialised). */
void kube_jsonstream_free(kube_jsonstream *s);

/* Scans len bytes, calling fn for each frame completed. Returns KUBE_OK,
 * KUBE_ENOMEM, or the non-zero value fn returned to stop. */
int kube_jsonstream_feed(kube_jsonstream *s, const char *data, size_t len, kube_jsonstream_fn fn,
                         void *ud);
/* Ends the body. LINES: a last frame without its newline is delivered (a
 * complete object was delivered already, so this is a truncated one or
 * garbage, which the consumer reports). LIST: returns KUBE_EPARSE when the
 * document is incomplete or the skeleton overflowed. Returns KUBE_OK, or what
 * fn returned. */
int kube_jsonstream_finish(kube_jsonstream *s, kube_jsonstream_fn fn, void *ud);
/* LIST mode, after a successful finish: the document without its items, a
 * NUL-terminated JSON text owned by s. "" before. */
const char *kube_jsonstream_skeleton(const kube_jsonstream *s, size_t *len);

/* ---- watch events ------------------------------------------------------ */

enum {
    KUBE_WATCH_ADDED = 1,
    KUBE_WATCH_MODIFIED,
    KUBE_WATCH_DELETED,
    KUBE_WATCH_BOOKMARK,
    KUBE_WATCH_ERROR,
};

/* Longest resourceVersion kept. etcd's are decimal 64-bit numbers; the
 * value is opaque, so a longer one is refused rather than truncated. */
#define KUBE_RV_MAX 64

typedef struct kube_watch_event {
    int type;             /* KUBE_WATCH_* */
    kube_object *obj;     /* ADDED/MODIFIED/DELETED: one reference */
    char rv[KUBE_RV_MAX]; /* the object's or bookmark's version */
    int code;             /* ERROR: the Status code (0 if absent) */
    char reason[64];      /* ERROR: the Status reason */
    char message[256];    /* ERROR: the Status message, truncated */
} kube_watch_event;

/* Decodes one watch frame {"type": ..., "object": {...}}. Objects of
 * ADDED/MODIFIED/DELETED go through codec; ev->obj then holds a reference the
 * caller releases with kube_watch_event_clear(). Returns KUBE_OK, or
 * KUBE_EPARSE for a frame that is not JSON, has an unknown type, lacks the
 * object, or whose object the codec rejects (ev->rv is still filled when the
 * object carries one), or KUBE_ENOMEM. A short reason for a failure is
 * written to err (may be NULL). */
int kube_watch_event_decode(const char *frame, size_t len, const kube_codec *codec,
                            kube_watch_event *ev, char *err, size_t errlen);
/* Releases ev->obj and zeroes ev. */
void kube_watch_event_clear(kube_watch_event *ev);
/* The watch type's name ("ADDED", ...), "?" for others. Static storage. */
const char *kube_watch_type_name(int type);

/* Reads metadata.resourceVersion of a JSON object into out (n bytes).
 * Returns KUBE_OK, KUBE_ENOTFOUND (absent or not a string) or KUBE_ERANGE
 * (longer than n - 1). */
int kube_json_resource_version(const cJSON *obj, char *out, size_t n);

#endif
