# shellcheck shell=bash
# e2e/lib/scenarios.sh - the e2e scenarios (sourced by e2e/run.sh; bash).
#
# Each scenario_* function returns 0 when it passed; on failure it calls
# `bad MESSAGE` (printed under the scenario) and returns 1. They use kubectl
# for everything a user would do, and the mode hooks of run.sh for what
# only an operator does (killing a scheduler replica, restarting the API
# server, changing the pin key): e2e_kill_scheduler_leader,
# e2e_restart_apiserver, e2e_set_pin_key, e2e_daemon_logs.
#
# Globals from run.sh: E2E_NS, E2E_ROOT, E2E_WORK, E2E_RESTARTS, E2E_TIMEOUT.

E2E_VMS="e2e-vm-1 e2e-vm-2 e2e-vm-3"
E2E_USER_DENIED=stickyvm-e2e-nobody
E2E_USER_PINNER=stickyvm-e2e-pinner

bad() { printf '    %s\n' "$*" >&2; }

# ---- kubectl helpers -----------------------------------------------------

# raw VERB_PATH [kubectl flags]: `kubectl get --raw` with the HTTP status of
# the answer in RAW_CODE (from kubectl's -v=6 request log; "" when no
# answer), what kubectl printed in RAW_OUT and its error in RAW_ERR.
raw() {
    local path=$1 err
    shift
    err=$(mktemp)
    RAW_OUT=$(kubectl "$@" get --raw "$path" -v=6 2>"$err")
    RAW_RC=$?
    RAW_CODE=$(grep -E 'round_trippers.*(GET|PUT|POST) https?://' "$err" | tail -n1 |
        sed -n 's/.* \([1-5][0-9][0-9]\) [A-Za-z ]* in [0-9]* milliseconds.*/\1/p')
    RAW_ERR=$(grep -v -E '^[IEW][0-9]{4} ' "$err" | grep -v -E '^( |\{|\}|\])' | tail -n1)
    rm -f "$err"
}

vm_manifest() { # NAME
    cat <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: $1
  namespace: $E2E_NS
  labels:
    app.kubernetes.io/part-of: stickyvm-e2e
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/vm: $1
    spec:
      schedulerName: stickyvm
      terminationGracePeriodSeconds: 0
      domain:
        resources:
          requests:
            memory: 128Mi
        devices:
          disks:
            - name: rootdisk
              disk:
                bus: virtio
      volumes:
        - name: rootdisk
          containerDisk:
            image: quay.io/kubevirt/cirros-container-disk-demo:latest
EOF
}

