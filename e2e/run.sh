#!/usr/bin/env bash
# e2e/run.sh - stickyvm's end-to-end suite, in one command.
#
#   e2e/run.sh                      against a local emulator it starts
#   KUBECONFIG=~/.kube/config e2e/run.sh    against that cluster
#
# Without KUBECONFIG: the API emulator (tests/emulator) with 4 nodes,
# enforcing RBAC from the applied ClusterRoles/Roles and bindings and
# playing kube-apiserver's aggregation layer; stickyvm installed into it
# with `kubectl apply -k manifests/` and scripts/gen-apiserver-certs.sh;
# stickyvm-apiserver and two leader-elected stickyvm-scheduler replicas run
# as local processes with their ServiceAccounts' tokens; the binaries come
# from --build-dir (default: build/; scripts/test-e2e.sh builds them).
#
# With KUBECONFIG: the cluster as it is. stickyvm is used as installed in
# stickyvm-system (or installed for the run with the image $STICKYVM_IMAGE
# and removed afterwards); without KubeVirt the stand-in CRDs of crds/ are
# installed and e2e/lib/virt-controller.sh plays virt-controller. The
# suite's user needs cluster-admin (it impersonates users, cordons a node,
# deletes a scheduler pod and restarts the stickyvm-apiserver Deployment).
# Everything is done in the namespace stickyvm-e2e, which is deleted at the
# end.
#
# Scenarios: manifests (apply -k and -f agree), 1 first placement pins,
# 2 restarts come back (E2E_RESTARTS, default 10), 3 unpin, 4 pin?node=X,
# 5 errors through kubectl (404, 403 with --as, 422), 6 cordoned pinned
# node, 7 scheduler leader killed, 8 stickyvm-apiserver restarted under
# load, 9 a custom pin key (local mode: the key changed in the manifests'
# one place, pin?node=X, the restart lands on X), rbac (the daemons'
# ServiceAccounts have what the code uses and no more; no 403 in their
# logs), plugin (kubectl stickyvm with kubectl-stickyvm from --build-dir or
# PATH: usage, list, pin --dry-run, pin --node, unpin, why on a cordoned
# pinned node), drain (kubectl drain of a pinned VM's node: the new pod
# waits, kubectl describe and `kubectl stickyvm why` name the pin and the
# way out, uncordon brings it back, `kubectl stickyvm pin --node` moves it;
# against a cluster only with E2E_DRAIN=1, since a drain evicts all the
# node's pods), nodeloss (a pinned VM's node is lost: e2e/lib/
# node-lifecycle.sh plays the node lifecycle controller, `kubectl stickyvm
# evacuate --dry-run` then for real moves the VM, whose next pod runs on
# the new node, a VM with a local volume there is refused until --force;
# against a cluster the node is only cordoned, unless E2E_NODELOSS=1 with
# E2E_NODELOSS_STOP/E2E_NODELOSS_START, commands stopping and starting a
# node: see e2e/lib/scenario_nodeloss.sh),
# faults (waves of pods and VMs through a storage outage, a
# stalled API server, a 429 storm and a slow link, each followed by the
# checks: every pod bound, none bound twice or by a deposed replica, no
# node overcommitted, every VM pinned to its pod's node, a live leader;
# against a cluster only the 429 storm, through an API Priority and
# Fairness FlowSchema; see e2e/lib/scenario_faults.sh).
#
# Options: --build-dir DIR   binaries for the local mode (default build/)
#          --keep            leave the local cluster running (prints how to
#                            reach it; stop it with the printed command)
#          --only "1 2 rbac" run only these scenarios (1 runs anyway)
# Environment: E2E_TIMEOUT (seconds per wait, default 120), E2E_RESTARTS,
#              E2E_DRAIN=1 (run the drain scenario against a cluster),
#              E2E_NODELOSS=1 (lose a node of a cluster in nodeloss).
#
# The output ends with "N passed, M failed"; the exit status is 0 only
# when nothing failed.
set -uo pipefail

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/common.sh
source "$E2E_ROOT/e2e/lib/common.sh"
# shellcheck source=lib/local.sh
source "$E2E_ROOT/e2e/lib/local.sh"
# shellcheck source=lib/cluster.sh
source "$E2E_ROOT/e2e/lib/cluster.sh"
# shellcheck source=lib/scenarios.sh
source "$E2E_ROOT/e2e/lib/scenarios.sh"
# shellcheck source=lib/scenario_plugin.sh
source "$E2E_ROOT/e2e/lib/scenario_plugin.sh"
# shellcheck source=lib/scenario_nodeloss.sh
source "$E2E_ROOT/e2e/lib/scenario_nodeloss.sh"
# shellcheck source=lib/scenario_faults.sh
source "$E2E_ROOT/e2e/lib/scenario_faults.sh"

