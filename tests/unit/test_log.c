/*
 * tests/unit/test_log.c - klog-style logging (kube/util/log.h): --vmodule
 * matching as klog matches, the JSON line shape of component-base's JSON
 * format, structured text lines, and the Logs flag set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/flags.h"
#include "kube/util/log.h"
#include "kube/util/log_testing.h"

/* Captures log lines in memory. */
typedef struct capture {
    char *text;
    size_t len;
    FILE *f;
} capture;

static void capture_start(capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->f = open_memstream(&c->text, &c->len);
    assert_non_null(c->f);
    klog_testing_set_output(c->f);
}

/* Stops capturing; the text stays in c->text (caller frees). */
static void capture_stop(capture *c)
{
    klog_testing_set_output(NULL);
    fclose(c->f);
}

static int reset(void **state)
{
    char err[128];
    (void)state;
    klog_set_verbosity(0);
    klog_set_format(KLOG_FORMAT_TEXT);
    klog_set_vmodule(NULL, err, sizeof(err));
    return 0;
}

static void vmodule_matches_as_klog(void **state)
{
    char err[128] = "";
    (void)state;

    assert_int_equal(
        klog_set_vmodule("queue=4,sched*=2,scheduler/plugins/*/common=5,queue=9", err, sizeof(err)),
        KUBE_OK);
    /* the base name without .c, first match decides */
    assert_true(klog_v_enabled("/src/scheduler/queue/queue.c", 4));
    assert_false(klog_v_enabled("/src/scheduler/queue/queue.c", 5));
    /* globs */
    assert_true(klog_v_enabled("scheduler/scheduler.c", 2));
    assert_false(klog_v_enabled("scheduler/scheduler.c", 3));
    assert_true(klog_v_enabled("sched_x.h", 2));
    /* a pattern with '/' is matched against the whole path; '*' stops at '/' */
    assert_true(klog_v_enabled("scheduler/plugins/podtopologyspread/common.c", 5));
    assert_false(klog_v_enabled("/src/scheduler/plugins/podtopologyspread/common.c", 1));
    assert_false(klog_v_enabled("scheduler/plugins/a/b/common.c", 1));
    /* no match: the verbosity */
    assert_false(klog_v_enabled("kube/util/buf.c", 1));
    klog_set_verbosity(3);
    assert_true(klog_v_enabled("kube/util/buf.c", 3));
    assert_false(klog_v_enabled("kube/util/buf.c", 4));
    /* a higher verbosity wins over a lower module level */
    assert_true(klog_v_enabled("/src/scheduler/scheduler.c", 3));
}

static void vmodule_syntax_errors(void **state)
{
    static const char *const bad[] = {"queue", "=3", "queue=x", "queue=", "a=1=2", "a=1,b"};
    char err[128];
    (void)state;

    assert_int_equal(klog_set_vmodule("queue=4", err, sizeof(err)), KUBE_OK);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(klog_set_vmodule(bad[i], err, sizeof(err)), KUBE_ECONFIG);
        assert_string_equal(err, "syntax error: expect comma-separated list of filename=N");
    }
    assert_int_equal(klog_set_vmodule("queue=-1", err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "negative value for vmodule level");
    /* the previous setting is kept */
    assert_true(klog_v_enabled("queue.c", 4));
    /* empty entries are skipped; level 0 sets nothing (a later pattern decides) */
    assert_int_equal(klog_set_vmodule("queue=0,,que*=2,", err, sizeof(err)), KUBE_OK);
    assert_true(klog_v_enabled("queue.c", 2));
    assert_int_equal(klog_set_vmodule("", err, sizeof(err)), KUBE_OK);
    assert_false(klog_v_enabled("queue.c", 1));
}

/* The one JSON object of a line (the line must end in a newline). */
static cJSON *json_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    cJSON *obj;

    assert_non_null(nl);
    assert_null(strchr(nl + 1, '\n'));
    obj = cJSON_ParseWithLength(text, (size_t)(nl - text));
    assert_non_null(obj);
    return obj;
}