# wait_bound VM [OLD_POD]: waits for a bound pod of VM other than OLD_POD;
# sets POD and NODE.
wait_bound() {
    local vm=$1 old=${2:-} end=$((SECONDS + E2E_TIMEOUT)) line
    while [ "$SECONDS" -lt "$end" ]; do
        line=$(vm_bound_pod "$E2E_NS" "$vm")
        if [ -n "$line" ] && [ "${line%% *}" != "$old" ]; then
            POD=${line%% *}
            NODE=${line#* }
            return 0
        fi
        sleep 0.5
    done
    bad "no new bound pod for VM $vm within ${E2E_TIMEOUT}s (pods: $(vm_pods "$E2E_NS" "$vm" | tr '\n' ' '))"
    return 1
}

# wait_pin VM VALUE: waits until the VM's pin is VALUE.
wait_pin() {
    local end=$((SECONDS + E2E_TIMEOUT))
    while [ "$SECONDS" -lt "$end" ]; do
        [ "$(vm_pin "$E2E_NS" "$1")" = "$2" ] && return 0
        sleep 0.5
    done
    bad "VM $1 is pinned to \"$(vm_pin "$E2E_NS" "$1")\", want \"$2\""
    return 1
}

# restart_vm_pod VM: deletes the VM's bound pod and waits for the next one
# to be bound (the stand-in or KubeVirt recreates VMI and pod); sets POD
# and NODE.
restart_vm_pod() {
    local old
    wait_bound "$1" || return 1
    old=$POD
    kubectl -n "$E2E_NS" delete pod "$old" --wait=false >/dev/null || {
        bad "kubectl delete pod $old failed"
        return 1
    }
    wait_bound "$1" "$old"
}

# An event of REASON about OBJECT (kind/name) in the test namespace; its
# note on stdout.
event_note() { # REASON KIND NAME
    kubectl -n "$E2E_NS" get events.events.k8s.io -o jsonpath="{range .items[?(@.reason==\"$1\")]}{.regarding.kind}/{.regarding.name}|{.note}{\"\\n\"}{end}" 2>/dev/null |
        awk -F'|' -v o="$2/$3" '$1 == o { print $2 }' | tail -n1
}

# A schedulable node other than NODE (NODE itself on a one-node cluster).
other_node() {
    local n
    n=$(schedulable_nodes | grep -vx "$1" | head -n1)
    echo "${n:-$1}"
}

# ---- 0. manifests --------------------------------------------------------

scenario_manifests() {
    local k f cm src
    k=$(kubectl apply -k "$E2E_ROOT/manifests/" --dry-run=client -o name 2>/dev/null | sort)
    f=$(kubectl apply -f "$E2E_ROOT/manifests/" --dry-run=client -o name 2>/dev/null | sort)
    [ -n "$k" ] || { bad "kubectl apply -k manifests/ --dry-run=client printed nothing"; return 1; }
    [ "$k" = "$f" ] || {
        bad "apply -k and apply -f install different objects:"
        diff <(echo "$k") <(echo "$f") | sed 's/^/      /' >&2
        return 1
    }
    cm=$(kubectl create -f "$E2E_ROOT/manifests/20-scheduler-config.yaml" --dry-run=client \
        -o jsonpath='{.data.config\.yaml}')
    src=$(cat "$E2E_ROOT/manifests/scheduler/stickyvm-scheduler-config.yaml")
    [ "$cm" = "$src" ] || {
        bad "manifests/20-scheduler-config.yaml does not hold manifests/scheduler/stickyvm-scheduler-config.yaml"
        return 1
    }
}

# ---- 1. first placement pins ---------------------------------------------

scenario_first_placement() {
    local vm note
    for vm in $E2E_VMS; do
        vm_manifest "$vm" | kubectl apply -f - >/dev/null || { bad "creating VM $vm failed"; return 1; }
    done
    for vm in $E2E_VMS; do
        wait_bound "$vm" || return 1
        wait_pin "$vm" "$NODE" || return 1
        log "  $vm: pod $POD on $NODE, pinned to $NODE"
        note=$(event_note Pinned VirtualMachine "$vm")
        case $note in
            *"$NODE"*) ;;
            *) bad "no Pinned event naming $NODE on VirtualMachine $vm (got \"$note\")"; return 1 ;;
        esac
    done
}

# ---- 2. restarts come back -------------------------------------------------

scenario_restarts() {
    local vm=e2e-vm-1 pin i
    pin=$(vm_pin "$E2E_NS" "$vm")
    [ -n "$pin" ] || { bad "VM $vm is not pinned"; return 1; }
    for i in $(seq 1 "$E2E_RESTARTS"); do
        restart_vm_pod "$vm" || return 1
        [ "$NODE" = "$pin" ] || { bad "restart $i: pod $POD landed on $NODE, pinned to $pin"; return 1; }
    done
    [ "$(vm_pin "$E2E_NS" "$vm")" = "$pin" ] || { bad "the pin changed"; return 1; }
    log "  $vm: $E2E_RESTARTS restarts, every pod on $pin"
}

# ---- 3. unpin ------------------------------------------------------------

scenario_unpin() {
    local vm=e2e-vm-1 pin
    pin=$(vm_pin "$E2E_NS" "$vm")
    raw "$(raw_path "$E2E_NS" "$vm" unpin)"
    [ "$RAW_CODE" = 200 ] || { bad "unpin answered ${RAW_CODE:-nothing}: $RAW_ERR"; return 1; }
    [ "$(json_field "$RAW_OUT" node)" = null ] &&
        [ "$(json_field "$RAW_OUT" previousNode)" = "$pin" ] &&
        [ "$(json_field "$RAW_OUT" changed)" = true ] || {
        bad "unexpected unpin answer: $RAW_OUT"
        return 1
    }
    [ -z "$(vm_pin "$E2E_NS" "$vm")" ] || { bad "the annotation is still there"; return 1; }
    log "  kubectl get --raw $(raw_path "$E2E_NS" "$vm" unpin)"
    log "  -> $RAW_OUT"
    restart_vm_pod "$vm" || return 1
    wait_pin "$vm" "$NODE" || return 1
    log "  after the restart: pod $POD on $NODE (was pinned to $pin), pinned again to $NODE"
}