E2E_NS=stickyvm-e2e
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
E2E_RESTARTS=${E2E_RESTARTS:-10}
E2E_STANDIN=1
build_dir=$E2E_ROOT/build
keep=0
only=""

while [ $# -gt 0 ]; do
    case $1 in
        --build-dir) build_dir=${2:?}; shift ;;
        --build-dir=*) build_dir=${1#*=} ;;
        --keep) keep=1 ;;
        --only) only=${2:?}; shift ;;
        --only=*) only=${1#*=} ;;
        -h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done
command -v kubectl >/dev/null || die "kubectl is required (scripts/deps.sh installs it)"
# the kubectl plugin of the build first on PATH (scenario plugin)
if [ -x "$build_dir/kubectl-stickyvm" ]; then
    PATH=$(cd "$build_dir" && pwd):$PATH
    export PATH
fi

E2E_WORK=$(mktemp -d "${TMPDIR:-/tmp}/stickyvm-e2e.XXXXXX")
if [ -n "${KUBECONFIG:-}" ]; then
    MODE=cluster
else
    MODE=local
    LOCAL_DIR=$E2E_WORK/local
    LOCAL_BIN=$(cd "$build_dir" 2>/dev/null && pwd) || die "no build directory $build_dir"
fi

# ---- mode hooks used by the scenarios ----------------------------------------

E2E_OLD_LEADER=""

e2e_kill_scheduler_leader() {
    if [ "$MODE" = local ]; then
        E2E_OLD_LEADER=$(local_scheduler_leader) || { bad "no scheduler replica leads"; return 1; }
        log "  killing the leading replica (scheduler-$E2E_OLD_LEADER, pid $(local_pid "scheduler-$E2E_OLD_LEADER")) with SIGKILL"
        exec 3>&2 2>/dev/null # no "Killed" job notice from bash
        kill -KILL "$(local_pid "scheduler-$E2E_OLD_LEADER")"
        wait "$(local_pid "scheduler-$E2E_OLD_LEADER")"
        exec 2>&3 3>&-
        return 0
    else
        E2E_OLD_LEADER=$(cluster_scheduler_leader_pod) || { bad "no scheduler replica leads"; return 1; }
        log "  killing the leading replica (pod $E2E_OLD_LEADER)"
        kubectl -n "$STICKYVM_NS" delete pod "$E2E_OLD_LEADER" --grace-period=0 --force \
            >/dev/null 2>&1 || { bad "deleting pod $E2E_OLD_LEADER failed"; return 1; }
    fi
}

e2e_current_leader() {
    if [ "$MODE" = local ]; then local_scheduler_leader; else cluster_scheduler_leader_pod; fi
}

# Waits (up to a lease duration and then some) for another replica to lead.
e2e_scheduler_leader_changed() {
    local now="" end=$((SECONDS + 60))
    while [ "$SECONDS" -lt "$end" ]; do
        now=$(e2e_current_leader) && [ "$now" != "$E2E_OLD_LEADER" ] && break
        now=""
        sleep 1
    done
    [ -n "$now" ] || { bad "no other replica leads 60s after the kill"; return 1; }
    if [ "$MODE" = local ]; then
        log "  scheduler-$now leads now; starting scheduler-$E2E_OLD_LEADER again"
        local_start_scheduler "$E2E_OLD_LEADER"
    else
        log "  pod $now leads now"
    fi
}

e2e_restart_apiserver() {
    if [ "$MODE" = local ]; then
        log "  restarting stickyvm-apiserver (SIGTERM: requests in flight finish; then a new process)"
        local_stop apiserver 30
        local_start_apiserver
    else
        log "  kubectl rollout restart deployment/stickyvm-apiserver"
        kubectl -n "$STICKYVM_NS" rollout restart deployment/stickyvm-apiserver >/dev/null &&
            kubectl -n "$STICKYVM_NS" rollout status deployment/stickyvm-apiserver \
                --timeout=300s >/dev/null || { bad "the rollout failed"; return 1; }
    fi
}

# e2e_set_pin_key KEY: stickyvm reinstalled with KEY as the pin key (both
# daemons restarted); returns 2 when this mode cannot (a cluster: the key
# is changed in the base manifests/, which the suite does not edit).
e2e_set_pin_key() {
    if [ "$MODE" = local ]; then
        log "  pin key $1: manifests applied with it, both daemons restarted"
        local_set_pin_key "$E2E_ROOT" "$1" || { bad "reinstalling with the pin key $1 failed"; return 1; }
        STICKYVM_ANNOTATION=$1
    else
        return 2
    fi
}

e2e_daemon_logs() { # DEPLOYMENT
    if [ "$MODE" = local ]; then
        case $1 in
            stickyvm-scheduler) cat "$LOCAL_DIR"/scheduler-*.log ;;
            stickyvm-apiserver) cat "$LOCAL_DIR"/apiserver.log ;;
        esac
    else
        cluster_logs "$1"
    fi
}

