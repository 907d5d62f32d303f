# shellcheck shell=bash
# e2e/lib/scenario_nodeloss.sh - the node-loss scenario (sourced by
# e2e/run.sh after scenarios.sh, whose helpers it uses): a VM pinned to
# node A; A is lost; `kubectl get vmpin` shows it (the NODE-STATUS check
# runs once the server sends status.nodeStatus); `kubectl stickyvm
# evacuate A --to B --dry-run` prints the plan and changes nothing; then
# for real: the VM's next pod (its pod on the dead node force-deleted, as
# an operator does) runs on B and is pinned to B; a second VM whose local
# volume lives on A is refused without --force and moved with it.
#
# Losing A: in local mode e2e/lib/node-lifecycle.sh writes what the node
# lifecycle controller does (Ready Unknown, the unreachable taints) and
# the virt-controller stand-in's kubelet stops playing A. Against a real
# cluster a node cannot be lost without harm, so by default A is only
# cordoned (evacuate works the same; the restart is an ordinary one). With
# E2E_NODELOSS=1 the scenario runs "$E2E_NODELOSS_STOP A" (a command that
# stops A's kubelet or machine, e.g. "docker stop" for kind) and waits for
# A's Ready condition to leave True, then "$E2E_NODELOSS_START A" at the
# end.
#
# Only the scenario's VMs move: every evacuate carries -l NODELOSS_LABEL.

NODELOSS_LABEL=e2e.stickyvm.io/nodeloss=true
NODELOSS_VM=e2e-nl-web
NODELOSS_DISK_VM=e2e-nl-disk
E2E_LOST=""

