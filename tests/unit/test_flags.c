/*
 * tests/unit/test_flags.c - the one flag parser (kube/util/flags.h): pflag's
 * syntaxes, each kind, its error messages, flags left to a program's
 * plug-ins, and the usage listing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/flags.h"
#include "kube/util/flags_testing.h"

typedef struct opts {
    char *name;
    int port, on, verbosity, custom_calls;
    int64_t timeout_ms;
} opts;

static int set_upper(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    opts *o = dst;
    (void)f;
    if (strcmp(value, "ok")) {
        snprintf(why, n, "must be ok");
        return KUBE_ECONFIG;
    }
    o->custom_calls++;
    return KUBE_OK;
}

static const kube_flag defs[] = {
    {"name", KUBE_FLAG_STRING, offsetof(opts, name), 0, 0, NULL, "a name", NULL},
    {"port", KUBE_FLAG_INT, offsetof(opts, port), 1, 65535, NULL, "a port", NULL},
    {"on", KUBE_FLAG_BOOL, offsetof(opts, on), 0, 0, NULL, "a switch", NULL},
    {"timeout", KUBE_FLAG_DURATION, offsetof(opts, timeout_ms), 0, 0, NULL, "a timeout", NULL},
    {"check", KUBE_FLAG_CUSTOM, 0, 0, 0, "word", "a checked word", set_upper},
    {"v", KUBE_FLAG_INT, offsetof(opts, verbosity), 0, 10, NULL, "verbosity", NULL},
};
#define N (sizeof(defs) / sizeof(defs[0]))

static int parse(opts *o, char *err, int argc, char **argv)
{
    memset(o, 0, sizeof(*o));
    return kube_flags_parse(defs, N, argc, argv, o, err, 256);
}

static void parses_every_syntax_and_kind(void **state)
{
    char err[256];
    opts o;
    char *argv[] = {"prog",       "--name=a",  "--name", "b",  "--port", "8443",      "--on",
                    "--on=false", "--timeout", "1m30s",  "-v", "3",      "--check=ok"};
    (void)state;
    assert_int_equal(parse(&o, err, sizeof(argv) / sizeof(argv[0]), argv), KUBE_OK);
    assert_string_equal(o.name, "b"); /* the last one wins; the first was freed */
    assert_int_equal(o.port, 8443);
    assert_int_equal(o.on, 0);
    assert_int_equal(o.timeout_ms, 90000);
    assert_int_equal(o.verbosity, 3);
    assert_int_equal(o.custom_calls, 1);
    free(o.name);
}

static void expect_error(int argc, char **argv, const char *want)
{
    char err[256] = "";
    opts o;
    assert_int_equal(parse(&o, err, argc, argv), KUBE_ECONFIG);
    if (strcmp(err, want))
        fail_msg("got \"%s\", want \"%s\"", err, want);
    free(o.name);
}

static void errors_read_as_pflag(void **state)
{
    (void)state;
    expect_error(2, (char *[]){"p", "--nope"}, "unknown flag: --nope");
    expect_error(2, (char *[]){"p", "-x"}, "unknown flag: -x");
    expect_error(2, (char *[]){"p", "-port=1"}, "unknown flag: -port=1"); /* long names need -- */
    expect_error(2, (char *[]){"p", "--port"}, "flag needs an argument: --port");
    expect_error(2, (char *[]){"p", "--port=0"},
                 "invalid argument \"0\" for \"--port\" flag: must be a whole number from 1 to "
                 "65535");
    expect_error(2, (char *[]){"p", "--on=maybe"},
                 "invalid argument \"maybe\" for \"--on\" flag: parse error");
    expect_error(2, (char *[]){"p", "--timeout=-1s"},
                 "invalid argument \"-1s\" for \"--timeout\" flag: time: invalid duration \"-1s\"");
    expect_error(2, (char *[]){"p", "--check=no"},
                 "invalid argument \"no\" for \"--check\" flag: must be ok");
    expect_error(2, (char *[]){"p", "extra"}, "unexpected argument \"extra\"");
}

static int plugin(void *dst, const char *name, const char *value)
{
    opts *o = dst;
    if (strcmp(name, "--plugin-flag"))
        return 0;
    o->custom_calls += value && !strcmp(value, "x") ? 10 : 100;
    return 1;
}