# ---- set-up and tear-down ---------------------------------------------------

teardown() {
    nodeloss_restore # a node scenario nodeloss lost or cordoned
    if [ -n "${E2E_CORDONED:-}" ]; then
        kubectl uncordon "$E2E_CORDONED" >/dev/null 2>&1
    fi
    if [ "$MODE" = local ]; then
        if [ "$keep" = 1 ]; then
            log "kept running: export KUBECONFIG=$LOCAL_DIR/emulator/admin.kubeconfig"
            log "stop it with: kill $(cat "$LOCAL_DIR"/pids/* | tr '\n' ' ')"
            return
        fi
        local_down
        rm -rf "$E2E_WORK"
    else
        [ -z "${E2E_VC_PID:-}" ] || stop_pid "$E2E_VC_PID" 5
        [ -z "${E2E_APF:-}" ] || apf_remove
        kubectl delete namespace "$E2E_NS" --ignore-not-found --wait=false >/dev/null 2>&1
        cluster_teardown "$E2E_ROOT" "$E2E_WORK"
        rm -rf "$E2E_WORK"
    fi
}

on_abort() {
    trap - EXIT INT TERM
    log "aborted; cleaning up"
    teardown
    exit 1
}
trap on_abort INT TERM
trap 'on_abort' EXIT

namespace_manifest() {
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    app.kubernetes.io/part-of: stickyvm-e2e\n' "$E2E_NS"
}

setup() {
    if [ "$MODE" = local ]; then
        log "starting the emulator, stickyvm-apiserver and two stickyvm-scheduler replicas ($LOCAL_DIR)"
        local_up "$E2E_ROOT"
    else
        log "using the cluster of KUBECONFIG=$KUBECONFIG"
        cluster_setup "$E2E_ROOT" "$E2E_WORK"
    fi
    if kubectl get namespace "$E2E_NS" >/dev/null 2>&1; then
        log "namespace $E2E_NS exists (an earlier run?): deleting it first"
        kubectl delete namespace "$E2E_NS" --timeout=120s >/dev/null 2>&1
    fi
    namespace_manifest | kubectl apply -f - >/dev/null || die "creating namespace $E2E_NS failed"
    if [ "$E2E_STANDIN" = 1 ]; then
        if [ "$MODE" = local ]; then
            local_virt_controller "$E2E_NS"
        else
            "$E2E_ROOT/e2e/lib/virt-controller.sh" "$E2E_NS" >"$E2E_WORK/virt-controller.log" 2>&1 &
            E2E_VC_PID=$!
        fi
    fi
}

# ---- running ---------------------------------------------------------------------

passed=0
failed=0

run() { # ID TITLE FUNCTION
    local id=$1 title=$2 fn=$3 start=$SECONDS
    if [ -n "$only" ] && [ "$id" != 1 ] && ! printf ' %s ' "$only" | grep -q " $id "; then
        return
    fi
    log "[$id] $title"
    if "$fn"; then
        passed=$((passed + 1))
        echo "ok   $id $title ($((SECONDS - start))s)"
    else
        failed=$((failed + 1))
        echo "FAIL $id $title ($((SECONDS - start))s)"
    fi
}

setup
run manifests "kubectl apply -k manifests/ and -f manifests/ install the same objects" scenario_manifests
run 1 "a VM is created and scheduled; its pin appears" scenario_first_placement
run 2 "the pod is deleted $E2E_RESTARTS times; each new pod lands on the pinned node" scenario_restarts
run 3 "unpin through kubectl get --raw; the next start pins again" scenario_unpin
run 4 "pin?node=X moves the pin; the next restarts land on X" scenario_pin_node
run 5 "errors through kubectl: missing VM 404, forbidden user 403, bad node 422" scenario_errors
run 6 "the pinned node is cordoned: the pod waits with FailedScheduling, binds when uncordoned" scenario_cordon
run plugin "kubectl stickyvm: help, list (-A, --node, -o json), pin --dry-run, pin --node, unpin, why" scenario_plugin
run 7 "the scheduler leader is killed: the other replica takes over" scenario_leader_killed
run 8 "stickyvm-apiserver restarted under load: no pin request lost or doubled" scenario_apiserver_restart
run 9 "a custom pin key: pin?node=X through the aggregation path, the restart lands on X" scenario_custom_key
run drain "kubectl drain of the pinned node: the VM waits, comes back on uncordon, kubectl stickyvm pin moves it" scenario_drain
run nodeloss "a pinned VM's node is lost: kubectl stickyvm evacuate moves it, a VM on local disks is refused" scenario_nodeloss
run rbac "the daemons run with exactly the manifests' RBAC" scenario_rbac
run faults "storage outage, stalled API server, 429 storm, slow link: nothing lost, doubled or unpinned" scenario_faults

trap - EXIT
teardown
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
