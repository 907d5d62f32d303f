/*
 * tests/unit/test_cli.c - the command-line flow both daemons share
 * (kube/util/cli.h) and the build's version (kube/util/version.h): the
 * --version line, --help's sections, and the exit statuses of -h,
 * --version and a bad flag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/util/cli.h"
#include "kube/util/errors.h"
#include "kube/util/version.h"

typedef struct prog {
    int port;
    char *name;
    klog_options logs;
} prog;

static const kube_flag prog_flags[] = {
    {"port", KUBE_FLAG_INT, offsetof(prog, port), 0, 65535, NULL, "a port (default 1)", NULL},
    {"name", KUBE_FLAG_STRING, offsetof(prog, name), 0, 0, NULL, "a name", NULL},
};

static void matches(const char *text, const char *pattern)
{
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    if (regexec(&re, text, 0, NULL, 0) != 0)
        fail_msg("\"%s\" does not match /%s/", text, pattern);
    regfree(&re);
}

static void version_reads_as_kubes(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    (void)state;

    kube_version_print(f, "stickyvm-scheduler");
    fclose(f);
    /* "v0.1.0", "v0.4.0-12-gabcdef0", "v0.1.0-gabcdef0-dirty" */
    matches(text, "^stickyvm-scheduler v[0-9]+\\.[0-9]+\\.[0-9]+[-+.0-9A-Za-z]*\n$");
    matches(kube_version(), "^v[0-9]+\\.[0-9]+\\.[0-9]+");
    free(text);
}

/* Runs kube_cli_parse() on argv with stdout and stderr in files; returns
 * its result, the outputs in *out and *err (caller frees). */
static int run(const kube_cli *cli, int argc, char **argv, char **out, char **err)
{
    FILE *o = tmpfile(), *e = tmpfile();
    int saved_out = dup(1), saved_err = dup(2), rc;
    long n;

    assert_non_null(o);
    assert_non_null(e);
    fflush(stdout);
    fflush(stderr);
    dup2(fileno(o), 1);
    dup2(fileno(e), 2);
    rc = kube_cli_parse(cli, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    FILE *files[2] = {o, e};
    char **dst[2] = {out, err};
    for (int i = 0; i < 2; i++) {
        n = ftell(files[i]);
        *dst[i] = calloc(1, (size_t)n + 1);
        rewind(files[i]);
        assert_int_equal(fread(*dst[i], 1, (size_t)n, files[i]), (size_t)n);
        fclose(files[i]);
    }
    return rc;
}

static void help_version_and_errors(void **state)
{
    prog p;
    kube_flag_set sets[2];
    kube_cli cli = {"prog", "Prog does things.", sets, 2, NULL, &p.logs};
    char *out, *err;
    (void)state;

    memset(&p, 0, sizeof(p));
    sets[0] = (kube_flag_set){"Misc", prog_flags, 2, &p};
    sets[1] = klog_flag_set(&p.logs);

    assert_int_equal(run(&cli, 2, (char *[]){"prog", "-h"}, &out, &err), 0);
    assert_true(
        strncmp(out, "Prog does things.\n\nUsage:\n  prog [flags]\n\nMisc flags:\n\n", 51) == 0);
    /* every section in order, every flag */
    const char *order[] = {"\nMisc flags:\n",         "--port int",
                           "--name string",           "\nLogs flags:\n",
                           "--logging-format string", "  -v, --v Level",
                           "--vmodule pattern=N,...", "\nGlobal flags:\n",
                           "  -h, --help ",           "help for prog",
                           "--version version[=true]"};
    const char *at = out;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        const char *next = strstr(at, order[i]);
        if (!next)
            fail_msg("\"%s\" missing or out of order in:\n%s", order[i], out);
        at = next;
    }
    assert_string_equal(err, "");
    free(out);
    free(err);

    assert_int_equal(run(&cli, 2, (char *[]){"prog", "--help"}, &out, &err), 0);
    assert_non_null(strstr(out, "Usage:"));
    free(out);
    free(err);

    assert_int_equal(run(&cli, 2, (char *[]){"prog", "--version"}, &out, &err), 0);
    assert_true(strncmp(out, "prog v", 6) == 0);
    free(out);
    free(err);

    /* a bad flag: the usage, then the error, on stderr; status 1 */
    assert_int_equal(run(&cli, 2, (char *[]){"prog", "--x"}, &out, &err), 1);
    assert_string_equal(out, "");
    assert_true(strncmp(err, "Usage:\n  prog [flags]\n", 22) == 0);
    assert_non_null(strstr(err, "\nError: unknown flag: --x\n"));
    assert_string_equal(strstr(err, "\nError: unknown flag: --x\n"),
                        "\nError: unknown flag: --x\n");
    free(out);
    free(err);

    /* the flags run on: the Logs flags applied; '_' reads as '-' */
    assert_int_equal(run(&cli, 5,
                         (char *[]){"prog", "--port=7", "-v", "0", "--logging_format=text"}, &out,
                         &err),
                     KUBE_CLI_CONTINUE);
    assert_int_equal(p.port, 7);
    assert_string_equal(p.logs.format, "text");
    free(out);
    free(err);
    assert_int_equal(run(&cli, 2, (char *[]){"prog", "--logging-format=xml"}, &out, &err), 1);
    assert_non_null(strstr(err, "format: Unsupported value: \"xml\""));
    free(out);
    free(err);
    free(p.name);
    klog_options_free(&p.logs);
}

int test_group_cli(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_reads_as_kubes),
        cmocka_unit_test(help_version_and_errors),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
