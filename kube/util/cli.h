/*
 * kube/util/cli.h - the command-line flow both daemons share, as
 * component-base's cli.Run runs a kube-* cobra command:
 *
 *   - the program's named flag sets plus a last "Global" set:
 *     -h/--help ("help for <name>") and --version;
 *   - a bad flag: the usage ("Usage:\n  <name> [flags]\n" and every
 *     section) then "Error: <pflag's message>" on stderr, exit status 1;
 *   - -h/--help: the description, the usage, on stdout, exit status 0;
 *   - --version: "<name> <version>" (kube/util/version.h), exit status 0;
 *   - then the Logs flags (kube/util/log.h) are applied (an unsupported
 *     format: its message alone on stderr, exit status 1).
 *
 * Threads: for main(), before other threads start. Memory: nothing kept;
 * the sets are borrowed.
 */
#ifndef KUBE_CLI_H
#define KUBE_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "kube/util/flags.h"
#include "kube/util/log.h"

#define KUBE_CLI_MAX_SETS 16
/* kube_cli_parse(): go on running the program. */
#define KUBE_CLI_CONTINUE (-1)

typedef struct kube_cli {
    const char *name;          /* "stickyvm-scheduler" */
    const char *description;   /* what --help prints before the usage */
    const kube_flag_set *sets; /* the program's sets, in --help's order (at most
                                  KUBE_CLI_MAX_SETS - 1); borrowed */
    size_t nsets;
    const kube_flags_hooks *hooks; /* passed to kube_flag_sets_parse(); may be NULL */
    const klog_options *logs;      /* the Logs set's values, applied; may be NULL */
} kube_cli;

/* Parses argv[1..argc) and acts on -h, --version and errors as above.
 * Returns KUBE_CLI_CONTINUE, or the exit status main() should return. */
int kube_cli_parse(const kube_cli *cli, int argc, char *const *argv);
/* The usage: "Usage:\n  <name> [flags]\n" then every section, Global
 * last. */
void kube_cli_usage(const kube_cli *cli, FILE *f);

#endif