# ---- 4. pin to a chosen node ---------------------------------------------

scenario_pin_node() {
    local vm=e2e-vm-1 pin target i
    pin=$(vm_pin "$E2E_NS" "$vm")
    target=$(other_node "$pin")
    raw "$(raw_path "$E2E_NS" "$vm" pin "node=$target")"
    [ "$RAW_CODE" = 200 ] || { bad "pin?node=$target answered ${RAW_CODE:-nothing}: $RAW_ERR"; return 1; }
    [ "$(json_field "$RAW_OUT" node)" = "$target" ] &&
        [ "$(json_field "$RAW_OUT" previousNode)" = "$pin" ] || {
        bad "unexpected pin answer: $RAW_OUT"
        return 1
    }
    [ "$(vm_pin "$E2E_NS" "$vm")" = "$target" ] || { bad "the annotation is not $target"; return 1; }
    log "  kubectl get --raw \"$(raw_path "$E2E_NS" "$vm" pin "node=$target")\""
    log "  -> $RAW_OUT"
    for i in 1 2; do
        restart_vm_pod "$vm" || return 1
        [ "$NODE" = "$target" ] || { bad "pod $POD landed on $NODE, pinned to $target"; return 1; }
    done
    log "  the next restarts landed on $target"
}

# ---- 5. errors through kubectl ---------------------------------------------

scenario_errors() {
    local rc=0
    raw "$(raw_path "$E2E_NS" e2e-no-such-vm pin)"
    if [ "$RAW_CODE" != 404 ] || [ "$RAW_RC" = 0 ]; then
        bad "pin of a missing VM: ${RAW_CODE:-no answer}, want 404 ($RAW_ERR)"
        rc=1
    else
        log "  missing VM -> 404: $RAW_ERR"
    fi
    raw "$(raw_path "$E2E_NS" e2e-vm-2 pin)" --as="$E2E_USER_DENIED"
    if [ "$RAW_CODE" != 403 ] || [ "$RAW_RC" = 0 ]; then
        bad "pin as $E2E_USER_DENIED: ${RAW_CODE:-no answer}, want 403 ($RAW_ERR)"
        rc=1
    else
        log "  kubectl --as=$E2E_USER_DENIED -> 403: $RAW_ERR"
    fi
    raw "$(raw_path "$E2E_NS" e2e-vm-2 pin node=e2e-no-such-node)"
    if [ "$RAW_CODE" != 422 ] || [ "$RAW_RC" = 0 ]; then
        bad "pin to a missing node: ${RAW_CODE:-no answer}, want 422 ($RAW_ERR)"
        rc=1
    else
        log "  node that does not exist -> 422: $RAW_ERR"
    fi
    # The same request is allowed once the user is bound to stickyvm-pinner.
    kubectl apply -f - >/dev/null <<EOF || { bad "creating the RoleBinding failed"; return 1; }
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: e2e-pinner
  namespace: $E2E_NS
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: stickyvm-pinner
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: $E2E_USER_PINNER
EOF
    local end=$((SECONDS + 30))
    while :; do
        raw "$(raw_path "$E2E_NS" e2e-vm-2 pin "node=$(vm_pin "$E2E_NS" e2e-vm-2)")" --as="$E2E_USER_PINNER"
        [ "$RAW_CODE" = 200 ] || [ "$SECONDS" -ge "$end" ] && break
        sleep 1 # RBAC caches (stickyvm-apiserver keeps denials 10 s)
    done
    if [ "$RAW_CODE" != 200 ]; then
        bad "pin as $E2E_USER_PINNER with the stickyvm-pinner RoleBinding: ${RAW_CODE:-no answer} ($RAW_ERR)"
        rc=1
    else
        log "  kubectl --as=$E2E_USER_PINNER (RoleBinding to stickyvm-pinner) -> 200"
    fi
    return $rc
}

# ---- 6. cordoned pinned node -------------------------------------------------