static void unknown_flags_go_to_the_program(void **state)
{
    char err[256];
    opts o;
    char *ok[] = {"p", "--plugin-flag=x", "--port=2"};
    char *bad[] = {"p", "--other=1"};
    (void)state;
    memset(&o, 0, sizeof(o));
    assert_int_equal(kube_flags_parse_ext(defs, N, 3, ok, &o, plugin, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.custom_calls, 10);
    assert_int_equal(o.port, 2);
    assert_int_equal(kube_flags_parse_ext(defs, N, 2, bad, &o, plugin, err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "unknown flag: --other=1");
}

static void usage_lists_every_flag(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    (void)state;
    kube_flags_usage(f, defs, N);
    fclose(f);
    assert_non_null(strstr(text, "      --port int"));
    assert_non_null(strstr(text, "  -v, --v int"));
    assert_non_null(strstr(text, "      --check word"));
    assert_non_null(strstr(text, "a timeout"));
    free(text);
}

/* A command's arguments: shorthands in pflag's spellings, positional
 * arguments among the flags in order, "-" and everything after "--"
 * positional; a flag's value is never positional. */
static void arguments_among_flags(void **state)
{
    static const kube_flag_short shorts[] = {{'n', "name"}, {'o', "on"}};
    char err[256] = "", *pos[16];
    int npos = -1;
    opts o;
    char *argv[] = {"prog", "first", "-n",     "a",  "second", "-nb",
                    "-o",   "-",     "--port", "--", "--on",   "-n=c"};
    (void)state;
    memset(&o, 0, sizeof(o));
    assert_int_equal(kube_flags_parse_args(defs, N, shorts, 2, sizeof(argv) / sizeof(argv[0]), argv,
                                           &o, pos, &npos, err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "invalid argument \"--\" for \"--port\" flag: must be a whole "
                             "number from 1 to 65535");
    free(o.name);

    char *argv2[] = {"prog", "first", "-n", "a", "second", "-nb", "-o", "-", "--", "--on", "-n=c"};
    memset(&o, 0, sizeof(o));
    assert_int_equal(kube_flags_parse_args(defs, N, shorts, 2, sizeof(argv2) / sizeof(argv2[0]),
                                           argv2, &o, pos, &npos, err, sizeof(err)),
                     KUBE_OK);
    assert_string_equal(o.name, "b");
    assert_int_equal(o.on, 1);
    assert_int_equal(npos, 5);
    assert_string_equal(pos[0], "first");
    assert_string_equal(pos[1], "second");
    assert_string_equal(pos[2], "-");
    assert_string_equal(pos[3], "--on");
    assert_string_equal(pos[4], "-n=c");
    free(o.name);

    char *argv3[] = {"prog", "-x"};
    memset(&o, 0, sizeof(o));
    assert_int_equal(
        kube_flags_parse_args(defs, N, shorts, 2, 2, argv3, &o, pos, &npos, err, sizeof(err)),
        KUBE_ECONFIG);
    assert_string_equal(err, "unknown flag: -x");
}

typedef struct serving {
    int port;
} serving;

static const kube_flag serving_defs[] = {
    {"secure-port", KUBE_FLAG_INT, offsetof(serving, port), 0, 65535, NULL, "the port", NULL},
};

static void record_seen(void *ud, const kube_flag_set *set, const kube_flag *f)
{
    char *log = ud;
    size_t len = strlen(log);
    snprintf(log + len, 128 - len, "%s/%s;", set->name, f->name);
}

/* Each set's flags land in its own struct, --help prints a section per
 * set, and the seen hook reports what was given (pflag's Changed). */
static void named_sets_parse_into_their_structs(void **state)
{
    char err[256], seen[128] = "", *text = NULL;
    size_t len = 0;
    opts o;
    serving sv = {10259};
    kube_flag_set sets[] = {{"Misc", defs, N, &o}, {"Secure serving", serving_defs, 1, &sv}};
    kube_flags_hooks hooks = {NULL, NULL, record_seen, seen};
    char *argv[] = {"prog", "--secure-port=1", "--port", "2", "--nope"};
    FILE *f;
    (void)state;
    memset(&o, 0, sizeof(o));
    assert_int_equal(kube_flag_sets_parse(sets, 2, 4, argv, &hooks, err, sizeof(err)), KUBE_OK);
    assert_int_equal(sv.port, 1);
    assert_int_equal(o.port, 2);
    assert_string_equal(seen, "Secure serving/secure-port;Misc/port;");
    assert_int_equal(kube_flag_sets_parse(sets, 2, 5, argv, &hooks, err, sizeof(err)),
                     KUBE_ECONFIG);
    assert_string_equal(err, "unknown flag: --nope");
    f = open_memstream(&text, &len);
    kube_flag_sets_usage(f, sets, 2);
    fclose(f);
    assert_non_null(strstr(text, "\nMisc flags:\n\n      --name string"));
    assert_non_null(strstr(text, "\nSecure serving flags:\n\n      --secure-port int"));
    free(text);
    free(o.name);
}

int test_group_flags(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_every_syntax_and_kind),
        cmocka_unit_test(errors_read_as_pflag),
        cmocka_unit_test(unknown_flags_go_to_the_program),
        cmocka_unit_test(usage_lists_every_flag),
        cmocka_unit_test(named_sets_parse_into_their_structs),
        cmocka_unit_test(arguments_among_flags),
    };
    return cmocka_run_group_tests_name("flags", tests, NULL, NULL);
}
