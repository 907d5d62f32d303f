#!/usr/bin/env bash
# scripts/demo.sh - stickyvm in one command, on a fresh Debian bookworm
# machine: installs the dependencies (scripts/deps.sh), builds, starts a
# local cluster - the API emulator with 4 nodes, stickyvm installed into it
# with `kubectl apply -k manifests/`, stickyvm-apiserver behind the
# emulator's aggregation layer, two leader-elected stickyvm-scheduler
# replicas, and a stand-in for KubeVirt's virt-controller - creates a
# handful of VirtualMachines and walks through the story on screen:
#
#   1. first placement: each VM's pod is scheduled and the VM pinned there,
#   2. restarts: deleted pods come back to the pinned node,
#   3. maintenance: `kubectl drain` of a pinned VM's node - the VM waits
#      for its disk (kubectl describe and `kubectl stickyvm why` say why),
#      comes back on uncordon, or moves with `kubectl stickyvm pin`
#      (the kubectl-stickyvm built here is first on PATH),
#   4. pin to another node through the aggregated API (kubectl get --raw),
#   5. unpin, after which the VM starts anywhere and is pinned again,
#   6. what kubectl shows for discovery and for errors,
#   7. a node is lost: e2e/lib/node-lifecycle.sh stops a pinned VM's node
#      as the node lifecycle controller marks it (Ready Unknown, the
#      unreachable taints); `kubectl get vmpin` shows it; a real Prometheus
#      (Debian's prometheus, on loopback, scraping both daemons' secure
#      ports with a bearer token) evaluates the monitoring component's
#      alert rules; `kubectl stickyvm evacuate NODE --to OTHER --dry-run`,
#      then for real, and the VM runs on OTHER.
#
# The stand-in also plays the kubelet: bound pods become Running with a
# pod IP, so `kubectl get pods -o wide` looks as on a cluster; and it sets
# the VMs' status as virt-controller does, so `kubectl get vm` shows
# Running, or ErrorUnschedulable while a VM waits for its node.
#
# Then it prints the kubectl commands to try against the running demo and
# keeps it running until Ctrl-C, which stops everything it started.
#
# Ctrl-C stops it all and prints "stopped" (exit status 130); an emulator
# that stops on its own is an error (exit status 1) whose logs are kept.
#
# Usage: scripts/demo.sh [--once] [--cluster-only] [--no-deps] [--build-dir DIR] [--pause SECONDS]
#   --once        stop after the walk-through (the tests use it)
#   --cluster-only  start the local cluster and keep it running, without the
#                 walk-through (scripts/test-demo.sh's Ctrl-C checks use it)
#   --no-deps     do not run scripts/deps.sh
#   --build-dir   where to build (default build/)
#   --pause       seconds between steps (default 1; 0 with --once)
# Environment: DEMO_RULES_DIR (default manifests/components/monitoring/):
#   where chapter 7 looks for the Prometheus rules: the monitoring
#   component's PrometheusRule objects (their spec is the rule file) and
#   plain rule files (YAML starting with "groups:"); without any, the alert
#   step is skipped with a note.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
# shellcheck source=../e2e/lib/common.sh
source e2e/lib/common.sh
# shellcheck source=../e2e/lib/local.sh
source e2e/lib/local.sh

# Prints the header comment above (the lines after the shebang that start
# with '#'), without the '# ' and without the script's own code.
usage() {
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
}

