/*
 * kube/fuzz_http1.c - libFuzzer target for what kube/http1 does with the
 * bytes a server answers: status line and headers, 1xx interim answers,
 * Content-Length, chunked and close-delimited bodies, Retry-After, and the
 * keep-alive decision (a pooled connection the server then closed must be
 * dropped, never misread by the next exchange).
 *
 * Input: the whole answer a plain-http server on 127.0.0.1 sends to one GET
 * before closing the connection. The server is a thread of this process;
 * each input is one exchange. Any answer must end in KUBE_OK or a negative
 * KUBE_E* code, within the exchange timeout, without a sanitizer report.
 *
 * Run by scripts/test-fuzz.sh.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/errors.h"
#include "kube/http1.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The answer the server thread sends next; handed over under mu. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const uint8_t *data;
    size_t size;
    int pending;
} answer = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0};

static int listener = -1;
static kube_h1 *client;

/* Reads the request up to its blank line (a GET has no body). */
static void read_request(int fd)
{
    char buf[4096];
    size_t have = 0;

    while (have < sizeof(buf)) {
        ssize_t r = recv(fd, buf + have, sizeof(buf) - have, 0);
        if (r <= 0)
            return;
        have += (size_t)r;
        if (have >= 4 && memmem(buf, have, "\r\n\r\n", 4))
            return;
    }
}

/* Accepts one connection per exchange, answers with the current input and
 * closes. */
static void *serve(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(listener, NULL, NULL);
        if (fd < 0)
            continue;
        read_request(fd);
        pthread_mutex_lock(&answer.mu);
        while (!answer.pending)
            pthread_cond_wait(&answer.cv, &answer.mu);
        if (answer.size)
            (void)!send(fd, answer.data, answer.size, MSG_NOSIGNAL);
        answer.pending = 0;
        pthread_mutex_unlock(&answer.mu);
        close(fd);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    kube_h1_target t;
    pthread_t th;
    char err[256];

    (void)argc;
    (void)argv;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(listener, 16) != 0 || getsockname(listener, (struct sockaddr *)&a, &len) != 0)
        abort();
    memset(&t, 0, sizeof(t));
    t.host = "127.0.0.1";
    t.port = ntohs(a.sin_port);
    if (kube_h1_new(&t, &client, err, sizeof(err)) != KUBE_OK ||
        pthread_create(&th, NULL, serve, NULL) != 0)
        abort();
    pthread_detach(th);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kube_h1_request q = {"GET", "/api/v1/nodes/n", NULL, NULL, 0, 2000, NULL};
    kube_h1_response r = {0, -1, 0, KUBE_BUF_INIT};
    char err[256];
    int rc;

    pthread_mutex_lock(&answer.mu);
    answer.data = data;
    answer.size = size;
    answer.pending = 1;
    pthread_cond_signal(&answer.cv);
    pthread_mutex_unlock(&answer.mu);
    rc = kube_h1_exchange(client, &q, &r, err, sizeof(err));
    if (rc > 0 || (rc == KUBE_OK && (r.code < 100 || r.code > 999)))
        abort(); /* outside the contract */
    pthread_mutex_lock(&answer.mu); /* an input the server did not take is dropped */
    answer.pending = 0;
    answer.data = NULL;
    answer.size = 0;
    pthread_mutex_unlock(&answer.mu);
    kube_buf_free(&r.body);
    return 0;
}
