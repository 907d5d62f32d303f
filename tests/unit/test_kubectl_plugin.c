/*
 * tests/unit/test_kubectl_plugin.c - kubectl-stickyvm (apiserver/kubectl/):
 * its command line (kubectl's flags and shorthands, flags among the
 * arguments, usage errors), kubectl's table layout and ages, -o yaml's
 * quoting, the pin read from a VM's annotations (the list fallback), the
 * error line of a failed call, and --context choosing a kubeconfig context.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "kube/util/duration.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "output.h"

/* Parses the words of line (space-separated; argv[0] added). */
static int parse_line(const char *line, kctl_options *o, char *err, size_t n)
{
    char copy[512], *argv[32], *save = NULL;
    int argc = 0;
    snprintf(copy, sizeof(copy), "%s", line);
    argv[argc++] = "kubectl-stickyvm";
    for (char *w = strtok_r(copy, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    int rc = kctl_parse(argc, argv, o, err, n);
    /* target points into copy: keep a stable copy for the asserts */
    static char target[128];
    if (o->target) {
        snprintf(target, sizeof(target), "%s", o->target);
        o->target = target;
    }
    return rc;
}

static void parses_commands_and_flags(void **state)
{
    kctl_options o;
    char err[256];
    (void)state;
    assert_int_equal(parse_line("pin vm1 --node node-2 --dry-run --force", &o, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(o.cmd, KCTL_PIN);
    assert_string_equal(o.target, "vm1");
    assert_string_equal(o.node, "node-2");
    assert_true(o.dry_run && o.force && !o.help);
    kctl_options_free(&o);

    /* flags before the command, shorthands in each spelling */
    assert_int_equal(
        parse_line("-n prod --context=c1 unpin -ojson vm2 --dry-run=server", &o, err, sizeof(err)),
        KUBE_OK);
    assert_int_equal(o.cmd, KCTL_UNPIN);
    assert_string_equal(o.namespace_, "prod");
    assert_string_equal(o.context, "c1");
    assert_string_equal(o.output, "json");
    assert_string_equal(o.target, "vm2");
    assert_true(o.dry_run);
    kctl_options_free(&o);

    assert_int_equal(parse_line("list -A --node node-3 -n=x -o yaml", &o, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(o.cmd, KCTL_LIST);
    assert_true(o.all_namespaces);
    assert_string_equal(o.node, "node-3");
    assert_string_equal(o.namespace_, "x");
    assert_string_equal(o.output, "yaml");
    assert_null(o.target);
    kctl_options_free(&o);

    assert_int_equal(parse_line("why virt-launcher-vm1-abcde", &o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.cmd, KCTL_WHY);
    kctl_options_free(&o);

    /* --help anywhere, and no command at all, print the help */
    assert_int_equal(parse_line("pin --help", &o, err, sizeof(err)), KUBE_OK);
    assert_true(o.help);
    assert_int_equal(o.cmd, KCTL_PIN);
    kctl_options_free(&o);
    assert_int_equal(parse_line("", &o, err, sizeof(err)), KUBE_OK);
    assert_true(o.help);
    assert_int_equal(o.cmd, KCTL_NONE);
    kctl_options_free(&o);
}

static void expect_usage_error(const char *line, const char *want)
{
    kctl_options o;
    char err[256] = "";
    assert_int_equal(parse_line(line, &o, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, want);
    kctl_options_free(&o);
}

static void rejects_bad_usage(void **state)
{
    (void)state;
    expect_usage_error("pin", "exactly one VM name is required, got 0");
    expect_usage_error("pin a b", "exactly one VM name is required, got 2");
    expect_usage_error("why", "exactly one POD or VM name is required, got 0");
    expect_usage_error("list vm1", "unexpected argument \"vm1\"");
    expect_usage_error("unpin vm1 --force", "unknown flag: --force");
    expect_usage_error("unpin vm1 --node n1", "unknown flag: --node");
    expect_usage_error("pin vm1 -A", "unknown flag: --all-namespaces");
    expect_usage_error("frobnicate vm1", "unknown command \"frobnicate\" for \"kubectl stickyvm\"");
    expect_usage_error("list -o wide",
                       "unable to match a printer suitable for the output format \"wide\", "
                       "allowed formats are: json,yaml");
    expect_usage_error("pin vm1 --node", "flag needs an argument: --node");
    expect_usage_error("pin vm1 --dry-run=maybe",
                       "invalid argument \"maybe\" for \"--dry-run\" flag: must be \"none\", "
                       "\"server\", or \"client\"");
}

/* What f received, as a string (caller frees). */
static char *captured(FILE *f, char **buf)
{
    fclose(f);
    return *buf;
}

static void table_as_kubectl(void **state)
{
    static const char *const headers[] = {"NAME", "NODE", "BY"};
    static const char *const r1[] = {"vm-with-a-long-name", "node-1", "system:stickyvm-scheduler"};
    static const char *const r2[] = {"a", NULL, ""};
    kctl_table t;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;
    assert_int_equal(kctl_table_init(&t, 3, headers), KUBE_OK);
    assert_int_equal(kctl_table_add(&t, r1), KUBE_OK);
    assert_int_equal(kctl_table_add(&t, r2), KUBE_OK);
    kctl_table_write(&t, f);
    kctl_table_free(&t);
    char *out = captured(f, &buf);
    assert_string_equal(out, "NAME                  NODE     BY\n"
                             "vm-with-a-long-name   node-1   system:stickyvm-scheduler\n"
                             "a                     <none>   <none>\n");
    free(out);

    /* a short column is still 6 wide (tabwriter's minwidth) */
    static const char *const h2[] = {"A", "B"};
    static const char *const r3[] = {"x", "y"};
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(kctl_table_init(&t, 2, h2), KUBE_OK);
    assert_int_equal(kctl_table_add(&t, r3), KUBE_OK);
    kctl_table_write(&t, f);
    kctl_table_free(&t);
    out = captured(f, &buf);
    assert_string_equal(out, "A     B\nx     y\n");
    free(out);
}

static void ages_as_kubectl(void **state)
{
    static const struct {
        long long s;
        const char *want;
    } cases[] = {{-5, "<invalid>"},
                 {-1, "0s"},
                 {0, "0s"},
                 {119, "119s"},
                 {120, "2m"},
                 {330, "5m30s"},
                 {600, "10m"},
                 {179 * 60, "179m"},
                 {3 * 3600, "3h"},
                 {7 * 3600 + 60, "7h1m"},
                 {47 * 3600, "47h"},
                 {50 * 3600, "2d2h"},
                 {8 * 86400, "8d"},
                 {729 * 86400, "729d"},
                 {(365 * 2 + 30) * 86400LL, "2y30d"},
                 {365 * 9 * 86400LL, "9y"}};
    char out[32];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kube_duration_human(cases[i].s, out, sizeof(out));
        assert_string_equal(out, cases[i].want);
    }
}

static void yaml_quotes_what_would_change_type(void **state)
{
    cJSON *o =
        cJSON_Parse("{\"kind\":\"VirtualMachinePin\",\"node\":null,\"since\":"
                    "\"2026-11-25T20:00:00Z\",\"v\":\"true\",\"y\":\"n\",\"num\":\"42\",\"e\":\"\","
                    "\"changed\":false,\"count\":3,\"items\":[\"a\",{\"b\":\"c d\"}]}");
    (void)state;
    char *y = kctl_yaml(o);
    assert_non_null(y);
    assert_string_equal(y, "kind: VirtualMachinePin\n"
                           "node: null\n"
                           "since: \"2026-11-25T20:00:00Z\"\n"
                           "v: \"true\"\n"
                           "\"y\": \"n\"\n"
                           "num: \"42\"\n"
                           "e: \"\"\n"
                           "changed: false\n"
                           "count: 3\n"
                           "items:\n"
                           "- a\n"
                           "- b: c d\n");
    free(y);
    cJSON_Delete(o);
}

static void pin_from_vm_annotations(void **state)
{
    cJSON *vm = cJSON_Parse(
        "{\"metadata\":{\"name\":\"vm1\",\"namespace\":\"ns\",\"creationTimestamp\":"
        "\"2026-11-25T20:00:00Z\",\"annotations\":{\"stickyvm.io/node\":\"node-2\","
        "\"stickyvm.io/pinned-at\":\"2026-11-25T21:00:00Z\",\"stickyvm.io/pinned-by\":\"alice\","
        "\"stickyvm.io/pin-reason\":\"API\"}}}");
    cJSON *bare = cJSON_Parse("{\"metadata\":{\"name\":\"vm2\",\"namespace\":\"ns\"}}");
    (void)state;
    cJSON *pin = kctl_pin_from_vm(vm), *none = kctl_pin_from_vm(bare);
    char *text = cJSON_PrintUnformatted(pin);
    assert_string_equal(text, "{\"apiVersion\":\"subresources.stickyvm.io/v1\",\"kind\":"
                              "\"VirtualMachinePin\",\"metadata\":{\"name\":\"vm1\",\"namespace\":"
                              "\"ns\",\"creationTimestamp\":\"2026-11-25T20:00:00Z\"},\"node\":"
                              "\"node-2\",\"since\":\"2026-11-25T21:00:00Z\",\"by\":\"alice\","
                              "\"reason\":\"API\"}");
    free(text);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(none, "node")));
    assert_null(kctl_str(none, "since"));
    cJSON_Delete(pin);
    cJSON_Delete(none);
    cJSON_Delete(vm);
    cJSON_Delete(bare);
}

static void errors_as_kubectl(void **state)
{
    kube_response r = {.code = 404};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;
    snprintf(r.status.reason, sizeof(r.status.reason), "NotFound");
    snprintf(r.status.message, sizeof(r.status.message),
             "virtualmachines.kubevirt.io \"vm9\" not found");
    kctl_print_error(f, &r);
    r.code = 0;
    snprintf(r.status.message, sizeof(r.status.message), "Couldn't connect to server");
    kctl_print_error(f, &r);
    char *out = captured(f, &buf);
    assert_string_equal(out, "Error from server (NotFound): virtualmachines.kubevirt.io \"vm9\" "
                             "not found\n"
                             "Unable to connect to the server: Couldn't connect to server\n");
    free(out);
}

/* --context picks a context other than current-context; an unknown one is
 * an error naming --context. */
static void context_flag_chooses_context(void **state)
{
    char path[] = "/tmp/kctl-kubeconfig-XXXXXX", err[512] = "";
    int fd = mkstemp(path);
    kube_config *cfg = NULL;
    (void)state;
    assert_true(fd >= 0);
    const char *text = "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
                       "clusters:\n- name: ca\n  cluster:\n    server: https://a.example:6443\n"
                       "- name: cb\n  cluster:\n    server: https://b.example:6443\n"
                       "users:\n- name: u\n  user:\n    token: t\n"
                       "contexts:\n- name: a\n  context:\n    cluster: ca\n    user: u\n"
                       "- name: b\n  context:\n    cluster: cb\n    user: u\n    namespace: nb\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(kube_config_load_context(path, "b", &cfg, err, sizeof(err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://b.example:6443");
    assert_string_equal(kube_config_namespace(cfg), "nb");
    kube_config_free(cfg);
    assert_int_equal(kube_config_load_context(path, NULL, &cfg, err, sizeof(err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://a.example:6443");
    kube_config_free(cfg);
    assert_int_equal(kube_config_load_context(path, "zz", &cfg, err, sizeof(err)), KUBE_ECONFIG);
    assert_non_null(strstr(err, "--context"));
    assert_non_null(strstr(err, "\"zz\""));
    unlink(path);
}

int test_group_kubectl_plugin(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_commands_and_flags),
        cmocka_unit_test(rejects_bad_usage),
        cmocka_unit_test(table_as_kubectl),
        cmocka_unit_test(ages_as_kubectl),
        cmocka_unit_test(yaml_quotes_what_would_change_type),
        cmocka_unit_test(pin_from_vm_annotations),
        cmocka_unit_test(errors_as_kubectl),
        cmocka_unit_test(context_flag_chooses_context),
    };
    return cmocka_run_group_tests_name("kubectl_plugin", tests, NULL, NULL);
}