once=0
cluster_only=0
deps=1
build_dir=build
pause=""
while [ $# -gt 0 ]; do
    case $1 in
        --once) once=1 ;;
        --cluster-only) cluster_only=1 ;;
        --no-deps) deps=0 ;;
        --build-dir) build_dir=${2:?}; shift ;;
        --build-dir=*) build_dir=${1#*=} ;;
        --pause) pause=${2:?}; shift ;;
        --pause=*) pause=${1#*=} ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done
[ -n "$pause" ] || { [ "$once" = 1 ] && pause=0 || pause=1; }

NS=demo
VMS="vm-web vm-db vm-cache vm-batch"

# ---- presentation -------------------------------------------------------------

step() { printf '\n==> %s\n' "$*"; sleep "$pause"; }
say() { printf '    %s\n' "$*"; }
# show COMMAND...: prints "$ COMMAND" and its indented output.
show() {
    printf '    $ %s\n' "$*"
    "$@" 2>&1 | grep -v 'memcache.go' | sed 's/^/      /'
}
# shown TEXT COMMAND...: the same, printing TEXT as the command line.
shown() {
    printf '    $ %s\n' "$1"
    shift
    "$@" 2>&1 | grep -v 'memcache.go' | sed 's/^/      /'
}
raw_show() { # PATH [flags]
    printf '    $ kubectl %sget --raw "%s"\n' "${2:+$2 }" "$1"
    # shellcheck disable=SC2086
    kubectl ${2:-} get --raw "$1" 2>&1 | grep -v 'memcache.go' | sed 's/^/      /'
    echo
}

# capture TEXT COMMAND...: as shown, keeping the output in OUT.
capture() {
    printf '    $ %s\n' "$1"
    shift
    OUT=$("$@" 2>&1 | grep -v 'memcache.go')
    printf '%s\n' "$OUT" | sed 's/^/      /'
}
# expect WHAT STRING...: stops the demo unless OUT holds every STRING.
expect() {
    local what=$1 s
    shift
    for s in "$@"; do
        [[ $OUT == *"$s"* ]] || die "$what: the output lacks \"$s\""
    done
}

PINS_COLUMNS='VM:.metadata.name,PINNED TO:.metadata.annotations.stickyvm\.io/node'
pins() {
    shown "kubectl -n $NS get vm -o custom-columns='$PINS_COLUMNS'" \
        kubectl -n "$NS" get virtualmachines -o custom-columns="$PINS_COLUMNS"
}
pods_wide() { # [VM]
    if [ -n "${1:-}" ]; then
        capture "kubectl -n $NS get pods -l vm.kubevirt.io/name=$1 -o wide" \
            kubectl -n "$NS" get pods -l "vm.kubevirt.io/name=$1" -o wide
    else
        capture "kubectl -n $NS get pods -o wide" kubectl -n "$NS" get pods -o wide
    fi
}

# vm_running VM: the VM's one pod is Running (the stand-in plays the kubelet).
vm_running() {
    [ "$(kubectl -n "$NS" get pods -l "vm.kubevirt.io/name=$1" \
        -o jsonpath='{.items[*].status.phase}' 2>/dev/null)" = Running ]
}

# wait_pod VM [OLD_POD]: the VM's bound pod other than OLD_POD ("pod node").
wait_pod() {
    local end=$((SECONDS + 60)) line
    while [ "$SECONDS" -lt "$end" ]; do
        line=$(vm_bound_pod "$NS" "$1")
        if [ -n "$line" ] && [ "${line%% *}" != "${2:-}" ]; then
            echo "$line"
            return 0
        fi
        sleep 0.3
    done
    die "VM $1 got no pod within 60s (see $LOCAL_DIR/*.log)"
}

vm_pinned() { [ -n "$(vm_pin "$NS" "$1")" ]; }

# restart VM [EXPECTED_NODE]: deletes its pod, prints where the next one
# landed (and stops the demo when that is not EXPECTED_NODE).
restart() {
    local old new
    old=$(wait_pod "$1")
    kubectl -n "$NS" delete pod "${old%% *}" --wait=false >/dev/null
    new=$(wait_pod "$1" "${old%% *}")
    say "deleted ${old%% *} (on ${old#* }) -> ${new%% *} on ${new#* }   (pin: $(vm_pin "$NS" "$1"))"
    [ -z "${2:-}" ] || [ "${new#* }" = "$2" ] || die "$1's pod landed on ${new#* }, not on $2"
}

# ---- maintenance: kubectl drain -----------------------------------------------

# wait_pending VM: the name of the VM's pod that waits unbound, once the
# scheduler has said why (a FailedScheduling event about it).
wait_pending() {
    local end=$((SECONDS + 60)) pod
    while [ "$SECONDS" -lt "$end" ]; do
        pod=$(vm_pending_pod "$NS" "$1")
        if [ -n "$pod" ] && kubectl -n "$NS" get events.events.k8s.io \
            -o jsonpath='{range .items[?(@.reason=="FailedScheduling")]}{.regarding.name}{"\n"}{end}' |
            grep -qx "$pod"; then
            echo "$pod"
            return 0
        fi
        sleep 0.3
    done
    die "VM $1 has no pending pod with a FailedScheduling event within 60s"
}

describe_events() { # POD
    kubectl -n "$NS" describe pod "$1" | sed -n '/^Events:/,$p'
}

# vm_status_is VM STATUS: the VM's printableStatus (kubectl get vm's
# STATUS) is STATUS.
vm_status_is() {
    [ "$(kubectl -n "$NS" get vm "$1" -o jsonpath='{.status.printableStatus}')" = "$2" ]
}

# drain NODE VM: drains NODE, shows the VM's new pod waiting; its name in
# PENDING.
drain() {
    local old
    old=$(wait_pod "$2") || exit 1
    capture "kubectl drain $1 --ignore-daemonsets --delete-emptydir-data" \
        kubectl drain "$1" --ignore-daemonsets --delete-emptydir-data
    expect "kubectl drain" "node/$1 cordoned" "pod/${old%% *} evicted" "node/$1 drained"
    PENDING=$(wait_pending "$2") || exit 1
    pods_wide "$2"
    expect "the new pod of $2" "$PENDING" Pending
    wait_until 30 "VM $2 ErrorUnschedulable" vm_status_is "$2" ErrorUnschedulable ||
        die "VM $2 is not ErrorUnschedulable"
    capture "kubectl -n $NS get vm $2" kubectl -n "$NS" get vm "$2"
    expect "kubectl get vm $2" ErrorUnschedulable
}

# bound_to VM NODE: waits for the VM's pod to run on NODE and shows it.
bound_to() {
    local pod
    pod=$(wait_pod "$1") || exit 1
    [ "${pod#* }" = "$2" ] || die "$1's pod landed on ${pod#* }, not on $2"
    wait_until 30 "the pod of $1 Running" vm_running "$1" || die "the pod of $1 does not run"
    pods_wide "$1"
    expect "the pod of $1" Running "$2"
}

# The product's story: a node goes down for maintenance and the VM must
# come back to its disk - or be moved on purpose.
chapter_maintenance() {
    local vm=vm-web node target
    node=$(vm_pin "$NS" "$vm")
    target=$(schedulable_nodes | grep -vx "$node" | head -n1)
    step "3. Maintenance: $node, where $vm's disk is, is drained; $vm waits for it"
    wait_until 30 "the pod of $vm Running" vm_running "$vm" || die "the pod of $vm does not run"
    drain "$node" "$vm"
    say "kubectl describe says why it waits, and how to move it:"
    capture "kubectl -n $NS describe pod $PENDING | sed -n '/^Events:/,\$p'" describe_events "$PENDING"
    expect "kubectl describe pod" FailedScheduling "pinned to node $node" "kubectl stickyvm pin $vm -n $NS --node"
    capture "kubectl stickyvm why $vm -n $NS" kubectl stickyvm why "$vm" -n "$NS"
    expect "kubectl stickyvm why" "Pending" "$node (Ready,SchedulingDisabled)" "kubectl uncordon $node"
    say "the maintenance is over: uncordon, and $vm starts again on $node:"
    capture "kubectl uncordon $node" kubectl uncordon "$node"
    expect "kubectl uncordon" "node/$node uncordoned"
    bound_to "$vm" "$node"

    say "if $node had to stay down: move $vm on purpose (bringing its disk is up to you):"
    drain "$node" "$vm"
    capture "kubectl stickyvm pin $vm --node $target -n $NS" \
        kubectl stickyvm pin "$vm" --node "$target" -n "$NS"
    expect "kubectl stickyvm pin" "pinned to $target (was $node)"
    bound_to "$vm" "$target"
    capture "kubectl uncordon $node" kubectl uncordon "$node"
    expect "kubectl uncordon" "node/$node uncordoned"
}

# ---- a node is lost: Prometheus and evacuate ------------------------------------

DEMO_RULES_DIR=${DEMO_RULES_DIR:-manifests/components/monitoring}
PROM_PORT=""

# The monitoring component's rules: PrometheusRule objects and plain
# rule files ("groups:").
rule_files() {
    grep -l -e '^groups:' -e '^kind: PrometheusRule' "$DEMO_RULES_DIR"/*.yaml \
        "$DEMO_RULES_DIR"/*/*.yaml 2>/dev/null
}

# A bearer token for Prometheus: the emulator's control API issues one for
# the ServiceAccount monitoring/prometheus (on a cluster: its token); RBAC
# lets it GET /metrics of both daemons (docs/operations.md).
prometheus_token() {
    printf '{"kind":"token","user":"system:serviceaccount:monitoring:prometheus","groups":["system:serviceaccounts","system:serviceaccounts:monitoring","system:authenticated"]}' |
        kubectl create --raw /emulator/v1/identities -f - | jq -r .token >"$LOCAL_DIR/prometheus/token" ||
        die "the emulator issued no token for Prometheus"
    chmod 600 "$LOCAL_DIR/prometheus/token"
    kubectl apply -f - >/dev/null <<EOF || die "creating the metrics reader role failed"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: stickyvm-metrics-reader
rules:
  - nonResourceURLs: ["/metrics", "/metrics/resources"]
    verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: prometheus-stickyvm-metrics-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: stickyvm-metrics-reader
subjects:
  - kind: ServiceAccount
    name: prometheus
    namespace: monitoring
EOF
}

# prometheus_config RULES...: scrapes stickyvm-apiserver (its serving
# certificate checked against the demo's CA) and both scheduler replicas
# (self-signed in memory, as a default install: not verified), every 2 s.
prometheus_config() {
    local dir=$LOCAL_DIR/prometheus f n targets=""
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        targets+="${targets:+, }'127.0.0.1:$(cat "$LOCAL_DIR/scheduler-$n.port")'"
    done
    cat <<EOF
global:
  scrape_interval: 2s
  evaluation_interval: 2s
rule_files:$([ $# -gt 0 ] || echo " []")
$(for f in "$@"; do echo "  - $f"; done)
scrape_configs:
  - job_name: stickyvm-apiserver
    scheme: https
    authorization:
      credentials_file: $dir/token
    tls_config:
      ca_file: $LOCAL_DIR/certs/ca.crt
      server_name: stickyvm-apiserver.stickyvm-system.svc
    static_configs:
      - targets: ['127.0.0.1:$(cat "$LOCAL_DIR/apiserver.port")']
  - job_name: stickyvm-scheduler
    scheme: https
    authorization:
      credentials_file: $dir/token
    tls_config:
      insecure_skip_verify: true
    static_configs:
      - targets: [$targets]
EOF
}

# The demo's copy of the rules: every "for:" is 0s (see chapter 7). A
# PrometheusRule's spec is a rule file: kubectl reads it locally as JSON
# (which Prometheus reads as YAML), as scripts/test-monitoring.sh does.
demo_rules() { # SOURCE DEST
    if grep -q '^kind: PrometheusRule' "$1"; then
        kubectl annotate --local -f "$1" t=1 -o jsonpath='{.spec}' |
            sed 's/"for":"[^"]*"/"for":"0s"/g' >"$2"
    else
        sed 's/^\( *\)for: .*/\1for: 0s/' "$1" >"$2"
    fi
}

# start_prometheus: Prometheus on loopback with the demo's rule copies.
start_prometheus() {
    local dir=$LOCAL_DIR/prometheus f rules=()
    mkdir -p "$dir/data"
    prometheus_token
    for f in $(rule_files); do
        demo_rules "$f" "$dir/$(basename "$f")"
        rules+=("$dir/$(basename "$f")")
    done
    prometheus_config "${rules[@]}" >"$dir/prometheus.yml"
    if [ "${#rules[@]}" -gt 0 ]; then
        promtool check rules "${rules[@]}" >"$dir/promtool.log" 2>&1 ||
            die "promtool check rules failed: $(cat "$dir/promtool.log")"
    fi
    PROM_PORT=$(free_port) || die "no free port"
    local_start prometheus "$LOCAL_DIR/prometheus.log" prometheus \
        --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$PROM_PORT"
    wait_until 30 "Prometheus ready" curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" ||
        die "Prometheus did not start: $(tail -5 "$LOCAL_DIR/prometheus.log")"
}

prom_api() { curl -s "http://127.0.0.1:$PROM_PORT/api/v1/$1"; }
# targets_up: every scrape target's last scrape succeeded.
targets_up() {
    [ "$(prom_api targets | jq '[.data.activeTargets[] | select(.health == "up")] | length')" = \
        $((LOCAL_SCHEDULERS + 1)) ]
}
# The jq programs of the targets and alerts steps, printed whole so that
# the command shown can be pasted (no single quote in them).
TARGETS_JQ='.data.activeTargets[] | "\(.labels.job) \(.scrapeUrl) \(.health) \(.lastError)"'
ALERTS_JQ='.data.alerts[] | "\(.labels.alertname) \(.state) \(.labels | del(.alertname) | tostring)"'
targets() { prom_api targets | jq -r "$TARGETS_JQ"; }
alerts() { prom_api alerts | jq -r "$ALERTS_JQ"; }
alert_firing() { # NAME
    prom_api alerts | jq -e --arg n "$1" '.data.alerts[] | select(.labels.alertname == $n and .state == "firing")' >/dev/null
}

# show_alert NODE: what Prometheus says, when the rules are there.
show_alert() {
    if [ -z "$(rule_files)" ]; then
        say "(no Prometheus rule file in $DEMO_RULES_DIR/ yet: the alert step is skipped;"
        say " the monitoring component adds it; DEMO_RULES_DIR points elsewhere)"
        return 0
    fi
    say "the rules wait (their 'for:') so that a node's reboot pages nobody; the demo cannot wait,"
    say "so Prometheus loaded a copy of them with every 'for:' set to 0s: the alert fires as soon as"
    say "its expression holds, where the real rule would show it pending for that long first:"
    wait_until 60 "StickyVMPinnedNodeNotReady firing" alert_firing StickyVMPinnedNodeNotReady ||
        die "StickyVMPinnedNodeNotReady did not fire within 60s: $(alerts)"
    capture "curl -s http://127.0.0.1:$PROM_PORT/api/v1/alerts | jq -r '$ALERTS_JQ'" alerts
    expect "Prometheus's alerts" "StickyVMPinnedNodeNotReady firing"
}

# vmpin_status VM: status.nodeStatus of the VM's virtualmachinepins object.
vmpin_status() {
    kubectl -n "$NS" get vmpin "$1" -o jsonpath='{.status.nodeStatus}' 2>/dev/null
}

# The story's hardest moment: the node holding a VM goes away. Nothing
# moves by itself; a person evacuates it.
chapter_node_lost() {
    local vm=vm-cache node target pod
    node=$(vm_pin "$NS" "$vm")
    target=$(schedulable_nodes | grep -vx "$node" | head -n1)
    step "7. A node is lost: $node, where $vm runs, stops answering"
    start_prometheus
    say "Prometheus (pid $(local_pid prometheus), http://127.0.0.1:$PROM_PORT) scrapes both daemons' secure ports"
    say "with a bearer token they review with the emulator (TokenReview, then a SubjectAccessReview for /metrics):"
    wait_until 30 "every target up" targets_up || die "Prometheus's targets are not up: $(targets)"
    capture "curl -s http://127.0.0.1:$PROM_PORT/api/v1/targets | jq -r '$TARGETS_JQ'" targets
    expect "Prometheus's targets" "stickyvm-apiserver https://127.0.0.1" "stickyvm-scheduler https://127.0.0.1" " up "
    pod=$(wait_pod "$vm") || exit 1
    say "its kubelet stops posting status; the node lifecycle controller (here a stand-in) marks the node:"
    capture "e2e/lib/node-lifecycle.sh lose $node" e2e/lib/node-lifecycle.sh lose "$node"
    expect "node-lifecycle.sh" "node/$node lost"
    capture "kubectl get nodes" kubectl get nodes
    expect "kubectl get nodes" "$node   NotReady"
    capture "kubectl -n $NS get vmpin" kubectl -n "$NS" get vmpin
    if [ -n "$(vmpin_status "$vm")" ]; then
        expect "kubectl get vmpin" Unknown
        capture "kubectl stickyvm list -n $NS --node-status NotReady,Unknown,Missing" \
            kubectl stickyvm list -n "$NS" --node-status NotReady,Unknown,Missing
        expect "kubectl stickyvm list --node-status" "$vm" Unknown
    else
        say "(this stickyvm-apiserver does not report the node's state, status.nodeStatus, yet)"
    fi
    show_alert

    say "nothing moves by itself: $vm's data may be on $node. Preview moving every VM pinned there:"
    capture "kubectl stickyvm evacuate $node --to $target -n $NS --dry-run" \
        kubectl stickyvm evacuate "$node" --to "$target" -n "$NS" --dry-run
    expect "evacuate --dry-run" "VM" "FROM" "TO" "RESULT" "$vm" "Repinned (server dry run)"
    [ "$(vm_pin "$NS" "$vm")" = "$node" ] || die "evacuate --dry-run moved $vm"
    capture "kubectl stickyvm evacuate $node --to $target -n $NS" \
        kubectl stickyvm evacuate "$node" --to "$target" -n "$NS"
    expect "evacuate" "$vm" "Repinned"
    say "its pod on $node never finishes (no kubelet confirms it); once $node is known to be off,"
    say "delete it for good, and virt-controller starts $vm again, on $target:"
    capture "kubectl -n $NS delete pod ${pod%% *} --grace-period=0 --force" \
        kubectl -n "$NS" delete pod "${pod%% *}" --grace-period=0 --force
    bound_to "$vm" "$target"
    [ "$(vm_pin "$NS" "$vm")" = "$target" ] || die "$vm is not pinned to $target"
    pins
    say "$node comes back (its kubelet posts status again):"
    capture "e2e/lib/node-lifecycle.sh restore $node" e2e/lib/node-lifecycle.sh restore "$node"
}

# plugin_tour: the kubectl plugin over the same API, the commands of
# docs/stickyvm.md's "Real output (the demo)" (scripts/check-doc-output.sh
# compares them with this run's output).
plugin_tour() {
    local other
    other=$(schedulable_nodes | grep -vx "$(vm_pin "$NS" vm-db)" | head -n1)
    say "the kubectl plugin, kubectl stickyvm, over the same API:"
    capture "kubectl stickyvm list -A" kubectl stickyvm list -A
    expect "kubectl stickyvm list -A" NAMESPACE NODE-STATUS vm-db
    capture "kubectl stickyvm pin vm-db -n $NS --node $other --dry-run" \
        kubectl stickyvm pin vm-db -n "$NS" --node "$other" --dry-run
    expect "pin --dry-run" "pinned to $other" "(server dry run)"
    capture "kubectl stickyvm pin vm-db -n $NS --node node-99" \
        kubectl stickyvm pin vm-db -n "$NS" --node node-99
    expect "pin --node node-99" "Error from server (Invalid)"
    capture "kubectl stickyvm pin vm-nope -n $NS --node $other" \
        kubectl stickyvm pin vm-nope -n "$NS" --node "$other"
    expect "pin vm-nope" "Error from server (NotFound)"
    capture "kubectl stickyvm unpin vm-db -n $NS --dry-run" kubectl stickyvm unpin vm-db -n "$NS" --dry-run
    expect "unpin --dry-run" "(server dry run)"
    capture "kubectl stickyvm version" kubectl stickyvm version
    expect "kubectl stickyvm version" "kubectl-stickyvm v" "Server Version: v"
}

vm_yaml() { # NAME
    cat <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: $1
  namespace: $NS
spec:
  runStrategy: Always
  template:
    spec:
      schedulerName: stickyvm
      domain:
        resources:
          requests:
            memory: 64Mi
EOF
}

# ---- lifecycle ---------------------------------------------------------------------

# cleanup CODE: stops everything the demo started and exits CODE. 0: the
# walk-through is over; 130: Ctrl-C (or SIGTERM), the documented way out:
# quiet, one line "stopped"; anything else: a failure, whose logs stay.
cleanup() {
    local code=${1:-0}
    trap - EXIT INT TERM
    [ -n "${LOCAL_DIR:-}" ] || { [ "$code" != 130 ] || echo stopped; exit "$code"; }
    [ "$code" = 130 ] ||
        printf '\nstopping the demo (emulator, stickyvm-apiserver, stickyvm-scheduler x2, virt-controller stand-in, Prometheus)\n'
    [ ! -e "$LOCAL_DIR/pids/prometheus" ] || local_stop prometheus 10
    local_down
    if [ "$code" = 0 ] || [ "$code" = 130 ]; then
        rm -rf "$LOCAL_DIR"
    else
        printf 'the logs are kept in %s/\n' "$LOCAL_DIR" >&2
    fi
    [ "$code" != 130 ] || printf '\nstopped\n'
    exit "$code"
}
trap 'cleanup 130' INT TERM
trap 'cleanup $?' EXIT

# emulator_gone: the emulator ended. It exits 0 only when signalled: Ctrl-C
# reaches every process of the demo, so that is the way out, quietly (even
# when it noticed before this shell's own trap ran); any other end is an
# error, its log kept.
emulator_gone() {
    local pid=$1 status=0
    wait "$pid" 2>/dev/null || status=$?
    [ "$status" != 0 ] || cleanup 130
    die "the emulator stopped (exit status $status; see $LOCAL_DIR/emulator.log)"
}

if [ "$deps" = 1 ]; then
    step "Installing the dependencies (scripts/deps.sh)"
    scripts/deps.sh || die "scripts/deps.sh failed"
fi
step "Building stickyvm-emulator, stickyvm-scheduler, stickyvm-apiserver and kubectl-stickyvm in $build_dir/"
build_log=${TMPDIR:-/tmp}/stickyvm-demo-build.log
build_start=$SECONDS
{ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
    cmake --build "$build_dir" -j"$(nproc)" --target stickyvm-emulator stickyvm-scheduler \
        stickyvm-apiserver kubectl-stickyvm; } >"$build_log" 2>&1 ||
    die "the build failed after $((SECONDS - build_start))s: see $build_log"
say "built in $((SECONDS - build_start))s (log: $build_log)"

LOCAL_BIN=$(cd "$build_dir" && pwd)
# `kubectl stickyvm` runs the kubectl-stickyvm just built.
[ -x "$LOCAL_BIN/kubectl-stickyvm" ] || die "$LOCAL_BIN/kubectl-stickyvm was not built (see ${TMPDIR:-/tmp}/stickyvm-demo-build.log)"
PATH=$LOCAL_BIN:$PATH
export PATH
LOCAL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/stickyvm-demo.XXXXXX")
LOCAL_NODES=4
step "Starting a local cluster: the API emulator with $LOCAL_NODES nodes, stickyvm installed with kubectl apply -k manifests/"
local_up "$ROOT"
say "kube-apiserver stand-in: $LOCAL_URL (RBAC enforced, aggregation layer on)"
say "stickyvm-apiserver:      pid $(local_pid apiserver), behind APIService v1.subresources.stickyvm.io"
say "stickyvm-scheduler:      pids $(local_pid scheduler-1) and $(local_pid scheduler-2) (leader elected)"
say "logs:                    $LOCAL_DIR/*.log"
show kubectl get nodes
say "(both Deployments show 0/2 READY: here their daemons run as the local processes above, not as pods)"
show kubectl -n stickyvm-system get deployments,serviceaccounts,configmaps
show kubectl get apiservice v1.subresources.stickyvm.io

# keep_running: until Ctrl-C, or until the emulator stops on its own.
keep_running() {
    local emulator_pid
    printf '\nThe demo keeps running; press Ctrl-C to stop it.\n'
    emulator_pid=$(local_pid emulator)
    while :; do
        sleep 1 &
        wait $!
        kill -0 "$emulator_pid" 2>/dev/null || emulator_gone "$emulator_pid"
    done
}
[ "$cluster_only" = 0 ] || keep_running

step "Creating namespace $NS and 4 VirtualMachines with spec.template.spec.schedulerName: stickyvm"
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$NS" | kubectl apply -f - >/dev/null
local_virt_controller "$NS"
say "(a stand-in for KubeVirt's virt-controller creates each VM's VMI and virt-launcher pod)"
for vm in $VMS; do
    vm_yaml "$vm" | kubectl apply -f - | sed 's/^/      /'
done

step "1. First placement: each pod is scheduled by stickyvm-scheduler and the VM is pinned to its node"
for vm in $VMS; do
    wait_pod "$vm" >/dev/null
    wait_until 30 "the pin of $vm" vm_pinned "$vm" || die "VM $vm was not pinned"
    wait_until 30 "the pod of $vm Running" vm_running "$vm" || die "the pod of $vm does not run"
done
pods_wide
expect "kubectl get pods -o wide" Running 10.244.
pins
say "The StickyVM plugin wrote the annotation stickyvm.io/node on each VM in PostBind, with an event:"
PINNED_EVENTS='{range .items[?(@.reason=="Pinned")]}{.regarding.kind}/{.regarding.name}: {.note}{"\n"}{end}'
shown "kubectl -n $NS get events.events.k8s.io -o jsonpath='$PINNED_EVENTS'" \
    kubectl -n "$NS" get events.events.k8s.io -o jsonpath="$PINNED_EVENTS"

step "2. Restarts: vm-db's pod is deleted three times; virt-controller makes a new VMI and pod, the pin brings it back"
for _ in 1 2 3; do restart vm-db "$(vm_pin "$NS" vm-db)"; done

chapter_maintenance

target=$(schedulable_nodes | grep -vx "$(vm_pin "$NS" vm-db)" | head -n1)
step "4. Moving vm-db to $target through the aggregated API (kube-apiserver -> stickyvm-apiserver)"
raw_show "$(raw_path "$NS" vm-db pin "node=$target")"
say "the next restart lands on $target:"
restart vm-db "$target"

step "5. Unpinning vm-db: the next start may land anywhere, and pins the VM there"
raw_show "$(raw_path "$NS" vm-db unpin)"
pins
restart vm-db
wait_until 30 "the new pin of vm-db" vm_pinned vm-db || die "vm-db was not pinned again"
pins

step "6. What kubectl shows"
say "discovery of the aggregated group:"
raw_show "$STICKYVM_GV"
say "pin without ?node= pins to the node the VM's instance runs on (repeating it changes nothing):"
raw_show "$(raw_path "$NS" vm-web pin)"
say "a node that does not exist (422), a VM that does not exist (404), a user without stickyvm-pinner (403):"
raw_show "$(raw_path "$NS" vm-web pin node=node-99)"
raw_show "$(raw_path "$NS" vm-nope pin)"
raw_show "$(raw_path "$NS" vm-web pin)" "--as=alice"
say "bind alice to stickyvm-pinner (manifests/examples/pinner-rolebinding.yaml, here in namespace $NS):"
sed "s/namespace: default/namespace: $NS/" manifests/examples/pinner-rolebinding.yaml |
    kubectl apply -f - | sed 's/^/      /'
raw_show "$(raw_path "$NS" vm-web pin)" "--as=alice"
plugin_tour

chapter_node_lost

step "Try it yourself (in another terminal)"
web_node=$(vm_pin "$NS" vm-web)
other=$(schedulable_nodes | grep -vx "$web_node" | head -n1)
cat <<EOF
    export KUBECONFIG=$KUBECONFIG
    export PATH=$LOCAL_BIN:\$PATH      # the kubectl plugin: kubectl stickyvm
    kubectl stickyvm list -A                                        # every pin
    kubectl stickyvm pin vm-web -n $NS --node $other --dry-run
    kubectl stickyvm why vm-web -n $NS                              # what keeps it from running
    kubectl -n $NS get vm -o custom-columns='VM:.metadata.name,PINNED TO:.metadata.annotations.stickyvm\\.io/node'
    kubectl -n $NS get pods -o wide
    kubectl -n $NS get vm,vmi                                      # KubeVirt's columns
    kubectl -n $NS delete pod -l vm.kubevirt.io/name=vm-web        # comes back to the same node
    kubectl get --raw "$(raw_path "$NS" vm-web pin "node=$other")"
    kubectl get --raw $(raw_path "$NS" vm-web unpin)
    kubectl cordon $web_node; kubectl -n $NS delete pod -l vm.kubevirt.io/name=vm-web
    kubectl -n $NS get events                        # Scheduled, Pinned, FailedScheduling
    kubectl uncordon $web_node
    kubectl drain $web_node --ignore-daemonsets --delete-emptydir-data; kubectl stickyvm why vm-web -n $NS
    kubectl uncordon $web_node
    kubectl -n kube-system get lease stickyvm-scheduler            # which replica leads
    e2e/lib/node-lifecycle.sh lose $web_node; kubectl stickyvm evacuate $web_node --to $other -n $NS --dry-run
    e2e/lib/node-lifecycle.sh restore $web_node
    curl -s http://127.0.0.1:$PROM_PORT/api/v1/alerts                # Prometheus, while the demo runs

    logs: $LOCAL_DIR/{emulator,apiserver,scheduler-1,scheduler-2,virt-controller-$NS}.log
EOF

if [ "$once" = 1 ]; then
    printf '\ndemo walk-through complete\n'
    cleanup 0
fi
keep_running
