# shellcheck shell=bash
# e2e/lib/scenario_plugin.sh - the kubectl plugin scenario (sourced by
# e2e/run.sh after scenarios.sh, whose helpers it uses): `kubectl stickyvm`
# as an operator types it, with kubectl-stickyvm on PATH (run.sh puts
# --build-dir first on PATH). Works on the server it finds: list reads
# virtualmachinepins or, on a server without that resource, the VMs'
# annotations; the dry-run check is strict on a server that rejects unknown
# parameters (one that knows dryRun) and skipped on an older one.

# sp VAR_OUT VAR_ERR VAR_RC ARGS...: runs `kubectl stickyvm ARGS`.
sp() {
    local errf
    errf=$(mktemp)
    SP_OUT=$(kubectl stickyvm "$@" 2>"$errf")
    SP_RC=$?
    SP_ERR=$(cat "$errf")
    rm -f "$errf"
}

# plugin_expect RC TEXT ARGS...: kubectl stickyvm ARGS exits RC and prints
# TEXT (stdout or stderr).
plugin_expect() {
    local want_rc=$1 text=$2
    shift 2
    sp "$@"
    if [ "$SP_RC" != "$want_rc" ]; then
        bad "kubectl stickyvm $*: exit $SP_RC, want $want_rc (out: $SP_OUT; err: $SP_ERR)"
        return 1
    fi
    case "$SP_OUT$SP_ERR" in
        *"$text"*) return 0 ;;
    esac
    bad "kubectl stickyvm $*: no \"$text\" in: $SP_OUT $SP_ERR"
    return 1
}

plugin_usage() {
    command -v kubectl-stickyvm >/dev/null || { bad "kubectl-stickyvm is not on PATH"; return 1; }
    plugin_expect 0 "Available Commands:" --help &&
        plugin_expect 0 "kubectl stickyvm pin VM" pin --help &&
        plugin_expect 2 "exactly one VM name is required" pin &&
        plugin_expect 2 "unknown flag: --node" unpin e2e-vm-2 --node node-0 &&
        plugin_expect 1 "Error from server (NotFound)" pin e2e-no-such-vm -n "$E2E_NS"
}

# list: the table, -A, --node, -o json, and the empty answer.
plugin_list() {
    local vm=$1 pin=$2
    plugin_expect 0 "NAME" list -n "$E2E_NS" || return 1
    printf '%s\n' "$SP_OUT" | grep -Eq "^$vm +$pin +" ||
        { bad "list: no row \"$vm $pin\" in: $SP_OUT"; return 1; }
    plugin_expect 0 "NAMESPACE" list -A || return 1
    printf '%s\n' "$SP_OUT" | grep -Eq "^$E2E_NS +$vm +$pin +" ||
        { bad "list -A: no row \"$E2E_NS $vm $pin\" in: $SP_OUT"; return 1; }
    plugin_expect 0 "$vm" list -n "$E2E_NS" --node "$pin" || return 1
    if printf '%s\n' "$SP_OUT" | tail -n +2 | grep -Ev " $pin " | grep -q .; then
        bad "list --node $pin shows other nodes: $SP_OUT"
        return 1
    fi
    plugin_expect 0 '"kind": "VirtualMachinePinList"' list -n "$E2E_NS" -o json &&
        plugin_expect 0 "No resources found in $E2E_NS namespace." list -n "$E2E_NS" --node e2e-no-such-node
}

# --dry-run changes nothing, on a server that knows dryRun.
plugin_dry_run() {
    local vm=$1 pin=$2 target=$3
    raw "$(raw_path "$E2E_NS" "$vm" pin "e2eUnknownParameter=1")"
    if [ "$RAW_CODE" != 400 ]; then
        log "  --dry-run: skipped (the server accepts unknown parameters, so it predates dryRun)"
        return 0
    fi
    plugin_expect 0 "(server dry run)" pin "$vm" -n "$E2E_NS" --node "$target" --dry-run || return 1
    [ "$(vm_pin "$E2E_NS" "$vm")" = "$pin" ] || { bad "pin --dry-run moved the pin"; return 1; }
    log "  $SP_OUT"
}

# why, with the pinned node cordoned: the cordon, the pin, what to do.
plugin_why() {
    local vm=$1 pin=$2 pending end
    kubectl cordon "$pin" >/dev/null || { bad "kubectl cordon $pin failed"; return 1; }
    E2E_CORDONED=$pin
    wait_bound "$vm" && kubectl -n "$E2E_NS" delete pod "$POD" --wait=false >/dev/null
    end=$((SECONDS + E2E_TIMEOUT))
    while [ "$SECONDS" -lt "$end" ]; do
        pending=$(vm_pending_pod "$E2E_NS" "$vm")
        [ -n "$pending" ] && [ -n "$(event_note FailedScheduling Pod "$pending")" ] && break
        sleep 0.5
    done
    local rc=0
    plugin_expect 0 "kubectl uncordon $pin" why "$vm" -n "$E2E_NS" || rc=1
    case $SP_OUT in *"is cordoned"*"excludes every other node"*) ;; *)
        bad "why $vm does not name the cordon and the pin: $SP_OUT"; rc=1 ;;
    esac
    [ "$rc" = 1 ] || log "  why $vm: $(printf '%s' "$SP_OUT" | grep -A3 'What keeps' | tr '\n' ' ')"
    [ -z "$pending" ] || plugin_expect 0 "kubectl uncordon $pin" why "$pending" -n "$E2E_NS" || rc=1
    plugin_expect 0 '"reasons"' why "$vm" -n "$E2E_NS" -o json || rc=1
    kubectl uncordon "$pin" >/dev/null || { bad "kubectl uncordon $pin failed"; return 1; }
    E2E_CORDONED=""
    wait_bound "$vm" && [ "$NODE" = "$pin" ] || { bad "after uncordon: pod on ${NODE:-nothing}"; rc=1; }
    return "$rc"
}

scenario_plugin() {
    local vm=e2e-vm-2 pin target
    plugin_usage || return 1
    pin=$(vm_pin "$E2E_NS" "$vm")
    [ -n "$pin" ] || { bad "VM $vm is not pinned"; return 1; }
    target=$(other_node "$pin")
    plugin_list "$vm" "$pin" || return 1
    plugin_dry_run "$vm" "$pin" "$target" || return 1
    plugin_expect 0 "virtualmachine.kubevirt.io/$vm pinned to $target (was $pin)" \
        pin "$vm" -n "$E2E_NS" --node "$target" || return 1
    [ "$(vm_pin "$E2E_NS" "$vm")" = "$target" ] || { bad "pin --node $target: the pin is not $target"; return 1; }
    restart_vm_pod "$vm" || return 1
    [ "$NODE" = "$target" ] || { bad "after pin --node $target the pod landed on $NODE"; return 1; }
    log "  kubectl stickyvm pin $vm --node $target: the restart landed on $target"
    plugin_expect 0 "virtualmachine.kubevirt.io/$vm unpinned (was $target)" unpin "$vm" -n "$E2E_NS" ||
        return 1
    [ -z "$(vm_pin "$E2E_NS" "$vm")" ] || { bad "unpin left the annotation"; return 1; }
    plugin_expect 0 "<none>" list -n "$E2E_NS" || return 1
    restart_vm_pod "$vm" || return 1
    wait_pin "$vm" "$NODE" || return 1
    log "  kubectl stickyvm unpin $vm: pinned anew to $NODE"
    plugin_why "$vm" "$NODE"
}
