/*
 * apiserver/kubectl/cli.c - kubectl-stickyvm's command line (cli.h).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "kube/codec/validation.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/flags.h"

#define OFF(f) offsetof(kctl_options, f)
#define MAX_FLAGS 12

/* --dry-run: a switch, or kubectl's values ("server", "none"; "client"
 * previews on the server too: the plugin has no local state to preview). */
static int set_dry_run(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    static const char *const on[] = {"true", "server", "client", "All"};
    static const char *const off[] = {"false", "none"};
    int *field = (int *)((char *)dst + f->offset);
    for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++)
        if (strcmp(value, on[i]) == 0)
            return *field = 1, KUBE_OK;
    for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
        if (strcmp(value, off[i]) == 0)
            return *field = 0, KUBE_OK;
    snprintf(why, n, "must be \"none\", \"server\", or \"client\"");
    return KUBE_ECONFIG;
}

#define COMMON_FLAGS                                                              \
    {"kubeconfig",                                                                \
     KUBE_FLAG_STRING,                                                            \
     OFF(kubeconfig),                                                             \
     0,                                                                           \
     0,                                                                           \
     NULL,                                                                        \
     "Path to the kubeconfig file to use for CLI requests.",                      \
     NULL},                                                                       \
        {"context",                                                               \
         KUBE_FLAG_STRING,                                                        \
         OFF(context),                                                            \
         0,                                                                       \
         0,                                                                       \
         NULL,                                                                    \
         "The name of the kubeconfig context to use",                             \
         NULL},                                                                   \
        {"namespace",                                                             \
         KUBE_FLAG_STRING,                                                        \
         OFF(namespace_),                                                         \
         0,                                                                       \
         0,                                                                       \
         NULL,                                                                    \
         "If present, the namespace scope for this CLI request",                  \
         NULL},                                                                   \
        {"output",                                                                \
         KUBE_FLAG_STRING,                                                        \
         OFF(output),                                                             \
         0,                                                                       \
         0,                                                                       \
         NULL,                                                                    \
         "Output format. One of: (json, yaml).",                                  \
         NULL},                                                                   \
    {                                                                             \
        "help", KUBE_FLAG_BOOL, OFF(help), 0, 0, "", "help for the command", NULL \
    }
#define NODE_FLAG(help_text)                                             \
    {                                                                    \
        "node", KUBE_FLAG_STRING, OFF(node), 0, 0, NULL, help_text, NULL \
    }
#define DRY_RUN_FLAG                                                                     \
    {                                                                                    \
        "dry-run", KUBE_FLAG_CUSTOM, OFF(dry_run), 0, 0, "",                             \
            "Only preview the change (the server answers what it would do, dryRun=All)", \
            set_dry_run                                                                  \
    }

#define FROM_FLAG                                                                                \
    {                                                                                            \
        "from", KUBE_FLAG_STRING, OFF(from), 0, 0, NULL,                                         \
            "Only if the VM is pinned to this node now (\"\": only if unpinned); else 409", NULL \
    }

