# shellcheck shell=bash
# e2e/lib/common.sh - helpers shared by e2e/run.sh and scripts/demo.sh
# (sourced; bash). Everything a user would do goes through kubectl with the
# KUBECONFIG of the cluster under test.

STICKYVM_ANNOTATION=${STICKYVM_ANNOTATION:-stickyvm.io/node}
STICKYVM_GV=/apis/subresources.stickyvm.io/v1

# ---- output -------------------------------------------------------------

e2e_ts() { date +%H:%M:%S; }
log() { printf '%s %s\n' "$(e2e_ts)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# ---- waiting ------------------------------------------------------------

# wait_until SECONDS DESCRIPTION COMMAND...: runs COMMAND every half second
# until it succeeds (0) or SECONDS pass (1, with a log line).
wait_until() {
    local secs=$1 what=$2
    shift 2
    local end=$((SECONDS + secs))
    while :; do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        if [ "$SECONDS" -ge "$end" ]; then
            log "timed out after ${secs}s waiting for: $what"
            return 1
        fi
        sleep 0.5
    done
}

# ---- processes ----------------------------------------------------------

# free_port: a TCP port on 127.0.0.1 nothing listens on (best effort),
# taken below the kernel's ephemeral range (ip_local_port_range), where the
# local ports of outgoing connections come from: a port picked there can be
# taken by any client socket before the daemon binds it.
free_port() {
    local p low=32768 range
    range=$(cat /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null) && low=${range%%[[:space:]]*}
    [ "$low" -gt 11000 ] || low=32768
    for _ in $(seq 1 200); do
        p=$((10000 + RANDOM % (low - 10000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# stop_pid PID [SECONDS]: SIGTERM, wait up to SECONDS (default 15), then
# SIGKILL. Only ever called with the ids of processes this suite started.
stop_pid() {
    local pid=$1 secs=${2:-15} i
    [ -n "$pid" ] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 $((secs * 10))); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# ---- VirtualMachines ----------------------------------------------------

# vm_pin NS VM: the VM's pin annotation ("" when unpinned).
vm_pin() {
    kubectl -n "$1" get virtualmachine "$2" \
        -o jsonpath="{.metadata.annotations.${STICKYVM_ANNOTATION//./\\.}}" 2>/dev/null
}

# vm_pods NS VM: "name node" for each virt-launcher pod of the VM that is
# not being deleted (node "-" while pending).
vm_pods() {
    kubectl -n "$1" get pods -l "kubevirt.io=virt-launcher,vm.kubevirt.io/name=$2" \
        -o jsonpath='{range .items[*]}{.metadata.name}|{.spec.nodeName}|{.metadata.deletionTimestamp}{"\n"}{end}' \
        2>/dev/null | awk -F'|' '$1 != "" && $3 == "" { print $1, ($2 == "" ? "-" : $2) }'
}

# vm_bound_pod NS VM: "name node" of the VM's bound pod; fails when none.
vm_bound_pod() {
    local line
    line=$(vm_pods "$1" "$2" | awk '$2 != "-"' | head -n1)
    [ -n "$line" ] && echo "$line"
}

# vm_pending_pod NS VM: the name of the VM's pod that is not bound yet.
vm_pending_pod() {
    local line
    line=$(vm_pods "$1" "$2" | awk '$2 == "-" { print $1 }' | head -n1)
    [ -n "$line" ] && echo "$line"
}

# raw_path NS VM VERB [QUERY]: the aggregated API path of pin/unpin.
raw_path() {
    echo "$STICKYVM_GV/namespaces/$1/virtualmachines/$2/$3${4:+?$4}"
}

# json_field JSON KEY: the value of a top-level "key": "value" or null/bool
# member of a one-line JSON answer (the VirtualMachinePin kubectl prints).
json_field() {
    printf '%s' "$1" | tr -d '\n' | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|null\|true\|false\).*/\1/p" |
        tr -d '"'
}

# schedulable_nodes: nodes that are not cordoned and carry no NoSchedule /
# NoExecute taint (the nodes a stickyvm pod may land on).
schedulable_nodes() {
    kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.unschedulable} {.spec.taints[*].effect}{"\n"}{end}' |
        awk '$0 !~ / true/ && $0 !~ /NoSchedule/ && $0 !~ /NoExecute/ { print $1 }'
}
