/*
 * tests/unit/test_kubectl_plugin.c - kubectl-stickyvm (apiserver/kubectl/):
 * its command line (kubectl's flags and shorthands, flags among the
 * arguments, usage errors), kubectl's table layout and ages, -o yaml's
 * quoting, the pin read from a VM's annotations (the list fallback), the
 * error line of a failed call, --context choosing a kubeconfig context,
 * list's NODE-STATUS column and --node-status filter on made-up answers,
 * and evacuate's plan, outcomes and table.
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
#include "evacuate.h"
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

    /* --from: the precondition; empty is "only if unpinned"; not evacuate's */
    assert_int_equal(parse_line("pin vm1 --node node-2 --from node-1", &o, err, sizeof(err)),
                     KUBE_OK);
    assert_string_equal(o.from, "node-1");
    kctl_options_free(&o);
    assert_int_equal(parse_line("unpin vm1 --from=", &o, err, sizeof(err)), KUBE_OK);
    assert_string_equal(o.from, "");
    kctl_options_free(&o);
    assert_int_equal(parse_line("unpin vm1", &o, err, sizeof(err)), KUBE_OK);
    assert_null(o.from);
    kctl_options_free(&o);
    assert_int_not_equal(parse_line("evacuate node-1 --from node-0", &o, err, sizeof(err)),
                         KUBE_OK);
    kctl_options_free(&o);

    assert_int_equal(parse_line("why virt-launcher-vm1-abcde", &o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.cmd, KCTL_WHY);
    kctl_options_free(&o);

    assert_int_equal(parse_line("-n prod evacuate node-1 --to node-2 -l app=db --dry-run --force",
                                &o, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(o.cmd, KCTL_EVACUATE);
    assert_string_equal(o.target, "node-1");
    assert_string_equal(o.to, "node-2");
    assert_string_equal(o.selector, "app=db");
    assert_string_equal(o.namespace_, "prod");
    assert_true(o.dry_run && o.force);
    kctl_options_free(&o);
    assert_int_equal(parse_line("evacuate -A node-1", &o, err, sizeof(err)), KUBE_OK);
    assert_true(o.all_namespaces);
    assert_null(o.to);
    kctl_options_free(&o);

    /* version, and --version anywhere (kubeconfig flags still read) */
    assert_int_equal(parse_line("version", &o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.cmd, KCTL_VERSION);
    kctl_options_free(&o);
    assert_int_equal(parse_line("--version --context c2", &o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.cmd, KCTL_VERSION);
    assert_false(o.help);
    assert_string_equal(o.context, "c2");
    kctl_options_free(&o);

    assert_int_equal(
        parse_line("list --node-status NotReady,Unknown,Missing -A", &o, err, sizeof(err)),
        KUBE_OK);
    assert_string_equal(o.node_status, "NotReady,Unknown,Missing");
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
    expect_usage_error("unpin vm1 --node n1", "unknown flag: --node");
    expect_usage_error("pin vm1 -A", "unknown flag: --all-namespaces");
    expect_usage_error("frobnicate vm1", "unknown command \"frobnicate\" for \"kubectl stickyvm\"");
    expect_usage_error("frob\x01", /* %q, as cobra */
                       "unknown command \"frob\\x01\" for \"kubectl stickyvm\"");
    expect_usage_error("list -o wide",
                       "unable to match a printer suitable for the output format \"wide\", "
                       "allowed formats are: json,yaml");
    expect_usage_error("pin vm1 --node", "flag needs an argument: --node");
    expect_usage_error("evacuate", "exactly one NODE name is required, got 0");
    expect_usage_error("evacuate node-1 --to node-1", "--to must name another node than node-1");
    expect_usage_error("evacuate node-1 -o json",
                       "evacuate prints a table only: unknown flag: --output");
    expect_usage_error("pin vm1 --to node-2", "unknown flag: --to");
    expect_usage_error("list --node-status NotReady,Gone",
                       "invalid argument \"NotReady,Gone\" for \"--node-status\" flag: \"Gone\" is "
                       "not one of Ready, NotReady, Unknown, Missing, SchedulingDisabled");
    expect_usage_error("pin vm1 --dry-run=maybe",
                       "invalid argument \"maybe\" for \"--dry-run\" flag: must be \"none\", "
                       "\"server\", or \"client\"");
}

/* kctl_check_names on the options of line with namespace ns: its code,
 * and the message in err. */
static int check_names(const char *line, const char *ns, char *err, size_t n)
{
    kctl_options o;
    assert_int_equal(parse_line(line, &o, err, n), KUBE_OK);
    int rc = kctl_check_names(&o, ns, err, n);
    kctl_options_free(&o);
    return rc;
}

#define LABEL_MSG "a lowercase RFC 1123 label must consist of lower case alphanumeric characters"
#define SUBDOMAIN_MSG "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"

/* Every name that reaches a path or a query is checked first, with
 * kubectl's wording: the namespace that once moved another VM's pin from a
 * dry run (`pin vm-web -n 'demo/virtualmachines/vm-db/pin?node=node-2#'
 * --node node-0 --dry-run`), a space, a control byte, a name too long. */
static void names_are_checked_before_any_request(void **state)
{
    (void)state;
    char err[1024], longname[20001];
    const char *hostile = "demo/virtualmachines/vm-db/pin?node=node-2#";
    assert_int_equal(check_names("pin vm-web --node node-0 --dry-run", hostile, err, sizeof(err)),
                     KUBE_EINVAL);
    assert_true(
        strncmp(
            err, "invalid namespace \"demo/virtualmachines/vm-db/pin?node=node-2#\": " LABEL_MSG,
            strlen(
                "invalid namespace \"demo/virtualmachines/vm-db/pin?node=node-2#\": " LABEL_MSG)) ==
        0);
    assert_int_equal(check_names("list", "de mo", err, sizeof(err)), KUBE_EINVAL);
    assert_non_null(strstr(err, "invalid namespace \"de mo\": " LABEL_MSG));
    assert_int_equal(check_names("list -A", "de mo", err, sizeof(err)), KUBE_OK); /* unused */
    assert_int_equal(check_names("why vm-web\x01", "demo", err, sizeof(err)), KUBE_EINVAL);
    /* echoed escaped as %q, never the raw control byte */
    assert_non_null(strstr(err, "invalid name \"vm-web\\x01\": " SUBDOMAIN_MSG));
    assert_int_equal(check_names("pin vm-web --node node-0#", "demo", err, sizeof(err)),
                     KUBE_EINVAL);
    assert_non_null(strstr(err, "invalid node name \"node-0#\": " SUBDOMAIN_MSG));
    assert_int_equal(check_names("evacuate node-0 --to a/b", "demo", err, sizeof(err)),
                     KUBE_EINVAL);
    assert_non_null(strstr(err, "invalid node name \"a/b\""));
    assert_int_equal(check_names("evacuate ../node", "demo", err, sizeof(err)), KUBE_EINVAL);
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    kctl_options o;
    assert_int_equal(parse_line("why x", &o, err, sizeof(err)), KUBE_OK);
    o.target = longname;
    assert_int_equal(kctl_check_names(&o, "demo", err, sizeof(err)), KUBE_EINVAL);
    assert_non_null(strstr(err, "...: must be no more than 253 characters"));
    kctl_options_free(&o);
    /* pin 'vm web': an invalid name, not an encoding the user never typed */
    assert_int_equal(parse_line("pin x", &o, err, sizeof(err)), KUBE_OK);
    o.target = "vm web";
    assert_int_equal(kctl_check_names(&o, "demo", err, sizeof(err)), KUBE_EINVAL);
    assert_non_null(strstr(err, "invalid VM name \"vm web\": " SUBDOMAIN_MSG));
    kctl_options_free(&o);
    assert_int_equal(check_names("unpin vm-web.v2 -n demo", "demo", err, sizeof(err)), KUBE_OK);
}

/* Whatever a name holds, it stays one segment of the path, and each query
 * value one value: nothing can add a segment, a parameter or a fragment. */
static void paths_escape_every_segment(void **state)
{
    (void)state;
    kube_buf b = KUBE_BUF_INIT;
    assert_int_equal(kctl_pin_path(&b, "demo/virtualmachines/vm-db/pin?node=node-2#", "vm/x?y", 0,
                                   "n&force=true", NULL, 1, 0),
                     KUBE_OK);
    assert_string_equal(b.data,
                        "/apis/subresources.stickyvm.io/v1/namespaces/"
                        "demo%2Fvirtualmachines%2Fvm-db%2Fpin%3Fnode%3Dnode-2%23/virtualmachines/"
                        "vm%2Fx%3Fy/pin?node=n%26force%3Dtrue&dryRun=All");
    kube_buf_free(&b);
    /* the precondition: from=NODE, and from= empty (only if unpinned) */
    assert_int_equal(kctl_pin_path(&b, "demo", "vm", 1, NULL, "n&x", 0, 0), KUBE_OK);
    assert_string_equal(b.data, "/apis/subresources.stickyvm.io/v1/namespaces/demo/"
                                "virtualmachines/vm/unpin?from=n%26x");
    kube_buf_free(&b);
    assert_int_equal(kctl_pin_path(&b, "demo", "vm", 0, "node-2", "", 0, 0), KUBE_OK);
    assert_string_equal(b.data, "/apis/subresources.stickyvm.io/v1/namespaces/demo/"
                                "virtualmachines/vm/pin?node=node-2&from=");
    kube_buf_free(&b);
    assert_int_equal(kctl_object_path(&b, "/api/v1", NULL, "nodes", "../x"), KUBE_OK);
    assert_string_equal(b.data, "/api/v1/nodes/..%2Fx");
    kube_buf_free(&b);
    assert_int_equal(kctl_object_path(&b, "/api/v1", "..", "pods", "."), KUBE_OK);
    assert_string_equal(b.data, "/api/v1/namespaces/%2E%2E/pods/%2E");
    kube_buf_free(&b);
    assert_int_equal(kctl_object_path(&b, "/api/v1", "a b", "pods", NULL), KUBE_OK);
    assert_string_equal(b.data, "/api/v1/namespaces/a%20b/pods");
    kube_buf_free(&b);
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

/* Made-up virtualmachinepins answers, as the server writes status.nodeStatus. */
static const char pins_json[] =
    "{\"kind\":\"VirtualMachinePinList\",\"items\":["
    "{\"metadata\":{\"name\":\"vm-a\",\"namespace\":\"d\",\"creationTimestamp\":"
    "\"2026-01-01T00:00:00Z\"},\"node\":\"node-1\",\"since\":\"2026-01-01T00:00:00Z\","
    "\"by\":\"alice\",\"status\":{\"nodeStatus\":\"Unknown\"}},"
    "{\"metadata\":{\"name\":\"vm-b\",\"namespace\":\"d\",\"creationTimestamp\":"
    "\"2026-01-01T00:00:00Z\"},\"node\":\"node-2\",\"since\":\"2026-01-01T00:00:00Z\","
    "\"by\":\"bob\",\"status\":{\"nodeStatus\":\"Ready,SchedulingDisabled\"}},"
    "{\"metadata\":{\"name\":\"vm-c\",\"namespace\":\"e\",\"creationTimestamp\":"
    "\"2026-01-01T00:00:00Z\"},\"node\":\"node-1\",\"since\":null,\"by\":null},"
    "{\"metadata\":{\"name\":\"vm-d\",\"namespace\":\"e\",\"creationTimestamp\":"
    "\"2026-01-01T00:00:00Z\"},\"node\":null,\"status\":{\"nodeStatus\":\"Missing\"}}]}";

static void node_status_column_and_filter(void **state)
{
    (void)state;
    assert_true(kctl_node_status_matches("Unknown", "NotReady,Unknown,Missing"));
    assert_true(kctl_node_status_matches("NotReady,SchedulingDisabled", "NotReady"));
    assert_true(kctl_node_status_matches("Ready,SchedulingDisabled", "SchedulingDisabled"));
    assert_false(kctl_node_status_matches("Ready,SchedulingDisabled", "NotReady,Unknown"));
    assert_false(kctl_node_status_matches("Ready", "SchedulingDisabled"));
    assert_false(kctl_node_status_matches("NotReady", "Ready"));
    assert_false(kctl_node_status_matches(NULL, "Ready,NotReady,Unknown,Missing"));

    kctl_options o = {.all_namespaces = 1};
    char *buf = NULL, *ebuf = NULL;
    size_t len = 0, elen = 0;
    FILE *f = open_memstream(&buf, &len), *e = open_memstream(&ebuf, &elen);
    kctl_ctx c = {NULL, &o, "d", f, e, 1767225600 + 90}; /* 2026-01-01 + 90 s */
    cJSON *list = cJSON_Parse(pins_json);
    assert_int_equal(kctl_print_pin_table(&c, list), KUBE_OK);
    kctl_keep_node_status(list, "Unknown,SchedulingDisabled");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 2);
    assert_int_equal(kctl_print_pin_table(&c, list), KUBE_OK);
    kctl_keep_node_status(list, "Missing");
    assert_int_equal(kctl_print_pin_table(&c, list), KUBE_OK);
    cJSON_Delete(list);
    fclose(e);
    char *out = captured(f, &buf);
    assert_string_equal(
        out, "NAMESPACE   NAME   NODE     NODE-STATUS                SINCE    BY       AGE\n"
             "d           vm-a   node-1   Unknown                    90s      alice    90s\n"
             "d           vm-b   node-2   Ready,SchedulingDisabled   90s      bob      90s\n"
             "e           vm-c   node-1   <none>                     <none>   <none>   90s\n"
             "e           vm-d   <none>   Missing                    <none>   <none>   90s\n"
             "NAMESPACE   NAME   NODE     NODE-STATUS                SINCE   BY      AGE\n"
             "d           vm-a   node-1   Unknown                    90s     alice   90s\n"
             "d           vm-b   node-2   Ready,SchedulingDisabled   90s     bob     90s\n");
    assert_string_equal(ebuf, "No resources found\n");
    free(out);
    free(ebuf);
}

/* A failed call's response as kube/transport fills it. */
static kube_response failed_response(long code, const char *reason, const char *message)
{
    kube_response r = {.code = code};
    snprintf(r.status.reason, sizeof(r.status.reason), "%s", reason);
    snprintf(r.status.message, sizeof(r.status.message), "%s", message);
    return r;
}

static void evacuate_plan_outcomes_and_table(void **state)
{
    cJSON *list = cJSON_Parse(pins_json), *moved = cJSON_Parse("{\"changed\":true}"),
          *same = cJSON_Parse("{\"changed\":false}");
    kctl_evac_plan plan;
    kube_response ok = {.code = 200};
    (void)state;
    assert_int_equal(kctl_evac_plan_init(&plan, list, "node-1", "node-2"), KUBE_OK);
    assert_int_equal(plan.n, 2);
    assert_string_equal(plan.items[0].name, "vm-a");
    assert_string_equal(plan.items[1].ns, "e");
    assert_int_equal(plan.items[1].outcome, KCTL_EVAC_PENDING);

    kctl_evac_record(&plan.items[0], KUBE_OK, &ok, moved, 0, 1);
    assert_int_equal(plan.items[0].outcome, KCTL_EVAC_MOVED);
    assert_string_equal(plan.items[0].result, "Repinned (server dry run)");
    kube_response conflict = failed_response(
        409, "Conflict",
        "Operation cannot be fulfilled on virtualmachines.kubevirt.io \"vm-c\": volume \"data\" "
        "(PersistentVolumeClaim \"c-data\", PersistentVolume \"pv-1\") lives on node node-1, and "
        "its node affinity does not allow node node-2; pin to that node, or add force=true to pin "
        "anyway (the VM would lose that data)");
    kctl_evac_record(&plan.items[1], KUBE_ECONFLICT, &conflict, NULL, 0, 0);
    assert_int_equal(plan.items[1].outcome, KCTL_EVAC_REFUSED);
    assert_int_equal(kctl_evac_count(&plan, KCTL_EVAC_REFUSED), 1);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(kctl_evac_write_table(&plan, 1, f), KUBE_OK);
    assert_int_equal(kctl_evac_write_table(&plan, 0, f), KUBE_OK);
    char *out = captured(f, &buf);
    assert_string_equal(
        out, "NAMESPACE   VM     FROM     TO       RESULT\n"
             "d           vm-a   node-1   node-2   Repinned (server dry run)\n"
             "e           vm-c   node-1   node-2   Refused: volume \"data\" (PersistentVolumeClaim "
             "\"c-data\", PersistentVolume \"pv-1\") lives on node node-1, and its node affinity "
             "does not allow node node-2\n"
             "VM     FROM     TO       RESULT\n"
             "vm-a   node-1   node-2   Repinned (server dry run)\n"
             "vm-c   node-1   node-2   Refused: volume \"data\" (PersistentVolumeClaim \"c-data\", "
             "PersistentVolume \"pv-1\") lives on node node-1, and its node affinity does not "
             "allow node node-2\n");
    free(out);
    kctl_evac_plan_free(&plan);

    /* unpin mode: TO is <none>; a repeated unpin is Unchanged; other
     * errors (a 409 not about force, a 403, no server) are failures */
    assert_int_equal(kctl_evac_plan_init(&plan, list, "node-1", NULL), KUBE_OK);
    kctl_evac_record(&plan.items[0], KUBE_OK, &ok, moved, 1, 0);
    assert_string_equal(plan.items[0].result, "Unpinned");
    /* from=node-1 failed: re-pinned (or unpinned) meanwhile, skipped, FROM
     * its pin now; a moved VM's FROM is the server's previousNode */
    const char *skip_body =
        "{\"kind\":\"Status\",\"code\":409,\"reason\":\"Conflict\",\"details\":{\"causes\":"
        "[{\"reason\":\"FieldValueInvalid\",\"message\":\"node-0\",\"field\":\"from\"}]}}";
    kube_response skip = failed_response(409, "Conflict", "the precondition from=node-1 failed");
    skip.body = (char *)skip_body;
    skip.len = strlen(skip_body);
    kctl_evac_record(&plan.items[1], KUBE_ECONFLICT, &skip, NULL, 1, 0);
    assert_int_equal(plan.items[1].outcome, KCTL_EVAC_SKIPPED);
    assert_string_equal(plan.items[1].from, "node-0");
    assert_string_equal(plan.items[1].result, "Skipped: re-pinned to node-0 meanwhile, not moved");
    cJSON *prev = cJSON_Parse("{\"changed\":true,\"previousNode\":\"node-7\"}");
    kctl_evac_record(&plan.items[0], KUBE_OK, &ok, prev, 1, 0);
    assert_string_equal(plan.items[0].from, "node-7");
    cJSON_Delete(prev);
    kctl_evac_record(&plan.items[1], KUBE_OK, &ok, same, 1, 0);
    assert_int_equal(plan.items[1].outcome, KCTL_EVAC_UNCHANGED);
    assert_string_equal(plan.items[1].result, "Unchanged");
    kube_response busy = failed_response(409, "Conflict", "the VM kept changing"),
                  denied = failed_response(403, "Forbidden", "User \"bob\" cannot update"),
                  down = failed_response(0, "", "Couldn't connect to server");
    kctl_evac_record(&plan.items[1], KUBE_ECONFLICT, &busy, NULL, 1, 0);
    assert_int_equal(plan.items[1].outcome, KCTL_EVAC_FAILED);
    assert_string_equal(plan.items[1].result, "Failed (Conflict): the VM kept changing");
    kctl_evac_record(&plan.items[1], KUBE_EFORBIDDEN, &denied, NULL, 1, 0);
    assert_string_equal(plan.items[1].result, "Failed (Forbidden): User \"bob\" cannot update");
    kctl_evac_record(&plan.items[1], KUBE_EIO, &down, NULL, 1, 0);
    assert_string_equal(plan.items[1].result,
                        "Failed: unable to connect to the server: Couldn't connect to server");
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(kctl_evac_write_table(&plan, 0, f), KUBE_OK);
    out = captured(f, &buf);
    assert_non_null(strstr(out, "vm-a   node-7   <none>   Unpinned\n"));
    free(out);
    kctl_evac_plan_free(&plan);

    /* nothing pinned there: an empty plan */
    assert_int_equal(kctl_evac_plan_init(&plan, list, "node-9", NULL), KUBE_OK);
    assert_int_equal(plan.n, 0);
    kctl_evac_plan_free(&plan);
    cJSON_Delete(list);
    cJSON_Delete(moved);
    cJSON_Delete(same);
}

int test_group_kubectl_plugin(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_commands_and_flags),
        cmocka_unit_test(rejects_bad_usage),
        cmocka_unit_test(names_are_checked_before_any_request),
        cmocka_unit_test(paths_escape_every_segment),
        cmocka_unit_test(table_as_kubectl),
        cmocka_unit_test(ages_as_kubectl),
        cmocka_unit_test(yaml_quotes_what_would_change_type),
        cmocka_unit_test(pin_from_vm_annotations),
        cmocka_unit_test(errors_as_kubectl),
        cmocka_unit_test(context_flag_chooses_context),
        cmocka_unit_test(node_status_column_and_filter),
        cmocka_unit_test(evacuate_plan_outcomes_and_table),
    };
    return cmocka_run_group_tests_name("kubectl_plugin", tests, NULL, NULL);
}