static const kube_flag pin_flags[] = {
    COMMON_FLAGS,
    NODE_FLAG("The node to pin the VM to (default: the node its VMI runs on)"),
    FROM_FLAG,
    DRY_RUN_FLAG,
    {"force", KUBE_FLAG_BOOL, OFF(force), 0, 0, "",
     "Pin even away from the node the VM's local volumes live on", NULL},
};
static const kube_flag unpin_flags[] = {
    COMMON_FLAGS,
    FROM_FLAG,
    DRY_RUN_FLAG,
    {"force", KUBE_FLAG_BOOL, OFF(force), 0, 0, "",
     "Unpin even a VM whose local volumes allow only its pinned node", NULL},
};
static const kube_flag list_flags[] = {
    COMMON_FLAGS,
    NODE_FLAG("Only the VMs pinned to this node"),
    {"all-namespaces", KUBE_FLAG_BOOL, OFF(all_namespaces), 0, 0, "",
     "List the pins in all namespaces", NULL},
    {"node-status", KUBE_FLAG_STRING, OFF(node_status), 0, 0, NULL,
     "Only the VMs whose pinned node is in one of these states (comma-separated: Ready, "
     "NotReady, Unknown, Missing, SchedulingDisabled)",
     NULL},
    {"selector", KUBE_FLAG_STRING, OFF(selector), 0, 0, NULL,
     "Only the VMs matching this label selector (-l app=db)", NULL},
};
static const kube_flag evacuate_flags[] = {
    COMMON_FLAGS,
    {"to", KUBE_FLAG_STRING, OFF(to), 0, 0, NULL,
     "Re-pin each VM to this node (default: unpin, the next start is placed and pinned anew)",
     NULL},
    DRY_RUN_FLAG,
    {"force", KUBE_FLAG_BOOL, OFF(force), 0, 0, "",
     "Move even the VMs whose local volumes live on NODE (they lose that data)", NULL},
    {"all-namespaces", KUBE_FLAG_BOOL, OFF(all_namespaces), 0, 0, "",
     "Evacuate the VMs of every namespace", NULL},
    {"selector", KUBE_FLAG_STRING, OFF(selector), 0, 0, NULL,
     "Only the VMs matching this label selector (-l app=db)", NULL},
};
static const kube_flag why_flags[] = {COMMON_FLAGS};
static const kube_flag version_flags[] = {COMMON_FLAGS};
static const kube_flag no_cmd_flags[] = {COMMON_FLAGS};

static const kube_flag_short shorts[] = {
    {'n', "namespace"}, {'o', "output"}, {'h', "help"}, {'A', "all-namespaces"}, {'l', "selector"}};
#define N_SHORTS (sizeof(shorts) / sizeof(shorts[0]))

typedef struct cmd_desc {
    kctl_cmd cmd;
    const char *name, *use, *summary, *example;
    const kube_flag *flags;
    size_t n_flags;
    int args; /* positional arguments after the command */
} cmd_desc;

#define FLAGS(a) a, sizeof(a) / sizeof(a[0])
static const cmd_desc cmds[] = {
    {KCTL_NONE, "", "kubectl stickyvm [command]",
     "Operate the pins of stickyvm: the node each KubeVirt VM is kept on.", "", FLAGS(no_cmd_flags),
     0},
    {KCTL_PIN, "pin", "kubectl stickyvm pin VM [--node NODE] [--from NODE] [--dry-run] [--force]",
     "Pin a VM to a node: its next pods run only there (default: where its VMI runs).",
     "  # Move vm1 to node-2 (its next start lands there)\n"
     "  kubectl stickyvm pin vm1 --node node-2\n\n"
     "  # Preview it\n"
     "  kubectl stickyvm pin vm1 --node node-2 --dry-run\n",
     FLAGS(pin_flags), 1},
    {KCTL_UNPIN, "unpin", "kubectl stickyvm unpin VM [--from NODE] [--dry-run] [--force]",
     "Release a VM's pin: its next pod may run on any node, and is pinned there.",
     "  kubectl stickyvm unpin vm1 -n prod\n", FLAGS(unpin_flags), 1},
    {KCTL_LIST, "list",
     "kubectl stickyvm list [--node NODE] [--node-status STATES] [-l SELECTOR] [-A]",
     "List the VMs' pins: virtualmachinepins (the VMs' annotations on an older server).\n"
     "NODE-STATUS is the pinned node's state as the server reports it (status.nodeStatus).",
     "  # What is pinned to node-3, in every namespace\n"
     "  kubectl stickyvm list --node node-3 -A\n\n"
     "  # The VMs whose node is lost or gone\n"
     "  kubectl stickyvm list -A --node-status NotReady,Unknown,Missing\n",
     FLAGS(list_flags), 0},
    {KCTL_WHY, "why", "kubectl stickyvm why POD|VM",
     "Explain what keeps a VM from running: its pin, the pinned node's state (cordon, taints,\n"
     "allocatable against requested), the latest FailedScheduling, and what to do.",
     "  kubectl stickyvm why vm1\n  kubectl stickyvm why virt-launcher-vm1-x7k2p\n",
     FLAGS(why_flags), 1},
    {KCTL_EVACUATE, "evacuate",
     "kubectl stickyvm evacuate NODE [--to OTHER] [--dry-run] [--force] [-n NS | -A] [-l SELECTOR]",
     "Move every pin off a node: one pin (--to) or unpin request per VM pinned to NODE.\n"
     "Without --to each VM is unpinned: its next start is placed by the scheduler and pinned\n"
     "there. The server refuses to move a VM away from the node its local volumes live on\n"
     "(a pin elsewhere, or an unpin when they allow no other node);\n"
     "such VMs are listed as refused and stay, unless --force (their data stays behind).\n"
     "Exit status: 0 when every VM moved, 1 when any was refused or failed (or the list\n"
     "failed), 2 on a usage error.",
     "  # Preview moving every VM of node-1 to node-2\n"
     "  kubectl stickyvm evacuate node-1 --to node-2 -A --dry-run\n\n"
     "  # Release the pins of node-1 in namespace prod\n"
     "  kubectl stickyvm evacuate node-1 -n prod\n",
     FLAGS(evacuate_flags), 1},
    {KCTL_VERSION, "version", "kubectl stickyvm version",
     "Print the plugin's version, and the Kubernetes server's when it is reachable.\n"
     "kubectl stickyvm --version does the same.",
     "  kubectl stickyvm version\n  kubectl stickyvm --version\n", FLAGS(version_flags), 0},
};

