/*
 * kube/transport/fuzz_answer.c - libFuzzer target for what kube/transport/client and
 * kube/machinery/informer make of the bytes a server answers, now that libcurl does
 * the HTTP framing:
 *
 *   byte 0 & 3 = 0 or 1: an answer. Bytes 1-2 are the status code (mod
 *   1000); the rest is header lines up to a blank line, then the body. Each
 *   header line goes through kube_retry_after_header() (as the client's
 *   header callback feeds it), the body through kube_response_error() and
 *   kube_status_decode(), and the outcome through kube_retry_decide().
 *   Checked: errors are negative KUBE_E* codes, 2xx is KUBE_OK, the Status
 *   strings are terminated, Retry-After is -1 or in [0, INT32_MAX], a
 *   retry delay is within its caps.
 *
 *   byte 0 & 3 = 2 or 3: a streamed body (watch lines, or a list), as
 *   libcurl hands it over after undoing the chunked transfer coding: fed to
 *   kube/codec/jsonstream once whole and once cut at points byte 1 seeds. The
 *   frames (and a list's skeleton) must be the same both ways; each watch
 *   frame is decoded as a Pod event too.
 *
 * Run by scripts/test-fuzz.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/errors.h"
#include "kube/codec/jsonstream.h"
#include "kube/types/pod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_FRAME 4096 /* small, so that dropping long frames is exercised */

static void check_status(const kube_status *st)
{
    if (!memchr(st->reason, '\0', sizeof(st->reason)) ||
        !memchr(st->message, '\0', sizeof(st->message)))
        abort();
}

/* Feeds the header block line by line; returns the Retry-After seen. */
static long fuzz_headers(const char *p, size_t n)
{
    long retry_after = -1;

    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) + 1 : n;

        retry_after = kube_retry_after_header(retry_after, p, len);
        if (retry_after < -1 || retry_after > INT32_MAX)
            abort();
        p += len;
        n -= len;
    }
    return retry_after;
}

static void fuzz_answer(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    const char *text = (const char *)data + 3, *body;
    size_t n = size - 3, head, len;
    long code = (((long)data[1] << 8) | data[2]) % 1000, retry_after, delay;
    const char *sep = memmem(text, n, "\r\n\r\n", 4);
    kube_status st;
    int rc;

    head = sep ? (size_t)(sep - text) + 2 : n;
    body = sep ? sep + 4 : NULL;
    len = sep ? n - head - 2 : 0;
    retry_after = fuzz_headers(text, head);
    rc = kube_response_error(code, body, len, &st);
    check_status(&st);
    if (rc > 0 || ((code >= 200 && code < 300) != (rc == KUBE_OK)))
        abort();
    rc = kube_status_decode(body, len, code, &st);
    check_status(&st);
    if (rc != KUBE_OK && rc != KUBE_EPARSE)
        abort();
    for (int attempt = 0; attempt < 3; attempt++)
        if (kube_retry_decide(methods[data[0] % 5], code, retry_after, attempt, 2, 100, 5000,
                              (unsigned)code * 2654435761u, &delay) &&
            (delay < 0 || delay > 60000))
            abort();
}

/* The frames of one pass, each as its length then its bytes. */
typedef struct fuzz_frames {
    kube_buf all;
    int decode;
} fuzz_frames;

static int on_frame(void *ud, const char *frame, size_t len)
{
    fuzz_frames *f = ud;
    kube_watch_event ev;
    char err[128];

    if (len > FUZZ_MAX_FRAME)
        abort();
    if (kube_buf_append(&f->all, &len, sizeof(len)) != KUBE_OK ||
        kube_buf_append(&f->all, frame, len) != KUBE_OK)
        return KUBE_ENOMEM;
    if (f->decode) {
        int rc = kube_watch_event_decode(frame, len, &kube_pod_codec, &ev, err, sizeof(err));
        if (rc > 0)
            abort();
        kube_watch_event_clear(&ev);
    }
    return 0;
}

/* One pass over body, cut into pieces by seed (0: whole). Returns the
 * feed's result; the frames and a list's skeleton go to f. */
static int fuzz_pass(int mode, const char *body, size_t n, unsigned seed, fuzz_frames *f)
{
    kube_jsonstream s;
    size_t off = 0, skel_len;
    const char *skel;
    int rc = KUBE_OK;

    kube_jsonstream_init(&s, mode, FUZZ_MAX_FRAME);
    while (rc == KUBE_OK && off < n) {
        size_t piece = n - off;
        if (seed) {
            seed = seed * 1103515245u + 12345u;
            piece = 1 + (seed >> 16) % 97;
            piece = piece > n - off ? n - off : piece;
        }
        rc = kube_jsonstream_feed(&s, body + off, piece, on_frame, f);
        off += piece;
    }
    if (rc == KUBE_OK)
        rc = kube_jsonstream_finish(&s, on_frame, f);
    skel = kube_jsonstream_skeleton(&s, &skel_len);
    if (rc == KUBE_OK && mode == KUBE_JSONSTREAM_LIST &&
        kube_buf_append(&f->all, skel, skel_len) != KUBE_OK)
        rc = KUBE_ENOMEM;
    kube_jsonstream_free(&s);
    return rc;
}

static void fuzz_stream(const uint8_t *data, size_t size)
{
    int mode = (data[0] & 1) ? KUBE_JSONSTREAM_LIST : KUBE_JSONSTREAM_LINES;
    const char *body = (const char *)data + 2;
    fuzz_frames whole = {KUBE_BUF_INIT, 0}, cut = {KUBE_BUF_INIT, mode == KUBE_JSONSTREAM_LINES};
    int rc_whole = fuzz_pass(mode, body, size - 2, 0, &whole);
    int rc_cut = fuzz_pass(mode, body, size - 2, data[1] + 1u, &cut);

    if (rc_whole > 0 || rc_cut > 0)
        abort();
    if (rc_whole != KUBE_ENOMEM && rc_cut != KUBE_ENOMEM &&
        (rc_whole != rc_cut || whole.all.len != cut.all.len ||
         (whole.all.len && memcmp(whole.all.data, cut.all.data, whole.all.len) != 0)))
        abort(); /* the frames depend on where the body was cut */
    kube_buf_free(&whole.all);
    kube_buf_free(&cut.all);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    if ((data[0] & 3) < 2)
        fuzz_answer(data, size);
    else
        fuzz_stream(data, size);
    return 0;
}
