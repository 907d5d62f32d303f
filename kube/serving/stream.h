/*
 * kube/serving/stream.h - a streamed answer (Transfer-Encoding: chunked)
 * of the shared secure server, as k8s.io/apiserver streams a watch: the
 * handler answers with kube_exchange_stream() (exchange.h), which gives it
 * a kube_stream; whoever produces the data (any thread, e.g. an informer's
 * handler) writes it with kube_stream_write(), each call one chunk, and
 * ends it with kube_stream_end(). The server writes what was produced as
 * it comes, ends the response with the last chunk once the producer ended,
 * and keeps the connection for the next request.
 *
 * The stream is cancelled, once, when the client goes away, when its
 * deadline passes (the server then ends it itself: a watch's
 * timeoutSeconds), when the server shuts down, or once the end the
 * producer asked for was sent: the producer's cancel callback runs then,
 * exactly once in every case (on the server's thread: it must not block;
 * it is where the producer lets go of its state), and every later write
 * says KUBE_ECANCELED.
 *
 * Threads: every function is thread-safe.
 * Memory: a stream is reference-counted: kube_exchange_stream() gives the
 * producer one reference, released with kube_stream_unref(); the server
 * holds its own.
 */
#ifndef KUBE_SERVING_STREAM_H
#define KUBE_SERVING_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "kube/util/buf.h"

typedef struct kube_stream kube_stream;

/* Called exactly once when the stream is cancelled or over (see above);
 * ud is the producer's. */
typedef void (*kube_stream_cancel_fn)(void *ud);

/* Queues data (len > 0) as one chunk. KUBE_OK, KUBE_ECANCELED once
 * cancelled or ended, KUBE_ENOMEM. */
int kube_stream_write(kube_stream *s, const char *data, size_t len);
/* The producer is done: the server ends the response after what was
 * queued. Idempotent. */
void kube_stream_end(kube_stream *s);
void kube_stream_unref(kube_stream *s);

/* ---- the server's side ---- */

/* A new stream with two references (the exchange's and the producer's).
 * deadline_ms: kube_now_ms() past which the server ends it (0: none).
 * KUBE_OK or KUBE_ENOMEM. */
int kube_stream_new(int64_t deadline_ms, kube_stream_cancel_fn cancel, void *cancel_ud,
                    kube_stream **out);
/* Who to wake (from the producer's thread) when data or the end is queued;
 * wakes it at once when some already is. */
void kube_stream_attach(kube_stream *s, void (*wake)(void *ud), void *ud);
/* Moves what is queued, chunk-encoded, to out, with the last chunk once
 * the producer ended. Returns 1 when the stream is over (all of it taken),
 * else 0; KUBE_ENOMEM. */
int kube_stream_take(kube_stream *s, kube_buf *out);
/* 1 when something is queued or the stream ended. */
int kube_stream_pending(kube_stream *s);
/* Cancels (the client went away, the server stops): no wake any more, the
 * producer's cancel callback, writes refused. ended: also end the
 * response (deadline, shutdown) after what was queued. */
void kube_stream_cancel(kube_stream *s, int ended);
int64_t kube_stream_deadline(const kube_stream *s);

#endif