scenario_cordon() {
    local vm=e2e-vm-1 pin pending note end rc=0
    pin=$(vm_pin "$E2E_NS" "$vm")
    wait_bound "$vm" || return 1
    kubectl cordon "$pin" >/dev/null || { bad "kubectl cordon $pin failed"; return 1; }
    E2E_CORDONED=$pin
    kubectl -n "$E2E_NS" delete pod "$POD" --wait=false >/dev/null
    end=$((SECONDS + E2E_TIMEOUT))
    pending=""
    note=""
    while [ "$SECONDS" -lt "$end" ]; do
        pending=$(vm_pending_pod "$E2E_NS" "$vm")
        if [ -n "$pending" ]; then
            note=$(event_note FailedScheduling Pod "$pending")
            [ -n "$note" ] && break
        fi
        if vm_bound_pod "$E2E_NS" "$vm" >/dev/null; then
            bad "a pod of $vm was bound although $pin is cordoned: $(vm_bound_pod "$E2E_NS" "$vm")"
            rc=1
            break
        fi
        sleep 0.5
    done
    if [ "$rc" = 0 ]; then
        case $note in
            *unschedulable*) log "  pod $pending waits: FailedScheduling \"$note\"" ;;
            "") bad "no FailedScheduling event for the pending pod \"$pending\""; rc=1 ;;
            *) bad "FailedScheduling does not say the node is unschedulable: \"$note\""; rc=1 ;;
        esac
    fi
    sleep 2
    if [ "$rc" = 0 ] && vm_bound_pod "$E2E_NS" "$vm" >/dev/null; then
        bad "the pod was bound while $pin was cordoned"
        rc=1
    fi
    kubectl uncordon "$pin" >/dev/null || { bad "kubectl uncordon $pin failed"; return 1; }
    E2E_CORDONED=""
    [ "$rc" = 0 ] || return 1
    wait_bound "$vm" || return 1
    [ "$NODE" = "$pin" ] || { bad "after uncordon the pod landed on $NODE, pinned to $pin"; return 1; }
    log "  uncordoned: pod $POD bound to $pin"
}

# ---- 7. scheduler leader killed ----------------------------------------------

scenario_leader_killed() {
    local vm=e2e-vm-1 pin
    pin=$(vm_pin "$E2E_NS" "$vm")
    e2e_kill_scheduler_leader || return 1
    restart_vm_pod "$vm" || return 1
    [ "$NODE" = "$pin" ] || { bad "pod $POD landed on $NODE, pinned to $pin"; return 1; }
    e2e_scheduler_leader_changed || return 1
    log "  the other replica took over: pod $POD bound to $pin"
    restart_vm_pod e2e-vm-3 || return 1
    [ "$NODE" = "$(vm_pin "$E2E_NS" e2e-vm-3)" ] || { bad "e2e-vm-3's pod landed on $NODE"; return 1; }
}

# ---- 8. apiserver restarted under load -----------------------------------------

# pin_worker VM N A B OUT STOP: pins of VM alternating A, B (A first), at
# least N and until the file STOP exists (at most 2000); one line per
# request in OUT: "i target code previousNode changed attempts". Retries
# only answers that never reached stickyvm-apiserver (503, no answer), for
# up to 90 s per request.
pin_worker() {
    local vm=$1 n=$2 a=$3 b=$4 out=$5 stop=$6 i target attempts end
    for i in $(seq 1 2000); do
        [ "$i" -gt "$n" ] && [ -e "$stop" ] && break
        target=$a
        [ $((i % 2)) = 0 ] && target=$b
        attempts=0
        end=$((SECONDS + 90))
        while :; do
            attempts=$((attempts + 1))
            raw "$(raw_path "$E2E_NS" "$vm" pin "node=$target")"
            case $RAW_CODE in
                200) break ;;
                503|"") [ "$SECONDS" -lt "$end" ] || break; sleep 0.2 ;;
                *) break ;;
            esac
        done
        echo "$i $target ${RAW_CODE:-none} $(json_field "$RAW_OUT" previousNode) $(json_field "$RAW_OUT" changed) $attempts" >>"$out"
    done
}

