/*
 * apiserver/main.c - stickyvm-apiserver: the aggregated API server behind
 * the APIService v1.subresources.stickyvm.io. See docs/api.md.
 *
 * The command line is run by kube/util/cli.h, as kube's binaries run it:
 * -h/--help (the flag sets in sections, with defaults), --version, and on
 * a bad flag the usage then "Error: ..." with exit status 1.
 *
 * SIGTERM and SIGINT start a graceful shutdown (requests in flight finish,
 * up to --shutdown-timeout); exit status 0 after a clean stop, 1 when the
 * server cannot start or a flag is wrong.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "kube/util/cli.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/version.h"
#include "options.h"

#define DESCRIPTION                                                                  \
    "stickyvm-apiserver serves\n"                                                    \
    "/apis/subresources.stickyvm.io/v1/namespaces/NS/virtualmachines/NAME/pin and\n" \
    ".../unpin behind kube-apiserver's aggregation layer."

typedef struct signals {
    sigset_t set;
    apis_app *app;
} signals;

/* Waits for SIGTERM/SIGINT (stop the server) or SIGUSR1 (main is done). */
static void *signal_thread(void *arg)
{
    signals *s = arg;
    int sig = 0;

    pthread_setname_np(pthread_self(), "apis-signal");
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

/* The command line into o (kube/util/cli.h): KUBE_CLI_CONTINUE to run, or
 * the exit status. */
static int parse_command_line(apis_options *o, int argc, char **argv)
{
    kube_flag_set sets[KUBE_CLI_MAX_SETS];
    kube_cli cli = {"stickyvm-apiserver", DESCRIPTION, sets, 0, NULL, &o->logs};
    char err[512] = "";
    int code;

    if (apis_options_defaults(o) != KUBE_OK) {
        fprintf(stderr, "Error: %s\n", kube_strerror(KUBE_ENOMEM));
        return 1;
    }
    cli.nsets = apis_options_flag_sets(o, sets, KUBE_CLI_MAX_SETS - 1);
    code = kube_cli_parse(&cli, argc, argv);
    if (code == KUBE_CLI_CONTINUE && apis_options_validate(o, err, sizeof(err)) != KUBE_OK) {
        fprintf(stderr, "Error: %s\n", err);
        code = 1;
    }
    return code;
}

int main(int argc, char **argv)
{
    apis_options o;
    int code = parse_command_line(&o, argc, argv);

    if (code == KUBE_CLI_CONTINUE) {
        KLOG_INFOS("Starting stickyvm-apiserver", "version", kube_version());
        code = serve(&o);
    }
    apis_options_free(&o);
    return code;
}