static const cmd_desc *desc_of(kctl_cmd cmd)
{
    return &cmds[cmd];
}

const char *kctl_cmd_name(kctl_cmd cmd)
{
    return desc_of(cmd)->name;
}

void kctl_usage(FILE *f, kctl_cmd cmd)
{
    const cmd_desc *d = desc_of(cmd);
    fprintf(f, "%s\n\n", d->summary);
    if (cmd == KCTL_NONE) {
        fprintf(f, "Available Commands:\n");
        for (size_t i = 1; i < sizeof(cmds) / sizeof(cmds[0]); i++)
            fprintf(f, "  %-8s %.*s\n", cmds[i].name, (int)strcspn(cmds[i].summary, ":\n"),
                    cmds[i].summary);
        fprintf(f, "\n");
    } else {
        fprintf(f, "Examples:\n%s\n", d->example);
    }
    fprintf(f, "Options:\n");
    kube_flags_usage_short(f, d->flags, d->n_flags, shorts, N_SHORTS);
    fprintf(f, "\nUsage:\n  %s\n", d->use);
    if (cmd == KCTL_NONE)
        fprintf(f, "\nUse \"kubectl stickyvm <command> --help\" for more information about a "
                   "given command.\n");
}

void kctl_options_free(kctl_options *o)
{
    free(o->kubeconfig);
    free(o->context);
    free(o->namespace_);
    free(o->output);
    free(o->node);
    free(o->from);
    free(o->to);
    free(o->selector);
    free(o->node_status);
    memset(o, 0, sizeof(*o));
}

/* One parse of argv against d's flags; the positional arguments in pos. */
static int parse_with(const cmd_desc *d, int argc, char **argv, kctl_options *o, char **pos,
                      int *npos, char *err, size_t n)
{
    kctl_options_free(o);
    return kube_flags_parse_args(d->flags, d->n_flags, shorts, N_SHORTS, argc, argv, o, pos, npos,
                                 err, n);
}

/* The command named by word, or -1. */
static int find_cmd(const char *word)
{
    for (size_t i = 1; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(cmds[i].name, word) == 0)
            return (int)i;
    return -1;
}