check_pin_log() { # VM N A B OUT WATCH
    local vm=$1 n=$2 a=$3 b=$4 out=$5 watch=$6 prev i target code prevnode changed attempts
    local want seen rc=0 retried=0
    [ "$(wc -l <"$out")" -ge "$n" ] || { bad "$vm: $(wc -l <"$out") answers, want at least $n"; rc=1; }
    n=$(wc -l <"$out")
    prev=$b
    while read -r i target code prevnode changed attempts; do
        [ "$attempts" -gt 1 ] && retried=$((retried + attempts - 1))
        if [ "$code" != 200 ]; then
            bad "$vm: request $i (pin to $target) failed: $code after $attempts attempts"
            rc=1
        elif [ "$a" != "$b" ] && { [ "$prevnode" != "$prev" ] || [ "$changed" != true ]; }; then
            bad "$vm: request $i (pin to $target) saw previousNode=$prevnode changed=$changed, want $prev/true: a request was lost or applied twice"
            rc=1
        fi
        prev=$target
    done <"$out"
    [ "$(vm_pin "$E2E_NS" "$vm")" = "$prev" ] || { bad "$vm ends pinned to $(vm_pin "$E2E_NS" "$vm"), want $prev"; rc=1; }
    if [ "$a" != "$b" ]; then
        want=$(awk '{ print $2 }' "$out" | tr '\n' ' ')
        seen=$(awk 'NR > 1 && $0 != last { printf "%s ", $0 } { last = $0 }' "$watch")
        [ "$seen" = "$want" ] || {
            bad "$vm: the VM's pin changed as [$seen], want [$want]"
            rc=1
        }
    fi
    log "  $vm: $n pins, every one applied once ($retried retries of 503 while the server restarted)"
    return $rc
}

scenario_apiserver_restart() {
    local n=16 a b vm pids="" wpids="" rc=0
    a=$(vm_pin "$E2E_NS" e2e-vm-2)
    b=$(other_node "$a")
    for vm in e2e-vm-2 e2e-vm-3; do
        raw "$(raw_path "$E2E_NS" "$vm" pin "node=$b")"
        [ "$RAW_CODE" = 200 ] || { bad "pinning $vm to $b first failed: $RAW_CODE"; return 1; }
        : >"$E2E_WORK/pins-$vm"
        kubectl -n "$E2E_NS" get virtualmachine "$vm" --watch \
            -o jsonpath="{.metadata.annotations.${STICKYVM_ANNOTATION//./\\.}}{\"\\n\"}" \
            >"$E2E_WORK/watch-$vm" 2>/dev/null &
        wpids="$wpids $!"
    done
    sleep 1
    rm -f "$E2E_WORK/restarted"
    for vm in e2e-vm-2 e2e-vm-3; do
        pin_worker "$vm" "$n" "$a" "$b" "$E2E_WORK/pins-$vm" "$E2E_WORK/restarted" &
        pids="$pids $!"
    done
    sleep 1.5
    e2e_restart_apiserver || rc=1
    touch "$E2E_WORK/restarted"
    for p in $pids; do wait "$p"; done
    sleep 1
    for p in $wpids; do stop_pid "$p" 5; done
    [ "$rc" = 0 ] || return 1
    for vm in e2e-vm-2 e2e-vm-3; do
        check_pin_log "$vm" "$n" "$a" "$b" "$E2E_WORK/pins-$vm" "$E2E_WORK/watch-$vm" || rc=1
    done
    return $rc
}


# ---- 9. a custom pin key ---------------------------------------------------

# The key changed in its one place (the manifests' stickyvm-pin-key): /pin
# writes the new annotation, the scheduler reads it, a restart lands there.
scenario_custom_key() {
    local key=e2e.stickyvm.io/pinned-node vm=e2e-vm-2 old_key=$STICKYVM_ANNOTATION rc
    e2e_set_pin_key "$key"
    rc=$?
    [ "$rc" = 2 ] && { log "  skipped: the pin key is only changed in the local mode"; return 0; }
    [ "$rc" = 0 ] || return 1
    custom_key_pin "$vm" "$key" "$old_key"
    rc=$?
    e2e_set_pin_key "$old_key" || rc=1
    return "$rc"
}