# nodeloss_disk_manifests NODE: a local PV on NODE (its hostname label),
# its claim, and a halted VM using it.
nodeloss_disk_manifests() {
    local host
    host=$(kubectl get node "$1" -o jsonpath='{.metadata.labels.kubernetes\.io/hostname}')
    cat <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $E2E_NS-nl-disk
  labels:
    app.kubernetes.io/part-of: stickyvm-e2e
spec:
  capacity:
    storage: 1Gi
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  local:
    path: /mnt/stickyvm-e2e-nodeloss
  claimRef:
    namespace: $E2E_NS
    name: $NODELOSS_DISK_VM-data
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions:
            - key: kubernetes.io/hostname
              operator: In
              values: [${host:-$1}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: $NODELOSS_DISK_VM-data
  namespace: $E2E_NS
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: $E2E_NS-nl-disk
  resources:
    requests:
      storage: 1Gi
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: $NODELOSS_DISK_VM
  namespace: $E2E_NS
  labels:
    app.kubernetes.io/part-of: stickyvm-e2e
    ${NODELOSS_LABEL%=*}: "true"
spec:
  runStrategy: Halted
  template:
    spec:
      schedulerName: stickyvm
      domain:
        devices: {}
      volumes:
        - name: data
          persistentVolumeClaim:
            claimName: $NODELOSS_DISK_VM-data
EOF
}

# node_ready NODE: the status of NODE's Ready condition ("" when none).
node_ready() {
    kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null
}

# nodeloss_lost_in_cluster NODE: runs E2E_NODELOSS_STOP NODE and waits for
# NODE's Ready condition to leave True (node-monitor-grace-period).
nodeloss_lost_in_cluster() {
    local node=$1 end=$((SECONDS + 300))
    [ -n "${E2E_NODELOSS_STOP:-}" ] ||
        { bad "E2E_NODELOSS=1 needs E2E_NODELOSS_STOP (a command stopping a node)"; return 1; }
    log "  $E2E_NODELOSS_STOP $node"
    $E2E_NODELOSS_STOP "$node" >/dev/null || { bad "$E2E_NODELOSS_STOP $node failed"; return 1; }
    E2E_LOST=$node
    while [ "$(node_ready "$node")" = True ]; do
        [ "$SECONDS" -lt "$end" ] || { bad "node $node still Ready 300s after $E2E_NODELOSS_STOP"; return 1; }
        sleep 2
    done
}

# nodeloss_lose NODE: loses NODE (local; a cluster with E2E_NODELOSS=1) or
# cordons it (a cluster); sets E2E_LOST or E2E_CORDONED.
nodeloss_lose() {
    local node=$1 out
    if [ "${MODE:-local}" = local ]; then
        out=$("$E2E_ROOT/e2e/lib/node-lifecycle.sh" lose "$node") ||
            { bad "node-lifecycle.sh lose $node failed"; return 1; }
        log "  $out"
        E2E_LOST=$node
    elif [ "${E2E_NODELOSS:-0}" = 1 ]; then
        nodeloss_lost_in_cluster "$node"
    else
        log "  a real cluster: cordoning $node instead of losing it (E2E_NODELOSS=1 loses it)"
        kubectl cordon "$node" >/dev/null || { bad "kubectl cordon $node failed"; return 1; }
        E2E_CORDONED=$node
    fi
}

# nodeloss_restore: brings back what nodeloss_lose took (also run.sh's
# teardown, after an abort).
nodeloss_restore() {
    if [ -n "${E2E_LOST:-}" ] && [ "${MODE:-local}" = local ]; then
        "$E2E_ROOT/e2e/lib/node-lifecycle.sh" restore "$E2E_LOST" >/dev/null
    elif [ -n "${E2E_LOST:-}" ] && [ -n "${E2E_NODELOSS_START:-}" ]; then
        $E2E_NODELOSS_START "$E2E_LOST" >/dev/null
    elif [ -n "${E2E_LOST:-}" ]; then
        log "  node $E2E_LOST stays down: no E2E_NODELOSS_START to start it again"
    fi
    [ -z "${E2E_CORDONED:-}" ] || kubectl uncordon "$E2E_CORDONED" >/dev/null 2>&1
    E2E_LOST="" E2E_CORDONED=""
}

# nodeloss_shows VM NODE: `kubectl get vmpin` and `kubectl stickyvm list`
# show NODE's state, once the server sends status.nodeStatus.
nodeloss_shows() {
    local vm=$1 node=$2 status want=Unknown
    [ -n "$E2E_LOST" ] || want=SchedulingDisabled
    [ "${MODE:-local}" = local ] || [ -z "$E2E_LOST" ] || want=Unknown,NotReady
    log "  kubectl get vmpin: $(kubectl -n "$E2E_NS" get vmpin "$vm" 2>&1 | tr -s ' ' | tr '\n' '|')"
    status=$(kubectl -n "$E2E_NS" get vmpin "$vm" -o jsonpath='{.status.nodeStatus}' 2>/dev/null)
    if [ -z "$status" ]; then
        log "  NODE-STATUS: skipped (the server does not send status.nodeStatus)"
        return 0
    fi
    kctl_node_status_in "$status" "$want" || { bad "vmpin $vm: nodeStatus \"$status\", want $want"; return 1; }
    sp list -n "$E2E_NS" --node-status "$want"
    printf '%s\n' "$SP_OUT" | grep -Eq "^$vm +$node +$status " ||
        { bad "kubectl stickyvm list --node-status $want: no row \"$vm $node $status\": $SP_OUT"; return 1; }
    log "  kubectl stickyvm list --node-status $want: $vm on $node, $status"
}

# kctl_node_status_in STATUS WORDS: STATUS's first word is one of WORDS
# (comma-separated), or WORDS has SchedulingDisabled and STATUS carries it.
kctl_node_status_in() {
    local w
    for w in ${2//,/ }; do
        [ "${1%%,*}" = "$w" ] && return 0
        [ "$w" = SchedulingDisabled ] && [[ $1 == *,SchedulingDisabled* ]] && return 0
    done
    return 1
}

# nodeloss_evacuate A B: the dry run, then the real run (one refusal).
nodeloss_evacuate() {
    local a=$1 b=$2
    plugin_expect 1 "Refused: volume \"data\"" evacuate "$a" --to "$b" -n "$E2E_NS" -l "$NODELOSS_LABEL" --dry-run ||
        return 1
    printf '%s\n' "$SP_OUT" | grep -Eq "^$NODELOSS_VM +$a +$b +Repinned \(server dry run\)$" ||
        { bad "evacuate --dry-run: no plan row for $NODELOSS_VM: $SP_OUT"; return 1; }
    [ "$(vm_pin "$E2E_NS" "$NODELOSS_VM")" = "$a" ] || { bad "evacuate --dry-run moved $NODELOSS_VM"; return 1; }
    log "  evacuate --dry-run: $(printf '%s' "$SP_OUT" | tr -s ' ' | tr '\n' '|')"
    plugin_expect 1 "--force moves them anyway" evacuate "$a" --to "$b" -n "$E2E_NS" -l "$NODELOSS_LABEL" || return 1
    printf '%s\n' "$SP_OUT" | grep -Eq "^$NODELOSS_VM +$a +$b +Repinned$" ||
        { bad "evacuate: $NODELOSS_VM not repinned: $SP_OUT"; return 1; }
    printf '%s\n' "$SP_OUT" | grep -Eq "^$NODELOSS_DISK_VM +$a +$b +Refused: " ||
        { bad "evacuate: $NODELOSS_DISK_VM not refused: $SP_OUT"; return 1; }
    [ "$(vm_pin "$E2E_NS" "$NODELOSS_VM")" = "$b" ] || { bad "evacuate: $NODELOSS_VM is not pinned to $b"; return 1; }
    [ "$(vm_pin "$E2E_NS" "$NODELOSS_DISK_VM")" = "$a" ] || { bad "evacuate moved $NODELOSS_DISK_VM"; return 1; }
    log "  evacuate: $(printf '%s' "$SP_OUT" | tr -s ' ' | tr '\n' '|')"
}

# nodeloss_restart VM: the VM's next pod. On a lost node its pod never
# finishes (a dead kubelet): it is force-deleted, as an operator does.
nodeloss_restart() {
    local vm=$1 old
    if [ -z "$E2E_LOST" ]; then
        restart_vm_pod "$vm"
        return
    fi
    wait_bound "$vm" || return 1
    old=$POD
    kubectl -n "$E2E_NS" delete pod "$old" --grace-period=0 --force >/dev/null 2>&1 ||
        { bad "kubectl delete pod $old --force failed"; return 1; }
    wait_bound "$vm" "$old"
}

nodeloss_story() {
    local a b
    vm_manifest "$NODELOSS_VM" | kubectl apply -f - >/dev/null || { bad "creating VM $NODELOSS_VM failed"; return 1; }
    kubectl -n "$E2E_NS" label virtualmachine "$NODELOSS_VM" "$NODELOSS_LABEL" >/dev/null || return 1
    wait_bound "$NODELOSS_VM" || return 1
    a=$NODE
    wait_pin "$NODELOSS_VM" "$a" || return 1
    b=$(other_node "$a")
    [ "$b" != "$a" ] || { bad "no other schedulable node than $a"; return 1; }
    nodeloss_disk_manifests "$a" | kubectl apply -f - >/dev/null || { bad "creating the local-volume VM failed"; return 1; }
    plugin_expect 0 "pinned to $a" pin "$NODELOSS_DISK_VM" -n "$E2E_NS" --node "$a" || return 1
    log "  $NODELOSS_VM runs on $a and is pinned there; $NODELOSS_DISK_VM's local volume lives on $a"
    nodeloss_lose "$a" || return 1
    nodeloss_shows "$NODELOSS_VM" "$a" || return 1
    nodeloss_evacuate "$a" "$b" || return 1
    nodeloss_restart "$NODELOSS_VM" || return 1
    [ "$NODE" = "$b" ] || { bad "after evacuate --to $b the pod landed on $NODE"; return 1; }
    wait_pin "$NODELOSS_VM" "$b" || return 1
    log "  $NODELOSS_VM's next pod $POD runs on $b, pinned to $b"
    plugin_expect 0 "Repinned" evacuate "$a" --to "$b" -n "$E2E_NS" -l "$NODELOSS_LABEL" --force || return 1
    [ "$(vm_pin "$E2E_NS" "$NODELOSS_DISK_VM")" = "$b" ] || { bad "evacuate --force left $NODELOSS_DISK_VM"; return 1; }
    log "  evacuate --force: $NODELOSS_DISK_VM pinned to $b (its data stays on $a)"
}

scenario_nodeloss() {
    local rc=0
    command -v kubectl-stickyvm >/dev/null || { bad "kubectl-stickyvm is not on PATH"; return 1; }
    nodeloss_story || rc=1
    nodeloss_restore
    kubectl -n "$E2E_NS" delete vm "$NODELOSS_VM" "$NODELOSS_DISK_VM" --ignore-not-found --wait=false >/dev/null 2>&1
    kubectl -n "$E2E_NS" delete pvc "$NODELOSS_DISK_VM-data" --ignore-not-found --wait=false >/dev/null 2>&1
    kubectl delete pv "$E2E_NS-nl-disk" --ignore-not-found --wait=false >/dev/null 2>&1
    return "$rc"
}