/* The word list of --node-status: each word one of the node states. */
static int check_node_status(const char *list, char *err, size_t n)
{
    static const char *const words[] = {"Ready", "NotReady", "Unknown", "Missing",
                                        "SchedulingDisabled"};
    for (const char *w = list; w;) {
        size_t len = strcspn(w, ","), i = 0;
        while (i < sizeof(words) / sizeof(words[0]) &&
               (strlen(words[i]) != len || strncmp(w, words[i], len) != 0))
            i++;
        if (i == sizeof(words) / sizeof(words[0])) {
            snprintf(err, n,
                     "invalid argument \"%s\" for \"--node-status\" flag: \"%.*s\" is not one of "
                     "Ready, NotReady, Unknown, Missing, SchedulingDisabled",
                     list, (int)len, w);
            return KUBE_ECONFIG;
        }
        w = w[len] ? w + len + 1 : NULL;
    }
    return KUBE_OK;
}

/* What evacuate's and list's own flags must be. */
static int check_command_flags(const kctl_options *o, const char *target, char *err, size_t n)
{
    if (o->cmd == KCTL_EVACUATE && o->output && *o->output) {
        snprintf(err, n, "evacuate prints a table only: unknown flag: --output");
        return KUBE_ECONFIG;
    }
    if (o->cmd == KCTL_EVACUATE && o->to && (!*o->to || strcmp(o->to, target) == 0)) {
        snprintf(err, n, "--to must name another node than %s", target);
        return KUBE_ECONFIG;
    }
    return o->node_status ? check_node_status(o->node_status, err, n) : KUBE_OK;
}

/* What the command's arguments and -o must be. */
static int check_args(const cmd_desc *d, kctl_options *o, char **pos, int npos, char *err, size_t n)
{
    const char *fmt = o->output ? o->output : "";
    if (*fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "yaml") != 0) {
        snprintf(err, n,
                 "unable to match a printer suitable for the output format \"%s\", allowed "
                 "formats are: json,yaml",
                 fmt);
        return KUBE_ECONFIG;
    }
    if (npos - 1 != d->args) {
        if (d->args)
            snprintf(err, n, "exactly one %s is required, got %d",
                     d->cmd == KCTL_WHY        ? "POD or VM name"
                     : d->cmd == KCTL_EVACUATE ? "NODE name"
                                               : "VM name",
                     npos - 1);
        else
            snprintf(err, n, "unexpected argument \"%s\"", pos[1]);
        return KUBE_ECONFIG;
    }
    o->target = d->args ? pos[1] : NULL;
    return check_command_flags(o, o->target, err, n);
}

/* value as a DNS-1123 subdomain (label: a DNS-1123 label); KUBE_EINVAL
 * with `invalid WHAT "value": MESSAGES` in err otherwise, the value quoted
 * as Go's %q does (control bytes escaped) and cut after 80 bytes. */
static int check_name(const char *what, const char *value, int label, char *err, size_t n)
{
    const char *msgs[2];
    char quoted[400];
    int count =
        label ? kube_dns1123_label_msgs(value, msgs) : kube_dns1123_subdomain_msgs(value, msgs);
    if (count == 0)
        return KUBE_OK;
    snprintf(err, n, "invalid %s %s: %s%s%s", what, kube_quote(quoted, sizeof(quoted), value, 80),
             msgs[0], count > 1 ? ", " : "", count > 1 ? msgs[1] : "");
    return KUBE_EINVAL;
}

int kctl_check_names(const kctl_options *o, const char *ns, char *err, size_t n)
{
    int rc = KUBE_OK, uses_ns = !o->all_namespaces || o->cmd == KCTL_PIN || o->cmd == KCTL_UNPIN ||
                                o->cmd == KCTL_WHY;
    if (uses_ns)
        rc = check_name("namespace", ns, 1, err, n);
    if (rc == KUBE_OK && (o->cmd == KCTL_PIN || o->cmd == KCTL_UNPIN))
        rc = check_name("VM name", o->target, 0, err, n);
    if (rc == KUBE_OK && o->cmd == KCTL_WHY)
        rc = check_name("name", o->target, 0, err, n);
    if (rc == KUBE_OK && o->cmd == KCTL_EVACUATE)
        rc = check_name("node name", o->target, 0, err, n);
    if (rc == KUBE_OK && o->node && *o->node)
        rc = check_name("node name", o->node, 0, err, n);
    if (rc == KUBE_OK && o->from && *o->from)
        rc = check_name("node name", o->from, 0, err, n);
    if (rc == KUBE_OK && o->to)
        rc = check_name("node name", o->to, 0, err, n);
    return rc;
}

