/*
 * tests/integration/test_cli_integration.c - the two daemons' command
 * lines, run as an operator runs them: --version, -h/--help (sections on
 * stdout, status 0), an unknown flag (the usage then pflag's error on
 * stderr, status 1, as kube-scheduler exits), and JSON log lines with
 * --logging-format=json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kube/util/buf.h"
#include "kube/util/version.h"

/* What a run printed and how it ended. */
typedef struct result {
    char *out, *err;
    int status; /* exit status, or -1 when it did not exit */
} result;

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/cli-it-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *name)
{
    char path[128], *text = NULL;
    size_t len;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_int_equal(kube_read_file(path, &text, &len), 0);
    return text;
}

/* Runs the built program with args (shell words). */
static result run(const char *program, const char *args)
{
    char cmd[1024];
    result r;
    int rc;

    snprintf(cmd, sizeof(cmd), "%s/%s %s >%s/out 2>%s/err </dev/null", STICKYVM_BINARY_DIR, program,
             args, dir, dir);
    rc = system(cmd);
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp("out");
    r.err = slurp("err");
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

static void version_prints_the_stamp(void **state)
{
    static const char *const programs[] = {"stickyvm-scheduler", "stickyvm-apiserver"};
    char want[256];
    (void)state;

    for (size_t i = 0; i < 2; i++) {
        result r = run(programs[i], "--version");
        snprintf(want, sizeof(want), "%s %s\n", programs[i], kube_version());
        assert_int_equal(r.status, 0);
        assert_string_equal(r.out, want);
        assert_string_equal(r.err, "");
        result_free(&r);
    }
}

/* The sections of program's --help, in order. */
static void check_help(const char *program, const char *args, const char *const *sections, size_t n)
{
    result r = run(program, args);
    char usage[128];
    const char *at;

    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    snprintf(usage, sizeof(usage), "\n\nUsage:\n  %s [flags]\n", program);
    at = strstr(r.out, usage);
    assert_non_null(at);
    for (size_t i = 0; i < n; i++) {
        const char *next = strstr(at, sections[i]);
        if (!next)
            fail_msg("%s %s: \"%s\" missing or out of order", program, args, sections[i]);
        at = next;
    }
    result_free(&r);
}

static void help_prints_sections(void **state)
{
    static const char *const sched[] = {
        "\nMisc flags:\n\n",          "\nSecure serving flags:\n\n",
        "\nDeprecated flags:\n\n",    "\nLeader election flags:\n\n",
        "\nFeature gate flags:\n\n",  "\nLogs flags:\n\n",
        "\nGlobal flags:\n\n",        "  -h, --help ",
        "help for stickyvm-scheduler"};
    static const char *const apis[] = {
        "\nLogs flags:\n\n",   "--logging-format string",     "--vmodule",
        "\nGlobal flags:\n\n", "help for stickyvm-apiserver", "--version"};
    (void)state;

    check_help("stickyvm-scheduler", "--help", sched, sizeof(sched) / sizeof(sched[0]));
    check_help("stickyvm-scheduler", "-h", sched, sizeof(sched) / sizeof(sched[0]));
    check_help("stickyvm-apiserver", "--help", apis, sizeof(apis) / sizeof(apis[0]));
    check_help("stickyvm-apiserver", "-h", apis, sizeof(apis) / sizeof(apis[0]));
}

static void unknown_flag_exits_1_after_the_usage(void **state)
{
    static const char *const programs[] = {"stickyvm-scheduler", "stickyvm-apiserver"};
    char usage[128];
    (void)state;

    for (size_t i = 0; i < 2; i++) {
        result r = run(programs[i], "--x");
        const char *tail = "\nError: unknown flag: --x\n";
        size_t n = strlen(r.err), t = strlen(tail);
        snprintf(usage, sizeof(usage), "Usage:\n  %s [flags]\n", programs[i]);
        assert_int_equal(r.status, 1);
        assert_string_equal(r.out, "");
        assert_true(strncmp(r.err, usage, strlen(usage)) == 0);
        assert_true(n > t);
        assert_string_equal(r.err + n - t, tail);
        result_free(&r);
    }
}

/* Every line of text is a JSON object with ts, caller and msg. */
static void check_json_lines(const char *text)
{
    const char *line = text;
    int lines = 0;

    while (*line) {
        const char *nl = strchr(line, '\n');
        cJSON *o;
        assert_non_null(nl);
        o = cJSON_ParseWithLength(line, (size_t)(nl - line));
        if (!o)
            fail_msg("not JSON: %.*s", (int)(nl - line), line);
        assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "ts")));
        assert_true(cJSON_IsString(cJSON_GetObjectItem(o, "caller")));
        assert_true(cJSON_IsString(cJSON_GetObjectItem(o, "msg")));
        cJSON_Delete(o);
        lines++;
        line = nl + 1;
    }
    assert_true(lines > 0);
}

static void json_logging(void **state)
{
    char args[256];
    result r;
    (void)state;

    snprintf(args, sizeof(args), "--logging-format=json --write-config-to=%s/written.yaml", dir);
    r = run("stickyvm-scheduler", args);
    assert_int_equal(r.status, 0);
    check_json_lines(r.err);
    assert_non_null(strstr(r.err, "\"msg\":\"wrote configuration to "));
    result_free(&r);

    r = run("stickyvm-apiserver",
            "--logging-format=json --kubeconfig=/nonexistent --bind-address=127.0.0.1 "
            "--secure-port=0");
    assert_int_equal(r.status, 1);
    check_json_lines(r.err);
    assert_non_null(strstr(r.err, "\"msg\":\"Starting stickyvm-apiserver\""));
    result_free(&r);

    r = run("stickyvm-scheduler", "--logging-format=yaml");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "format: Unsupported value: \"yaml\": supported values: "
                               "\"json\", \"text\"\n");
    result_free(&r);
}

int test_group_cli_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_prints_the_stamp),
        cmocka_unit_test(help_prints_sections),
        cmocka_unit_test(unknown_flag_exits_1_after_the_usage),
        cmocka_unit_test(json_logging),
    };
    return cmocka_run_group_tests_name("cli_integration", tests, make_dir, remove_dir);
}
