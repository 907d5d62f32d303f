/*
 * apiserver/main.c - stickyvm-apiserver: the aggregated API server behind
 * the APIService v1.subresources.stickyvm.io. See docs/api.md.
 *
 * SIGTERM and SIGINT start a graceful shutdown (requests in flight finish,
 * up to --shutdown-timeout); exit status 0 after a clean stop, 1 when the
 * server cannot start, 2 for bad flags.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "options.h"

typedef struct signals {
    sigset_t set;
    apis_app *app;
} signals;

/* Waits for SIGTERM/SIGINT (stop the server) or SIGUSR1 (main is done). */
static void *signal_thread(void *arg)
{
    signals *s = arg;
    int sig = 0;

    while (sigwait(&s->set, &sig) == 0) {
        if (sig == SIGUSR1)
            break;
        KLOG_INFO("received signal %d, shutting down", sig);
        apis_app_stop(s->app);
    }
    return NULL;
}

static int serve(const apis_options *o)
{
    signals sig;
    pthread_t thread;
    apis_app *app = NULL;
    char err[1024] = "";
    int rc;

    sigemptyset(&sig.set);
    sigaddset(&sig.set, SIGTERM);
    sigaddset(&sig.set, SIGINT);
    sigaddset(&sig.set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &sig.set, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = apis_app_new(o, &app, err, sizeof(err));
    if (rc != KUBE_OK) {
        KLOG_ERROR("cannot start: %s", err);
        return 1;
    }
    sig.app = app;
    if (pthread_create(&thread, NULL, signal_thread, &sig) != 0) {
        apis_app_free(app);
        return 1;
    }
    apis_app_run(app);
    pthread_kill(thread, SIGUSR1);
    pthread_join(thread, NULL);
    apis_app_free(app);
    return 0;
}

int main(int argc, char **argv)
{
    apis_options o;
    char err[512] = "";
    int rc;

    if (apis_options_parse(argc, argv, &o, err, sizeof(err)) != KUBE_OK) {
        fprintf(stderr, "stickyvm-apiserver: %s\n", err);
        apis_options_usage(stderr);
        apis_options_free(&o);
        return 2;
    }
    if (o.help) {
        apis_options_usage(stdout);
        apis_options_free(&o);
        return 0;
    }
    klog_set_verbosity(o.verbosity);
    rc = serve(&o);
    apis_options_free(&o);
    return rc;
}
