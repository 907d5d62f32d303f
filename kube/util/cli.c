/*
 * kube/util/cli.c - the command-line flow both daemons share (cli.h).
 * The Global set is --help and --version; "-h" (pflag's shorthand, which
 * kube/util/flags.h has no field for) is taken by the unknown-flag hook.
 */
#include "kube/util/cli.h"

#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/version.h"

#define USAGE_FMT "%-50s %s\n" /* kube_flags_usage()'s columns */

typedef struct globals {
    int help;
    int version;
    const kube_flags_hooks *program; /* the program's hooks, or NULL */
} globals;

static const kube_flag global_flags[] = {
    {"help", KUBE_FLAG_BOOL, offsetof(globals, help), 0, 0, NULL, "help", NULL},
    {"version", KUBE_FLAG_BOOL, offsetof(globals, version), 0, 0, "version[=true]",
     "--version prints version information and quits", NULL},
};

/* "-h" sets help; anything else goes to the program's hook. */
static int take_unknown(void *dst, const char *name, const char *value)
{
    globals *g = dst;
    int b = value ? kube_parse_bool(value) : 1;

    if (strcmp(name, "-h") == 0 && b >= 0) {
        g->help = b;
        return 1;
    }
    if (g->program && g->program->unknown)
        return g->program->unknown(g->program->unknown_dst, name, value);
    return 0;
}

/* The program's sets then Global, into out. Returns the count. */
static size_t all_sets(const kube_cli *cli, globals *g, kube_flag_set *out)
{
    size_t count = cli->nsets < KUBE_CLI_MAX_SETS - 1 ? cli->nsets : KUBE_CLI_MAX_SETS - 1;

    memcpy(out, cli->sets, count * sizeof(*out));
    out[count] = (kube_flag_set){"Global", global_flags, 2, g};
    return count;
}

void kube_cli_usage(const kube_cli *cli, FILE *f)
{
    kube_flag_set sets[KUBE_CLI_MAX_SETS];
    char help[128];
    globals g;
    size_t n = all_sets(cli, &g, sets);

    fprintf(f, "Usage:\n  %s [flags]\n", cli->name);
    kube_flag_sets_usage(f, sets, n);
    snprintf(help, sizeof(help), "help for %s", cli->name);
    fprintf(f, "\nGlobal flags:\n\n" USAGE_FMT, "  -h, --help ", help);
    kube_flags_usage(f, &global_flags[1], 1);
}

int kube_cli_parse(const kube_cli *cli, int argc, char *const *argv)
{
    kube_flag_set sets[KUBE_CLI_MAX_SETS];
    globals g = {0, 0, cli->hooks};
    kube_flags_hooks hooks = {take_unknown, &g, NULL, NULL};
    char err[1024] = "";
    size_t n = all_sets(cli, &g, sets);

    if (cli->hooks) {
        hooks.seen = cli->hooks->seen;
        hooks.seen_ud = cli->hooks->seen_ud;
    }
    if (kube_flag_sets_parse(sets, n + 1, argc, argv, &hooks, err, sizeof(err)) != KUBE_OK) {
        kube_cli_usage(cli, stderr);
        fprintf(stderr, "Error: %s\n", err[0] ? err : "out of memory");
        return 1;
    }
    if (g.help) {
        fprintf(stdout, "%s\n\n", cli->description);
        kube_cli_usage(cli, stdout);
        return 0;
    }
    if (g.version) {
        kube_version_print(stdout, cli->name);
        return 0;
    }
    if (cli->logs && klog_options_apply(cli->logs, err, sizeof(err)) != KUBE_OK) {
        fprintf(stderr, "%s\n", err); /* as logsapi.ValidateAndApply's caller */
        return 1;
    }
    return KUBE_CLI_CONTINUE;
}
