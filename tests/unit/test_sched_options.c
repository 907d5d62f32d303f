/*
 * tests/unit/test_sched_options.c - stickyvm-scheduler's command line
 * (scheduler/options.h, scheduler/feature_gates.h): --feature-gates as
 * component-base parses it, the precedence of the deprecated and
 * leader-election flags over --config as kube-scheduler's
 * Options.ApplyTo, the JSON-only content type, and --help listing every
 * kube-scheduler flag in its section.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feature_gates.h"
#include "feature_gates_testing.h"
#include "kube/util/cli.h"
#include "kube/util/errors.h"
#include "kube/util/log_testing.h"
#include "options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int reset_gates(void **state)
{
    (void)state;
    sched_features_reset();
    return 0;
}

static void feature_gates_defaults_and_values(void **state)
{
    char err[1024] = "";
    (void)state;

    /* v1.28's defaults */
    assert_true(sched_feature_enabled(SCHED_FEATURE_POD_SCHEDULING_READINESS));
    assert_true(sched_feature_enabled(SCHED_FEATURE_MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD));
    assert_true(sched_feature_enabled(SCHED_FEATURE_READ_WRITE_ONCE_POD));
    assert_false(sched_feature_enabled(SCHED_FEATURE_SIDECAR_CONTAINERS));
    assert_false(sched_feature_enabled(SCHED_FEATURE_VOLUME_CAPACITY_PRIORITY));

    assert_int_equal(
        sched_features_apply(" PodSchedulingReadiness=false , "
                             "MinDomainsInPodTopologySpread=0,VolumeCapacityPriority=false",
                             err, sizeof(err)),
        KUBE_OK);
    assert_false(sched_feature_enabled(SCHED_FEATURE_POD_SCHEDULING_READINESS));
    assert_false(sched_feature_enabled(SCHED_FEATURE_MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD));
    assert_true(sched_feature_enabled(SCHED_FEATURE_MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD));
    /* a new spec starts from the defaults again */
    assert_int_equal(sched_features_apply("", err, sizeof(err)), KUBE_OK);
    assert_true(sched_feature_enabled(SCHED_FEATURE_POD_SCHEDULING_READINESS));

    /* AllBeta=false turns every beta gate off, except those named */
    assert_int_equal(sched_features_apply("AllBeta=false,PodDisruptionConditions=true,"
                                          "ReadWriteOncePod=true",
                                          err, sizeof(err)),
                     KUBE_OK);
    assert_false(sched_feature_enabled(SCHED_FEATURE_POD_SCHEDULING_READINESS));
    assert_false(sched_feature_enabled(SCHED_FEATURE_NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD));
    assert_true(sched_feature_enabled(SCHED_FEATURE_READ_WRITE_ONCE_POD));
    assert_int_equal(sched_features_apply("AllBeta=false", err, sizeof(err)), KUBE_OK);
    assert_false(sched_feature_enabled(SCHED_FEATURE_READ_WRITE_ONCE_POD));
    assert_false(sched_feature_enabled(SCHED_FEATURE_POD_DISRUPTION_CONDITIONS));
    assert_int_equal(sched_features_apply("AllAlpha=false", err, sizeof(err)), KUBE_OK);
    assert_true(sched_feature_enabled(SCHED_FEATURE_POD_DISRUPTION_CONDITIONS));
}

static void feature_gates_errors(void **state)
{
    static const struct {
        const char *spec, *want;
    } cases[] = {
        {"Foo=true", "unrecognized feature gate: Foo (known: AllAlpha, AllBeta, "
                     "DynamicResourceAllocation, InPlacePodVerticalScaling, "
                     "MatchLabelKeysInPodTopologySpread, MinDomainsInPodTopologySpread, "
                     "NodeInclusionPolicyInPodTopologySpread, PodDisruptionConditions, "
                     "PodSchedulingReadiness, ReadWriteOncePod, SidecarContainers, "
                     "VolumeCapacityPriority)"},
        {"PodSchedulingReadiness", "malformed pair, expect string=bool"},
        {"PodSchedulingReadiness=maybe",
         "invalid value of PodSchedulingReadiness=maybe, err: strconv.ParseBool: parsing "
         "\"maybe\": invalid syntax"},
        {"SidecarContainers=true", "feature gate SidecarContainers=true is not implemented by "
                                   "stickyvm-scheduler (only its v1.28 default, false)"},
        {"AllAlpha=true", "feature gate DynamicResourceAllocation=true is not implemented by "
                          "stickyvm-scheduler (only its v1.28 default, false)"},
    };
    char err[1024];
    (void)state;

    assert_int_equal(sched_features_apply("PodSchedulingReadiness=false", err, sizeof(err)),
                     KUBE_OK);
    for (size_t i = 0; i < N(cases); i++) {
        err[0] = '\0';
        assert_int_equal(sched_features_check(cases[i].spec, err, sizeof(err)), KUBE_ECONFIG);
        assert_string_equal(err, cases[i].want);
        assert_int_equal(sched_features_apply(cases[i].spec, err, sizeof(err)), KUBE_ECONFIG);
    }
    /* a refused spec changes nothing */
    assert_false(sched_feature_enabled(SCHED_FEATURE_POD_SCHEDULING_READINESS));
}

