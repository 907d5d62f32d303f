/*
 * apiserver/kubectl/main.c - kubectl-stickyvm, the kubectl plugin of
 * stickyvm (`kubectl stickyvm pin|unpin|list|why|evacuate|version`): the command line
 * (cli.h), the configuration as kubectl finds it (--kubeconfig, else
 * KUBECONFIG, else ~/.kube/config, else in-cluster; --context; the
 * namespace from -n, the context, or "default"), one client on
 * kube/transport, and the command (cmd.h). Exit codes: 0, 1 (an error, or
 * a VM evacuate could not move), 2 (a usage error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "cmd.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/version.h"

/* kubectl's default kubeconfig, ~/.kube/config, when neither --kubeconfig
 * nor KUBECONFIG names one and it exists; NULL otherwise. */
static const char *default_kubeconfig(const kctl_options *o, char *buf, size_t n)
{
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    struct stat st;
    if ((o->kubeconfig && *o->kubeconfig) || (env && *env) || !home)
        return o->kubeconfig;
    snprintf(buf, n, "%s/.kube/config", home);
    return stat(buf, &st) == 0 ? buf : NULL;
}

static int run(const kctl_options *o)
{
    char err[1024] = "", home_cfg[4096];
    kube_config *cfg = NULL;
    kube_client *client = NULL;
    kube_client_options copts;
    int rc = kube_config_load_context(default_kubeconfig(o, home_cfg, sizeof(home_cfg)), o->context,
                                      &cfg, err, sizeof(err));
    if (rc != KUBE_OK && o->cmd == KCTL_VERSION) { /* no server known: said, not an error */
        fprintf(stderr, "Server Version: unknown (%s)\n", err[0] ? err : kube_strerror(rc));
        return KCTL_EXIT_OK;
    }
    if (rc != KUBE_OK) {
        fprintf(stderr, "error: %s\n", err[0] ? err : kube_strerror(rc));
        return KCTL_EXIT_ERROR;
    }
    const char *ns = o->namespace_ && *o->namespace_ ? o->namespace_ : kube_config_namespace(cfg);
    ns = ns && *ns ? ns : "default";
    if (kctl_check_names(o, ns, err, sizeof(err)) != KUBE_OK) {
        fprintf(stderr, "error: %s\n", err);
        kube_config_free(cfg);
        return KCTL_EXIT_ERROR;
    }
    kube_client_options_default(&copts);
    copts.max_retries = 1;
    copts.user_agent = "kubectl-stickyvm";
    if ((rc = kube_client_new(cfg, &copts, &client)) != KUBE_OK) {
        fprintf(stderr, "error: %s\n", kube_strerror(rc));
        kube_config_free(cfg);
        return KCTL_EXIT_ERROR;
    }
    kctl_ctx ctx = {client, o, ns, stdout, stderr, time(NULL)};
    int code = o->cmd == KCTL_LIST       ? kctl_list(&ctx)
               : o->cmd == KCTL_WHY      ? kctl_why(&ctx)
               : o->cmd == KCTL_EVACUATE ? kctl_evacuate(&ctx)
               : o->cmd == KCTL_VERSION  ? kctl_server_version(&ctx)
                                         : kctl_pin(&ctx);
    kube_client_free(client);
    kube_config_free(cfg);
    return code;
}

int main(int argc, char **argv)
{
    kctl_options o;
    char err[512] = "";
    int rc = kctl_parse(argc, argv, &o, err, sizeof(err)), code;
    klog_set_verbosity(0);
    if (rc == KUBE_ENOMEM) {
        fprintf(stderr, "error: out of memory\n");
        code = KCTL_EXIT_ERROR;
    } else if (rc != KUBE_OK) {
        fprintf(stderr, "error: %s\nSee 'kubectl stickyvm%s%s --help' for usage.\n", err,
                o.cmd ? " " : "", kctl_cmd_name(o.cmd));
        code = KCTL_EXIT_USAGE;
    } else if (o.help) {
        kctl_usage(stdout, o.cmd);
        code = KCTL_EXIT_OK;
    } else {
        if (o.cmd == KCTL_VERSION) /* as the daemons print it, before any connection */
            kube_version_print(stdout, "kubectl-stickyvm");
        code = run(&o);
    }
    kctl_options_free(&o);
    return code;
}