custom_key_pin() { # VM KEY OLD_KEY
    local vm=$1 old_pin target
    wait_bound "$vm" || return 1
    old_pin=$(STICKYVM_ANNOTATION=$3 vm_pin "$E2E_NS" "$vm")
    target=$(other_node "$NODE")
    raw "$(raw_path "$E2E_NS" "$vm" pin "node=$target")"
    [ "$RAW_CODE" = 200 ] || { bad "pin?node=$target answered ${RAW_CODE:-nothing}: $RAW_ERR"; return 1; }
    [ "$(vm_pin "$E2E_NS" "$vm")" = "$target" ] || { bad "annotation $2 is not $target"; return 1; }
    [ "$(STICKYVM_ANNOTATION=$3 vm_pin "$E2E_NS" "$vm")" = "$old_pin" ] ||
        { bad "annotation $3 changed"; return 1; }
    log "  kubectl get --raw \"$(raw_path "$E2E_NS" "$vm" pin "node=$target")\" wrote $2=$target"
    restart_vm_pod "$vm" || return 1
    [ "$NODE" = "$target" ] || { bad "pod $POD landed on $NODE, pinned ($2) to $target"; return 1; }
    log "  after the restart: pod $POD on $target"
}

# ---- RBAC ---------------------------------------------------------------------