static int kctl_parse_args(int argc, char **argv, kctl_options *o, char *err, size_t n);

/* argv with each --version dropped and the version command first, when
 * one was there (*argv2 allocated, caller frees; else argv itself). */
static char **version_argv(int *argc, char **argv, char ***argv2)
{
    int n = 1, found = 0;
    *argv2 = NULL;
    for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0; i++)
        found |= strcmp(argv[i], "--version") == 0;
    if (!found || !(*argv2 = calloc((size_t)*argc + 2, sizeof(char *))))
        return argv;
    (*argv2)[0] = argv[0];
    (*argv2)[n++] = (char *)"version";
    for (int i = 1; i < *argc; i++)
        if (strcmp(argv[i], "--version") != 0)
            (*argv2)[n++] = argv[i];
    *argc = n;
    return *argv2;
}

int kctl_parse(int argc, char **argv, kctl_options *o, char *err, size_t n)
{
    char **argv2, **args = version_argv(&argc, argv, &argv2);
    int rc = kctl_parse_args(argc, args, o, err, n);
    free(argv2);
    return rc;
}

/* kctl_parse() once --version is the version command. */
static int kctl_parse_args(int argc, char **argv, kctl_options *o, char *err, size_t n)
{
    char **pos = calloc((size_t)argc + 1, sizeof(*pos));
    int npos = 0, rc, which;
    memset(o, 0, sizeof(*o));
    if (!pos)
        return KUBE_ENOMEM;
    /* Which command: the first argument that is no flag (nor a flag's
     * value) under the tables of pin, list and evacuate (every flag is in
     * one); when none parses, the first word that is no flag, for its
     * error. */
    rc = parse_with(&cmds[KCTL_PIN], argc, argv, o, pos, &npos, err, n);
    if (rc == KUBE_ECONFIG)
        rc = parse_with(&cmds[KCTL_LIST], argc, argv, o, pos, &npos, err, n);
    if (rc == KUBE_ECONFIG)
        rc = parse_with(&cmds[KCTL_EVACUATE], argc, argv, o, pos, &npos, err, n);
    for (int i = 1; rc == KUBE_ECONFIG && i < argc; i++)
        if (argv[i][0] != '-') {
            pos[0] = argv[i];
            npos = 1;
            rc = find_cmd(argv[i]) < 0 ? KUBE_ECONFIG : KUBE_OK;
            break;
        }
    which = rc == KUBE_OK && npos > 0 ? find_cmd(pos[0]) : -1;
    if (rc == KUBE_OK && npos > 0 && which < 0) {
        char quoted[200]; /* cobra's %q */
        snprintf(err, n, "unknown command %s for \"kubectl stickyvm\"",
                 kube_quote(quoted, sizeof(quoted), pos[0], 80));
        rc = KUBE_ECONFIG;
    }
    if (rc == KUBE_OK)
        rc = parse_with(desc_of(which < 0 ? KCTL_NONE : (kctl_cmd)which), argc, argv, o, pos, &npos,
                        err, n);
    o->cmd = which < 0 ? KCTL_NONE : (kctl_cmd)which;
    if (o->cmd == KCTL_NONE)
        o->help = 1; /* as cobra: a bare "kubectl stickyvm" prints the help */
    if (rc == KUBE_OK && !o->help && o->cmd != KCTL_NONE)
        rc = check_args(desc_of(o->cmd), o, pos, npos, err, n);
    free(pos);
    return rc;
}
