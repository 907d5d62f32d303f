/*
 * apiserver/kubectl/cli.h - kubectl-stickyvm's command line: the commands
 * (pin, unpin, list, why, evacuate, version; --version is the version
 * command), kubectl's flags (--kubeconfig, --context,
 * -n/--namespace, -o/--output, -h/--help) and each command's own, parsed
 * with kube/util/flags.h (pflag's syntax, flags and arguments
 * interspersed), and the --help texts.
 *
 * Threads: pure, on the caller's data. Memory: kctl_options' strings are
 * owned copies freed by kctl_options_free(); target points into argv.
 */
#ifndef KCTL_CLI_H
#define KCTL_CLI_H

#include <stddef.h>
#include <stdio.h>

/* Exit codes: success, an error (the server's or the connection's), a
 * usage error. */
#define KCTL_EXIT_OK 0
#define KCTL_EXIT_ERROR 1
#define KCTL_EXIT_USAGE 2

typedef enum kctl_cmd {
    KCTL_NONE,
    KCTL_PIN,
    KCTL_UNPIN,
    KCTL_LIST,
    KCTL_WHY,
    KCTL_EVACUATE,
    KCTL_VERSION /* version, or --version anywhere */
} kctl_cmd;

typedef struct kctl_options {
    char *kubeconfig, *context, *namespace_, *output, *node;
    char *to;          /* evacuate --to: the node to re-pin to (NULL: unpin) */
    char *from;        /* pin, unpin --from: the precondition (NULL: none) */
    char *selector;    /* evacuate, list -l: a label selector on the VMs */
    char *node_status; /* list --node-status: "NotReady,Unknown,Missing" */
    int all_namespaces, dry_run, force, help;
    kctl_cmd cmd;
    const char *target; /* pin, unpin: the VM; why: a pod or a VM; evacuate:
                           the node (argv's) */
} kctl_options;

/* Parses argv[1..argc) (the arguments kubectl hands the plugin: "pin vm1
 * --node n2") into o (zeroed here). KUBE_OK (o->help: print the usage of
 * o->cmd and exit 0), KUBE_ECONFIG (a usage error, kubectl's wording in
 * err, n bytes; o->cmd set when the command was known) or KUBE_ENOMEM.
 * Call kctl_options_free() in every case. */
int kctl_parse(int argc, char **argv, kctl_options *o, char *err, size_t n);

/* Checks every name the command will put in a request's path or query
 * before anything is sent, as kubectl validates a namespace: ns (the
 * namespace, unless -A makes it unused) a DNS-1123 label; the VM (pin,
 * unpin), the pod or VM (why) and the nodes (--node, --to, evacuate's
 * NODE) DNS-1123 subdomains. KUBE_OK, or KUBE_EINVAL with kubectl's
 * wording in err (n bytes): `invalid namespace "de mo": a lowercase RFC
 * 1123 label must ...`. Pure. */
int kctl_check_names(const kctl_options *o, const char *ns, char *err, size_t n);

/* Frees the strings of o and zeroes it. */
void kctl_options_free(kctl_options *o);

/* Writes the --help text of cmd (KCTL_NONE: the plugin's) to f. */
void kctl_usage(FILE *f, kctl_cmd cmd);

/* The command's name ("pin"), "" for KCTL_NONE. Static. */
const char *kctl_cmd_name(kctl_cmd cmd);

#endif