/* ------------------------------------------------------------------ */
/* Parsing the scheduler's sets                                        */
/* ------------------------------------------------------------------ */

/* Parses argv into o (initialised here) as main() does, without the
 * Global set. */
static int parse(sched_options *o, int argc, char **argv, char *err, size_t errlen)
{
    kube_flag_set sets[KUBE_CLI_MAX_SETS];
    kube_flags_hooks hooks = {NULL, NULL, sched_options_seen, o};
    size_t n;

    assert_int_equal(sched_options_init(o), KUBE_OK);
    n = sched_options_flag_sets(o, sets, N(sets));
    return kube_flag_sets_parse(sets, n, argc, argv, &hooks, err, errlen);
}

static void flags_parse_with_kubes_syntax(void **state)
{
    sched_options o;
    char err[1024] = "";
    char *argv[] = {"s",
                    "--feature-gates=PodSchedulingReadiness=false",
                    "--feature-gates",
                    "MinDomainsInPodTopologySpread=false",
                    "--kube-api-qps=12.5",
                    "--kube-api-burst",
                    "7",
                    "--pod-max-in-unschedulable-pods-duration=90s",
                    "--master=https://10.0.0.1:6443",
                    "--contention-profiling=false"};
    (void)state;

    assert_int_equal(parse(&o, N(argv), argv, err, sizeof(err)), KUBE_OK);
    /* repeated --feature-gates add up, as pflag's mapStringBool */
    assert_string_equal(o.feature_gates,
                        "PodSchedulingReadiness=false,MinDomainsInPodTopologySpread=false");
    assert_true(o.qps == 12.5);
    assert_int_equal(o.burst, 7);
    assert_int_equal(o.pod_max_in_unschedulable_ms, 90000);
    assert_string_equal(o.master, "https://10.0.0.1:6443");
    assert_true(sched_options_changed(&o, "kube-api-qps"));
    assert_false(sched_options_changed(&o, "kube-api-content-type"));
    assert_false(sched_options_changed(&o, "profiling"));
    assert_int_equal(o.profiling, 1); /* default */
    sched_options_free(&o);

    /* defaults */
    assert_int_equal(parse(&o, 1, argv, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.pod_max_in_unschedulable_ms, 5 * 60 * 1000);
    assert_true(o.qps == 50);
    assert_int_equal(o.burst, 100);
    assert_string_equal(o.content_type, "application/json");
    sched_options_free(&o);
}

static void flag_errors(void **state)
{
    static const struct {
        const char *arg, *want;
    } cases[] = {
        {"--kube-api-content-type=application/vnd.kubernetes.protobuf",
         "invalid argument \"application/vnd.kubernetes.protobuf\" for "
         "\"--kube-api-content-type\" flag: stickyvm-scheduler speaks JSON only: the content "
         "type must be \"application/json\""},
        {"--kube-api-qps=fast", "invalid argument \"fast\" for \"--kube-api-qps\" flag: "
                                "strconv.ParseFloat: parsing \"fast\": invalid syntax"},
        {"--feature-gates=Nope=true", "invalid argument \"Nope=true\" for \"--feature-gates\" "
                                      "flag: unrecognized feature gate: Nope (known: AllAlpha"},
        {"--lock-object-name=x", "unknown flag: --lock-object-name=x"},
    };
    (void)state;

    for (size_t i = 0; i < N(cases); i++) {
        sched_options o;
        char err[1024] = "";
        char *argv[] = {"s", (char *)cases[i].arg};
        assert_int_equal(parse(&o, 2, argv, err, sizeof(err)), KUBE_ECONFIG);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)))
            fail_msg("got \"%s\", want \"%s...\"", err, cases[i].want);
        sched_options_free(&o);
    }
}