static void json_lines_have_kubes_shape(void **state)
{
    capture c;
    cJSON *o;
    char *member;
    (void)state;

    klog_set_format(KLOG_FORMAT_JSON);
    klog_set_verbosity(3);
    capture_start(&c);
    KLOG_V(3, "bound \"%s\"\n", "ns/p");
    capture_stop(&c);
    o = json_line(c.text);
    /* the members, in kube's order: ts, caller, msg, v */
    member = c.text;
    assert_true(strncmp(member, "{\"ts\":", 6) == 0);
    assert_true(strstr(member, "\"caller\":") < strstr(member, "\"msg\":"));
    assert_true(strstr(member, "\"msg\":") < strstr(member, "\"v\":"));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "ts")));
    assert_true(cJSON_GetObjectItem(o, "ts")->valuedouble > 1.6e9);
    assert_non_null(strstr(c.text, "\"ts\":1"));
    assert_non_null(strchr(strstr(c.text, "\"ts\":"), '.'));
    assert_string_equal(cJSON_GetObjectItem(o, "msg")->valuestring, "bound \"ns/p\"\n");
    assert_int_equal(cJSON_GetObjectItem(o, "v")->valueint, 3);
    /* zap's short caller: directory and file */
    assert_non_null(strstr(cJSON_GetObjectItem(o, "caller")->valuestring, "unit/test_log.c:"));
    cJSON_Delete(o);
    free(c.text);
}

static void json_errors_add_err_and_key_values(void **state)
{
    capture c;
    cJSON *o;
    (void)state;

    klog_set_format(KLOG_FORMAT_JSON);
    capture_start(&c);
    KLOG_ERRORS("connection refused", "Error binding pod", "pod", "ns/p", "node", NULL);
    KLOG_INFOS("Starting", "version", "v1.2.3");
    capture_stop(&c);
    o = cJSON_ParseWithLength(c.text, (size_t)(strchr(c.text, '\n') - c.text));
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "msg")->valuestring, "Error binding pod");
    assert_string_equal(cJSON_GetObjectItem(o, "err")->valuestring, "connection refused");
    assert_string_equal(cJSON_GetObjectItem(o, "pod")->valuestring, "ns/p");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "node")));
    assert_null(cJSON_GetObjectItem(o, "v")); /* error lines carry no v */
    cJSON_Delete(o);
    o = json_line(strchr(c.text, '\n') + 1);
    assert_string_equal(cJSON_GetObjectItem(o, "version")->valuestring, "v1.2.3");
    assert_int_equal(cJSON_GetObjectItem(o, "v")->valueint, 0);
    assert_null(cJSON_GetObjectItem(o, "err"));
    cJSON_Delete(o);
    free(c.text);
}

static void text_lines_as_klog(void **state)
{
    capture c;
    (void)state;

    capture_start(&c);
    KLOG_WARN("plain %d", 7);
    KLOG_ERRORS("boom", "Failed", "pod", "ns/\"p\"");
    KLOG_V(1, "hidden");
    capture_stop(&c);
    assert_int_equal(c.text[0], 'W');
    assert_non_null(strstr(c.text, " test_log.c:"));
    assert_non_null(strstr(c.text, "] plain 7\n"));
    assert_non_null(strstr(c.text, "\nE"));
    assert_non_null(strstr(c.text, "] \"Failed\" err=\"boom\" pod=\"ns/\\\"p\\\"\"\n"));
    assert_null(strstr(c.text, "hidden"));
    free(c.text);
}

static void logs_flag_set_parses_and_applies(void **state)
{
    klog_options o;
    kube_flag_set set;
    char err[256] = "";
    char *argv[] = {"p", "-v", "2", "--vmodule=queue=5", "--logging-format", "json"};
    char *bad[] = {"p", "--vmodule=queue"};
    (void)state;

    memset(&o, 0, sizeof(o));
    set = klog_flag_set(&o);
    assert_string_equal(set.name, "Logs");
    assert_int_equal(kube_flag_sets_parse(&set, 1, 6, argv, NULL, err, sizeof(err)), KUBE_OK);
    assert_int_equal(klog_options_apply(&o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(klog_verbosity(), 2);
    assert_true(klog_v_enabled("queue.c", 5));
    klog_options_free(&o);

    assert_int_equal(kube_flag_sets_parse(&set, 1, 2, bad, NULL, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "invalid argument \"queue\" for \"--vmodule\" flag: syntax error: "
                             "expect comma-separated list of filename=N");
    o.format = strdup("xml");
    assert_int_equal(klog_options_apply(&o, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "format: Unsupported value: \"xml\": supported values: \"json\", "
                             "\"text\"");
    klog_options_free(&o);
}

int test_group_log(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, reset, reset)
    const struct CMUnitTest tests[] = {
        T(vmodule_matches_as_klog),     T(vmodule_syntax_errors),
        T(json_lines_have_kubes_shape), T(json_errors_add_err_and_key_values),
        T(text_lines_as_klog),          T(logs_flag_set_parses_and_applies),
    };
#undef T
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
