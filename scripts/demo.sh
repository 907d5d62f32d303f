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
#   6. what kubectl shows for discovery and for errors.
#
# The stand-in also plays the kubelet: bound pods become Running with a
# pod IP, so `kubectl get pods -o wide` looks as on a cluster; and it sets
# the VMs' status as virt-controller does, so `kubectl get vm` shows
# Running, or ErrorUnschedulable while a VM waits for its node.
#
# Then it prints the kubectl commands to try against the running demo and
# keeps it running until Ctrl-C, which stops everything it started.
#
# Usage: scripts/demo.sh [--once] [--no-deps] [--build-dir DIR] [--pause SECONDS]
#   --once        stop after the walk-through (the tests use it)
#   --no-deps     do not run scripts/deps.sh
#   --build-dir   where to build (default build/)
#   --pause       seconds between steps (default 1; 0 with --once)
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
deps=1
build_dir=build
pause=""
while [ $# -gt 0 ]; do
    case $1 in
        --once) once=1 ;;
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
    expect "kubectl stickyvm why" "Pending" "$node (cordoned)" "kubectl uncordon $node"
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

cleanup() {
    trap - EXIT INT TERM
    [ -n "${LOCAL_DIR:-}" ] || exit "${1:-0}"
    printf '\nstopping the demo (emulator, stickyvm-apiserver, stickyvm-scheduler x2, virt-controller stand-in)\n'
    local_down
    rm -rf "$LOCAL_DIR"
    exit "${1:-0}"
}
trap 'cleanup 130' INT TERM
trap 'cleanup $?' EXIT

if [ "$deps" = 1 ]; then
    step "Installing the dependencies (scripts/deps.sh)"
    scripts/deps.sh || die "scripts/deps.sh failed"
fi
step "Building stickyvm-emulator, stickyvm-scheduler, stickyvm-apiserver and kubectl-stickyvm in $build_dir/"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || die "cmake failed"
cmake --build "$build_dir" -j"$(nproc)" --target stickyvm-emulator stickyvm-scheduler \
    stickyvm-apiserver kubectl-stickyvm >"${TMPDIR:-/tmp}/stickyvm-demo-build.log" 2>&1 ||
    die "the build failed: see ${TMPDIR:-/tmp}/stickyvm-demo-build.log"

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
show kubectl -n stickyvm-system get deployments,serviceaccounts,configmaps
show kubectl get apiservice v1.subresources.stickyvm.io

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

    logs: $LOCAL_DIR/{emulator,apiserver,scheduler-1,scheduler-2,virt-controller-$NS}.log
EOF

if [ "$once" = 1 ]; then
    printf '\ndemo walk-through complete\n'
    cleanup 0
fi
printf '\nThe demo keeps running; press Ctrl-C to stop it.\n'
while :; do
    sleep 1 &
    wait $!
    local_alive emulator || die "the emulator stopped (see $LOCAL_DIR/emulator.log)"
done