# sar USER VERB GROUP RESOURCE NAMESPACE NAME: "true" or "false".
sar() {
    local sub="" res=$4
    case $res in */*) sub=${res#*/}; res=${res%%/*} ;; esac
    kubectl create -o jsonpath='{.status.allowed}' -f - 2>/dev/null <<EOF
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: system:serviceaccount:stickyvm-system:$1
  groups: ["system:serviceaccounts", "system:serviceaccounts:stickyvm-system", "system:authenticated"]
  resourceAttributes:
    verb: "$2"
    group: "$3"
    resource: "$res"
    subresource: "$sub"
    namespace: "$5"
    name: "$6"
EOF
}

# Permissions each daemon's code uses (allowed) and a sample of what it
# must not have (denied): SA|verb|group|resource|namespace|name|expect
E2E_RBAC_TABLE="
stickyvm-scheduler|list||pods|||true
stickyvm-scheduler|watch||pods|||true
stickyvm-scheduler|watch||nodes|||true
stickyvm-scheduler|watch||namespaces|||true
stickyvm-scheduler|create||pods/binding|NS|x|true
stickyvm-scheduler|patch||pods/status|NS|x|true
stickyvm-scheduler|delete||pods|NS|x|true
stickyvm-scheduler|create|events.k8s.io|events|NS||true
stickyvm-scheduler|patch|events.k8s.io|events|NS|x|true
stickyvm-scheduler|watch||persistentvolumeclaims|||true
stickyvm-scheduler|update||persistentvolumes||x|true
stickyvm-scheduler|watch|storage.k8s.io|csinodes|||true
stickyvm-scheduler|watch|policy|poddisruptionbudgets|||true
stickyvm-scheduler|watch|kubevirt.io|virtualmachineinstances|||true
stickyvm-scheduler|patch|kubevirt.io|virtualmachines|NS|x|true
stickyvm-scheduler|create|coordination.k8s.io|leases|kube-system||true
stickyvm-scheduler|update|coordination.k8s.io|leases|kube-system|stickyvm-scheduler|true
stickyvm-scheduler|update|coordination.k8s.io|leases|kube-system|kube-scheduler|false
stickyvm-scheduler|update||pods|NS|x|false
stickyvm-scheduler|create||pods|NS||false
stickyvm-scheduler|get||secrets|NS|x|false
stickyvm-scheduler|patch||nodes||x|false
stickyvm-scheduler|delete|kubevirt.io|virtualmachines|NS|x|false
stickyvm-scheduler|update|kubevirt.io|virtualmachines|NS|x|false
stickyvm-scheduler|get||configmaps|kube-system|extension-apiserver-authentication|true
stickyvm-scheduler|watch||configmaps|kube-system|extension-apiserver-authentication|true
stickyvm-scheduler|create|authentication.k8s.io|tokenreviews|||true
stickyvm-scheduler|create|authorization.k8s.io|subjectaccessreviews|||true
stickyvm-scheduler|get||configmaps|kube-system|other|false
stickyvm-apiserver|get|kubevirt.io|virtualmachines|NS|x|true
stickyvm-apiserver|patch|kubevirt.io|virtualmachines|NS|x|true
stickyvm-apiserver|get|kubevirt.io|virtualmachineinstances|NS|x|true
stickyvm-apiserver|get||nodes||x|true
stickyvm-apiserver|list||nodes|||true
stickyvm-apiserver|watch||nodes|||true
stickyvm-apiserver|list||pods|||true
stickyvm-apiserver|watch||pods|||true
stickyvm-apiserver|patch||nodes||x|false
stickyvm-apiserver|create|authentication.k8s.io|tokenreviews|||true
stickyvm-apiserver|create|authorization.k8s.io|subjectaccessreviews|||true
stickyvm-apiserver|watch||configmaps|kube-system|extension-apiserver-authentication|true
stickyvm-apiserver|list|kubevirt.io|virtualmachines|||true
stickyvm-apiserver|watch|kubevirt.io|virtualmachines|||true
stickyvm-apiserver|get||persistentvolumeclaims|NS|x|true
stickyvm-apiserver|get||persistentvolumes||x|true
stickyvm-apiserver|create|events.k8s.io|events|NS||true
stickyvm-apiserver|list||persistentvolumeclaims|||false
stickyvm-apiserver|delete|kubevirt.io|virtualmachines|NS|x|false
stickyvm-apiserver|update|kubevirt.io|virtualmachines|NS|x|false
stickyvm-apiserver|get||secrets|NS|x|false
stickyvm-apiserver|get||configmaps|kube-system|other|false
stickyvm-apiserver|create||pods/binding|NS|x|false
"

scenario_rbac() {
    local line sa verb group res ns name want got rc=0 n=0 logs
    while IFS='|' read -r sa verb group res ns name want; do
        [ -n "$sa" ] || continue
        [ "$ns" = NS ] && ns=$E2E_NS
        got=$(sar "$sa" "$verb" "$group" "$res" "$ns" "$name")
        n=$((n + 1))
        if [ "$got" != "$want" ]; then
            bad "$sa: $verb ${group:+$group/}$res${name:+ $name}${ns:+ in $ns}: allowed=$got, want $want"
            rc=1
        fi
    done <<<"$E2E_RBAC_TABLE"
    [ "$rc" = 0 ] && log "  $n SubjectAccessReviews of the daemons' ServiceAccounts as expected"
    for d in stickyvm-scheduler stickyvm-apiserver; do
        # Any refused call of the daemon's own (its 403s are logged with the
        # Status message or as "(forbidden)"), but not stickyvm-apiserver's
        # --v=2 line about a caller it denied ("] forbidden: user ...").
        logs=$(e2e_daemon_logs "$d" | grep -i 'forbidden' | grep -v '\] forbidden: user ' | head -n5)
        if [ -n "$logs" ]; then
            bad "$d was refused an API call (a permission is missing from the manifests):"
            printf '%s\n' "$logs" | sed 's/^/      /' >&2
            rc=1
        fi
    done
    [ "$rc" = 0 ] && log "  no 403 in the logs of stickyvm-scheduler and stickyvm-apiserver"
    return "$rc"
}

# ---- drain: a node goes down for maintenance ----------------------------------

# drain_ready: fails (with bad) unless the story can run: it needs the
# kubectl-stickyvm plugin and an API server serving pods/eviction (what
# kubectl drain looks for in discovery).
drain_ready() {
    command -v kubectl-stickyvm >/dev/null 2>&1 || { bad "kubectl-stickyvm is not on PATH"; return 1; }
    kubectl get --raw /api/v1 2>/dev/null | grep -q '"pods/eviction"' ||
        { bad "the API server does not serve pods/eviction (kubectl drain needs it)"; return 1; }
}

# has WHAT OUTPUT STRING...: fails (with bad) unless OUTPUT holds every STRING.
has() {
    local what=$1 out=$2 s
    shift 2
    for s in "$@"; do
        [[ $out == *"$s"* ]] || { bad "$what does not say \"$s\": $out"; return 1; }
    done
}

# drain_node NODE VM: kubectl drain of NODE, which evicts the VM's pod POD;
# waits for the VM's new pod to wait with a FailedScheduling event that
# names the pin and the command to move the VM, and checks that kubectl
# describe shows it; sets POD to that pod.
drain_node() {
    local node=$1 vm=$2 out end note=""
    out=$(kubectl drain "$node" --ignore-daemonsets --delete-emptydir-data 2>&1)
    E2E_CORDONED=$node
    has "kubectl drain $node" "$out" "node/$node cordoned" "pod/$POD evicted" "node/$node drained" || return 1
    end=$((SECONDS + E2E_TIMEOUT))
    while [ "$SECONDS" -lt "$end" ]; do
        POD=$(vm_pending_pod "$E2E_NS" "$vm") && note=$(event_note FailedScheduling Pod "$POD")
        [ -n "$note" ] && break
        sleep 0.5
    done
    [ -n "$note" ] || { bad "no pending pod of $vm with a FailedScheduling event after the drain"; return 1; }
    has "FailedScheduling" "$note" "pinned to node $node" "kubectl stickyvm pin $vm -n $E2E_NS --node" || return 1
    out=$(kubectl -n "$E2E_NS" describe pod "$POD" 2>&1)
    has "kubectl describe pod $POD" "$out" "Pending" "FailedScheduling" "pinned to node $node" \
        "kubectl stickyvm pin $vm -n $E2E_NS --node" || return 1
    log "  drained $node: pod $POD waits: \"$note\""
}

uncordon_node() { # NODE
    local out
    out=$(kubectl uncordon "$1" 2>&1)
    has "kubectl uncordon $1" "$out" "node/$1 uncordoned" || return 1
    E2E_CORDONED=""
}

# drain_story VM PIN TARGET: the steps of scenario_drain.
drain_story() {
    local vm=$1 pin=$2 target=$3 out
    wait_bound "$vm" || return 1
    if [ "$NODE" != "$pin" ]; then # an earlier scenario moved the pin: restart onto it
        restart_vm_pod "$vm" || return 1
        [ "$NODE" = "$pin" ] || { bad "restarted, the pod landed on $NODE, pinned to $pin"; return 1; }
    fi
    drain_node "$pin" "$vm" || return 1
    out=$(kubectl stickyvm why "$vm" -n "$E2E_NS" 2>&1)
    has "kubectl stickyvm why $vm" "$out" "$POD (Pending)" "$pin (Ready,SchedulingDisabled)" "kubectl uncordon $pin" || return 1
    uncordon_node "$pin" || return 1
    wait_bound "$vm" || return 1
    [ "$NODE" = "$pin" ] || { bad "after uncordon the pod landed on $NODE, pinned to $pin"; return 1; }
    log "  uncordoned: pod $POD back on $pin"
    drain_node "$pin" "$vm" || return 1
    out=$(kubectl stickyvm pin "$vm" --node "$target" -n "$E2E_NS" 2>&1)
    has "kubectl stickyvm pin $vm --node $target" "$out" "pinned to $target (was $pin)" || return 1
    wait_bound "$vm" || return 1
    uncordon_node "$pin" || return 1
    [ "$NODE" = "$target" ] || { bad "after the pin to $target the pod landed on $NODE"; return 1; }
    [ "$(vm_pin "$E2E_NS" "$vm")" = "$target" ] || { bad "the pin is not $target"; return 1; }
    log "  kubectl stickyvm pin $vm --node $target: pod $POD on $target"
}

# The maintenance story: the pinned node is drained, the VM's new pod
# waits for it (kubectl describe and `kubectl stickyvm why` say why),
# uncordon brings it back; drained again, `kubectl stickyvm pin VM --node
# OTHER` moves it on purpose. A failed step leaves no node cordoned.
scenario_drain() {
    local vm=e2e-vm-3 pin
    if [ "${MODE:-local}" != local ] && [ "${E2E_DRAIN:-0}" != 1 ]; then
        log "  skipped: draining a node of a real cluster evicts all its pods: set E2E_DRAIN=1 to allow it"
        return 0
    fi
    drain_ready || return 1
    pin=$(vm_pin "$E2E_NS" "$vm")
    drain_story "$vm" "$pin" "$(other_node "$pin")" && return 0
    [ -z "${E2E_CORDONED:-}" ] || kubectl uncordon "$E2E_CORDONED" >/dev/null 2>&1
    E2E_CORDONED=""
    return 1
}