/* ------------------------------------------------------------------ */
/* Precedence over the configuration                                   */
/* ------------------------------------------------------------------ */

static char config_path[64];

static int write_config_file(void **state)
{
    static const char yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "clientConnection:\n"
                               "  kubeconfig: /from/file\n"
                               "  qps: 7\n"
                               "leaderElection:\n"
                               "  leaseDuration: 30s\n"
                               "enableProfiling: false\n";
    int fd;
    (void)state;

    snprintf(config_path, sizeof(config_path), "/tmp/sched-options-XXXXXX");
    fd = mkstemp(config_path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, yaml, sizeof(yaml) - 1), (ssize_t)(sizeof(yaml) - 1));
    close(fd);
    return 0;
}

static int remove_config_file(void **state)
{
    (void)state;
    unlink(config_path);
    return 0;
}

/* The configuration of argv, the log lines in *logs (caller frees). */
static sched_config *config_of(int argc, char **argv, char **logs)
{
    sched_options o;
    sched_config *cfg = NULL;
    char err[1024] = "";
    size_t len = 0;
    FILE *f = open_memstream(logs, &len);

    assert_int_equal(parse(&o, argc, argv, err, sizeof(err)), KUBE_OK);
    klog_testing_set_output(f);
    if (sched_options_config(&o, &cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("%s", err);
    klog_testing_set_output(NULL);
    fclose(f);
    sched_options_free(&o);
    return cfg;
}

static void deprecated_flags_without_config(void **state)
{
    char *argv[] = {"s",
                    "--kubeconfig=/from/flag",
                    "--kube-api-qps=9",
                    "--kube-api-burst=3",
                    "--kube-api-content-type=application/json",
                    "--profiling=false",
                    "--contention-profiling=false",
                    "--leader-elect=false"};
    char *logs = NULL;
    sched_config *cfg;
    (void)state;

    cfg = config_of(N(argv), argv, &logs);
    assert_string_equal(cfg->client_connection.kubeconfig, "/from/flag");
    assert_true(cfg->client_connection.qps == 9);
    assert_int_equal(cfg->client_connection.burst, 3);
    assert_int_equal(cfg->enable_profiling, 0);
    assert_int_equal(cfg->enable_contention_profiling, 0);
    assert_int_equal(cfg->leader_election.leader_elect, 0);
    assert_string_equal(logs, "");
    sched_config_free(cfg);
    free(logs);

    /* flags not given leave the defaults */
    cfg = config_of(1, argv, &logs);
    assert_string_equal(cfg->client_connection.kubeconfig, "");
    assert_true(cfg->client_connection.qps == 50);
    assert_int_equal(cfg->enable_profiling, 1);
    assert_int_equal(cfg->leader_election.leader_elect, 1);
    sched_config_free(cfg);
    free(logs);
}

static void config_file_wins_over_deprecated_flags(void **state)
{
    char config[96];
    char *argv[] = {"s",
                    config,
                    "--kubeconfig=/from/flag",
                    "--kube-api-qps=9",
                    "--profiling",
                    "--pod-max-in-unschedulable-pods-duration=1m",
                    "--leader-elect=false"};
    char *logs = NULL;
    sched_config *cfg;
    (void)state;

    snprintf(config, sizeof(config), "--config=%s", config_path);
    cfg = config_of(N(argv), argv, &logs);
    /* the deprecated flags are ignored, and a warning names them */
    assert_string_equal(cfg->client_connection.kubeconfig, "/from/file");
    assert_true(cfg->client_connection.qps == 7);
    assert_int_equal(cfg->enable_profiling, 0);
    assert_int_equal(logs[0], 'W');
    assert_non_null(strstr(logs, "ignoring --kube-api-qps, --kubeconfig, --profiling: deprecated "
                                 "flags are ignored when a config file is specified in --config"));
    assert_null(strstr(logs, "pod-max"));
    /* the leader-election flags still apply; the file's other fields stay */
    assert_int_equal(cfg->leader_election.leader_elect, 0);
    assert_int_equal(cfg->leader_election.lease_duration_ms, 30000);
    sched_config_free(cfg);
    free(logs);

    /* no deprecated flag given: nothing to say */
    cfg = config_of(2, argv, &logs);
    assert_string_equal(logs, "");
    assert_int_equal(cfg->leader_election.leader_elect, 1);
    sched_config_free(cfg);
    free(logs);
}

static void leader_election_flags_are_validated(void **state)
{
    sched_options o;
    sched_config *cfg = NULL;
    char err[1024] = "";
    char *argv[] = {"s", "--leader-elect-lease-duration=5s"};
    char *lock[] = {"s", "--leader-elect-resource-lock=endpoints"};
    (void)state;

    assert_int_equal(parse(&o, 2, argv, err, sizeof(err)), KUBE_OK);
    assert_int_equal(sched_options_config(&o, &cfg, err, sizeof(err)), KUBE_ECONFIG);
    assert_null(cfg);
    assert_string_equal(err, "flags: leaderElection.leaseDuration: LeaseDuration must be greater "
                             "than RenewDeadline (10s)");
    sched_options_free(&o);
    assert_int_equal(parse(&o, 2, lock, err, sizeof(err)), KUBE_OK);
    assert_int_equal(sched_options_config(&o, &cfg, err, sizeof(err)), KUBE_ECONFIG);
    assert_non_null(strstr(err, "leaderElection.resourceLock"));
    sched_options_free(&o);
}

/* ------------------------------------------------------------------ */
/* --help                                                              */
/* ------------------------------------------------------------------ */

static void help_lists_every_flag_in_its_section(void **state)
{
    /* kube-scheduler v1.28's flags (but for the authentication,
     * authorization and metrics sections), by section, in order */
    static const char *const want[] = {
        "\nMisc flags:\n",
        "--config string",
        "--master string",
        "--write-config-to string",
        "\nSecure serving flags:\n",
        "--bind-address",
        "--secure-port int",
        "--tls-cert-file",
        "--tls-private-key-file",
        "\nDeprecated flags:\n",
        "--contention-profiling ",
        "--kube-api-burst int32",
        "--kube-api-content-type string",
        "--kube-api-qps float32",
        "--kubeconfig string",
        "--pod-max-in-unschedulable-pods-duration duration",
        "--profiling ",
        "\nLeader election flags:\n",
        "--leader-elect ",
        "--leader-elect-lease-duration duration",
        "--leader-elect-renew-deadline duration",
        "--leader-elect-resource-lock string",
        "--leader-elect-resource-name string",
        "--leader-elect-resource-namespace string",
        "--leader-elect-retry-period duration",
        "\nFeature gate flags:\n",
        "--feature-gates mapStringBool",
        "PodSchedulingReadiness=true|false (BETA - default=true)",
        "\nLogs flags:\n",
        "--logging-format string",
        "-v, --v Level",
        "--vmodule pattern=N,...",
        "\nGlobal flags:\n",
        "-h, --help",
        "--version version[=true]",
    };
    sched_options o;
    kube_flag_set sets[KUBE_CLI_MAX_SETS];
    kube_cli cli = {"stickyvm-scheduler", "", sets, 0, NULL, NULL};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const char *at;
    (void)state;

    assert_int_equal(sched_options_init(&o), KUBE_OK);
    cli.nsets = sched_options_flag_sets(&o, sets, N(sets));
    kube_cli_usage(&cli, f);
    fclose(f);
    at = text;
    for (size_t i = 0; i < N(want); i++) {
        const char *next = strstr(at, want[i]);
        if (!next)
            fail_msg("\"%s\" missing or out of order in:\n%s", want[i], text);
        at = next;
    }
    /* every flag of every set is listed */
    for (size_t s = 0; s < cli.nsets; s++)
        for (size_t i = 0; i < sets[s].n; i++) {
            char name[96];
            snprintf(name, sizeof(name), "--%s ", sets[s].flags[i].name);
            assert_non_null(strstr(text, name));
        }
    free(text);
    sched_options_free(&o);
}

int test_group_sched_options(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, reset_gates, reset_gates)
    const struct CMUnitTest tests[] = {
        T(feature_gates_defaults_and_values),   T(feature_gates_errors),
        T(flags_parse_with_kubes_syntax),       T(flag_errors),
        T(deprecated_flags_without_config),     T(config_file_wins_over_deprecated_flags),
        T(leader_election_flags_are_validated), T(help_lists_every_flag_in_its_section),
    };
#undef T
    return cmocka_run_group_tests_name("sched_options", tests, write_config_file,
                                       remove_config_file);
}
