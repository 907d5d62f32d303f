/*
 * kube/util/flags.h - the one command-line flag parser, with pflag's syntax (as
 * kube-scheduler and k8s.io/apiserver binaries take flags): "--name=value",
 * "--name value", a bare "--name" for a bool, and single-letter flags as
 * "-v 2" / "-v=2". A '_' in a given name reads as '-' ("--leader_elect"),
 * as kube's binaries normalise flag names. A program describes its flags in a table of kube_flag
 * whose destinations are fields of one struct of its own.
 *
 * Errors read as pflag's: `unknown flag: --x`, `flag needs an argument:
 * --x`, `invalid argument "v" for "--x" flag: <why>`, and
 * `unexpected argument "x"` for a positional argument.
 *
 * Threads: pure, on the caller's data. Memory: a string flag's value is a
 * copy the caller frees (the previous value of the field is freed when it
 * is set, so defaults must be allocated, or NULL).
 */
#ifndef KUBE_FLAGS_H
#define KUBE_FLAGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum kube_flag_kind {
    KUBE_FLAG_STRING,   /* char * (owned copy) */
    KUBE_FLAG_INT,      /* int, within [min, max] */
    KUBE_FLAG_BOOL,     /* int 0/1; "--name" alone is true */
    KUBE_FLAG_DURATION, /* int64_t milliseconds, Go syntax, never negative */
    KUBE_FLAG_CUSTOM,   /* set() decides */
} kube_flag_kind;

typedef struct kube_flag {
    const char *name; /* without dashes; a one-letter name also takes "-x" */
    kube_flag_kind kind;
    size_t offset; /* of the destination field in the caller's struct */
    int64_t min, max;
    const char *type; /* the value's name in --help ("string", "int", ...); NULL: by
                         kind; "": a switch, a bare --name meaning "true" */
    const char *help;
    /* KUBE_FLAG_CUSTOM: stores value into the struct dst (the field at
     * f->offset, or more). KUBE_OK, KUBE_ECONFIG (a bad value: why may
     * name the reason, n bytes) or KUBE_ENOMEM. */
    int (*set)(void *dst, const struct kube_flag *f, const char *value, char *why, size_t n);
} kube_flag;

/* What a program does with a flag absent from its table (plug-ins' flags):
 * name as given ("--x"), value after '=' or NULL. Returns 1 (taken), 0
 * (unknown: the parse fails) or a negative KUBE_E* code. */
typedef int (*kube_flags_unknown_fn)(void *dst, const char *name, const char *value);

/* kube_flags_parse() that hands flags absent from the table to unknown. */
int kube_flags_parse_ext(const kube_flag *flags, size_t n, int argc, char *const *argv, void *dst,
                         kube_flags_unknown_fn unknown, char *err, size_t errlen);

/* A shorthand as pflag's: "-n" standing for a flag of the table. */
typedef struct kube_flag_short {
    char letter;      /* 'n' */
    const char *name; /* the flag it stands for ("namespace") */
} kube_flag_short;

/* A command's arguments as cobra hands them to pflag: kube_flags_parse()
 * with the nshort shorthands ("-n x", "-n=x", "-nx"; a bool's "-A") and
 * positional arguments interspersed with the flags, collected in order
 * into pos (borrowed pointers into argv; room for argc entries) and *npos.
 * "-" is positional, and so is everything after "--". Same returns. */
int kube_flags_parse_args(const kube_flag *flags, size_t n, const kube_flag_short *shorts,
                          size_t nshort, int argc, char *const *argv, void *dst, char **pos,
                          int *npos, char *err, size_t errlen);

/*
 * Named flag sets (k8s.io/component-base's NamedFlagSets): a program made of
 * parts (secure serving, delegated authentication, logging, its own
 * options) gives each part its own table and destination struct; --help
 * prints each set under its own heading ("Secure serving flags:").
 */
typedef struct kube_flag_set {
    const char *name;       /* heading without " flags:" ("Misc", "Secure serving") */
    const kube_flag *flags; /* borrowed */
    size_t n;
    void *dst; /* the struct the flags' offsets are in; borrowed */
} kube_flag_set;

/* Called for each flag given on the command line, after its value is
 * stored (pflag's Changed): f is the flag, set the set it belongs to. */
typedef void (*kube_flags_seen_fn)(void *ud, const kube_flag_set *set, const kube_flag *f);

/* How kube_flag_sets_parse() treats what is not a plain known flag. Any
 * member may be NULL/0. */
typedef struct kube_flags_hooks {
    kube_flags_unknown_fn unknown; /* flags found in no set */
    void *unknown_dst;             /* passed to unknown as dst */
    kube_flags_seen_fn seen;
    void *seen_ud;
} kube_flags_hooks;

/* Parses argv[1..argc) against the nsets sets (a name is looked up in the
 * sets in order; the first set defining it wins). Errors as
 * kube_flags_parse(). hooks may be NULL. */
int kube_flag_sets_parse(const kube_flag_set *sets, size_t nsets, int argc, char *const *argv,
                         const kube_flags_hooks *hooks, char *err, size_t errlen);
/* --help in sections, as component-base's PrintSections: for each set
 * "\n<Name> flags:\n\n" then its flags as kube_flags_usage() prints them. */
void kube_flag_sets_usage(FILE *f, const kube_flag_set *sets, size_t nsets);

/* Writes the flags as pflag's usage lists them ("      --name type   help",
 * "  -v, --v int ..."), one per line, to f. */
void kube_flags_usage(FILE *f, const kube_flag *flags, size_t n);
/* The same, with each flag's shorthand of shorts ("  -n, --namespace string"). */
void kube_flags_usage_short(FILE *f, const kube_flag *flags, size_t n,
                            const kube_flag_short *shorts, size_t nshort);

/* Go's strconv.ParseBool ("1", "t", "T", "TRUE", "true", "True" and the
 * false spellings): 1 (true), 0 (false), -1 (neither). */
int kube_parse_bool(const char *v);

#endif
