/*
 * tests/emulator/h2.h - HTTP/2 for the emulator (libnghttp2): the ALPN
 * choice and the loop that serves a connection that negotiated "h2".
 *
 * Each stream is one request through the same pipeline as HTTP/1.1
 * (emu_request_serve), run on a thread of its own (a pooled one, spawn.h)
 * so that long-running streams (watches) and other requests share the
 * connection; the
 * connection thread alone drives the nghttp2 session. kube-apiserver's
 * 250 concurrent streams are advertised. A header list larger than
 * EMU_MAX_HEADER_BYTES (RFC 7541 sizes) or EMU_MAX_HEADERS fields is
 * answered 431 (no SETTINGS_MAX_HEADER_LIST_SIZE is sent: nghttp2 would
 * refuse such streams instead), a body over --max-body-bytes 413. A stream the client resets ends
 * its handler (emu_stream_should_stop, writes fail). When the server stops, or the connection idles
 * longer than --idle-timeout-ms, a GOAWAY is sent and the open streams finish.
 *
 * Threads: emu_h2_serve runs on the connection's thread and returns once
 * every stream handler it started has returned.
 * Memory: the link is borrowed; the caller keeps owning the SSL, the
 * sockets and the peer certificate.
 */
#ifndef STICKYVM_EMU_H2_H
#define STICKYVM_EMU_H2_H

#include "emu_internal.h"

/* Installs the ALPN choice on ctx: "h2" when the client offers it and
 * offer_h2 is 1, else "http/1.1" when offered; a client offering neither
 * (or no ALPN) gets HTTP/1.1 without ALPN. */
void emu_h2_setup_alpn(SSL_CTX *ctx, int offer_h2);

/* 1 when the handshake of ssl chose "h2", else 0. */
int emu_h2_negotiated(SSL *ssl);

/* What the HTTP/2 loop needs of a connection (all borrowed). */
typedef struct emu_h2_link {
    emu_server *server;
    emu_conn *conn;
    SSL *ssl;           /* after a handshake that chose h2 */
    int fd;             /* the socket (made non-blocking while served) */
    int wake_fd;        /* an eventfd: written to wake the loop (shutdown) */
    X509 *peer;         /* the client certificate, or NULL */
    const char *remote; /* "127.0.0.1:54321" */
} emu_h2_link;

/* Serves HTTP/2 on the connection until the peer closes it, a GOAWAY
 * ended it or it failed. Returns KUBE_OK when it ended cleanly (the caller
 * may send close_notify), KUBE_EIO when the transport or the peer's
 * HTTP/2 broke, KUBE_ETIMEDOUT when the peer read nothing for 30 s while
 * output waited, KUBE_ENOMEM. */
int emu_h2_serve(const emu_h2_link *l);

#endif
