# shellcheck shell=bash
# e2e/lib/scenario_faults.sh - scenario "faults" (sourced by e2e/run.sh;
# bash): the API server misbehaves while pods and VMs keep coming.
#
# Local mode: the two stickyvm-scheduler replicas are restarted with short
# leader-election timings (FAULT_LEASE, a lease change fits in a fault),
# then the emulator plays, one after another (its fault rules, through the
# control API; every rule has forMs, so it ends by itself):
#   outage  a storage outage: every write answers 500 "etcdserver: request
#           timed out" (as kube-apiserver does while etcd is down), 10 s;
#   stall   a stalled API server (SIGSTOP): requests are accepted and never
#           answered, then their connections close, 20 s;
#   storm   a 429 storm on the scheduler, as when its priority level is
#           saturated: 80% of its writes (binds, pins), 30% of its reads and
#           of its Lease requests answer 429 with Retry-After: 1, 60 s (the
#           rest of the cluster works, so launcher pods keep coming - the
#           stand-in takes some 20 s per VM, hence the length; the Lease
#           mostly holds, so binds and pin writes meet the 429s, and a
#           leader that loses it has binds in flight);
#   slow    a slow link: every read waits 200 ms, every write 500 ms, 20 s.
# Against a cluster (KUBECONFIG) the suite cannot stop etcd or the API
# server: only the storm is played, with API Priority and Fairness: a
# FlowSchema sending the stickyvm-scheduler ServiceAccount's requests to a
# PriorityLevelConfiguration of a few seats that rejects the rest
# (flowcontrol.apiserver.k8s.io v1, or v1beta3 before 1.29), 40 s, both
# removed afterwards.
#
# A wave of FAULT_WAVE_PODS plain pods and FAULT_WAVE_VMS VMs (VM -> VMI
# -> launcher pod by the virt-controller stand-in) is created just before
# each fault (its binds and pin writes meet the fault's start) and every
# FAULT_WAVE_EVERY seconds during it, each create retried as a client
# would until stored. After the fault, once things settle (at most
# FAULT_SETTLE s), the scenario asserts and prints one line:
#   bound       every pod of the namespace is bound, every VM has a pod;
#   single      no pod got two 201 answers to its binding (local: the
#               emulator's request log);
#   fenced      no replica logged a bind while another replica held the
#               Lease or after its own renewal failed (local: the replicas'
#               logs, ordered by time);
#   allocatable no node's pods request more CPU, memory or pods than it
#               has allocatable;
#   pinned      every VM is pinned to the node its launcher pod runs on;
#   leader      the Lease has a holder that keeps renewing it.
# A replica that exited after losing its Lease (as kube-scheduler does) is
# started again before the checks, as a Deployment would.
#
# Globals from run.sh: MODE, E2E_NS, E2E_WORK, LOCAL_DIR, LOCAL_URL.

FAULT_WAVE_PODS=${FAULT_WAVE_PODS:-2}
FAULT_WAVE_VMS=${FAULT_WAVE_VMS:-1}
FAULT_WAVE_EVERY=5
FAULT_SETTLE=${FAULT_SETTLE:-120}
FAULT_LEASE=(--leader-elect-lease-duration=4s --leader-elect-renew-deadline=3s
    --leader-elect-retry-period=1s)
FAULT_LEASE_NS=kube-system
FAULT_LEASE_NAME=stickyvm-scheduler
FAULT_APF_NAME=stickyvm-e2e-faults

# ---- the faults --------------------------------------------------------------

# emu_control METHOD WHAT [JSON]: the emulator's control API as admin.
emu_control() {
    local d=$LOCAL_DIR/emulator
    curl -sS --fail --max-time 20 --cacert "$d/ca.crt" --cert "$d/admin.crt" --key "$d/admin.key" \
        -X "$1" -H 'Content-Type: application/json' ${3:+--data-binary "$3"} \
        "$LOCAL_URL/emulator/v1/$2"
}

# fault_rules NAME SECONDS: the emulator's rules for fault NAME.
fault_rules() {
    local ms=$(($2 * 1000)) writes='"verbs":["create","update","patch","delete","deletecollection"]'
    local sched="\"users\":[\"system:serviceaccount:$LOCAL_SA_NS:stickyvm-scheduler\"]"
    case $1 in
        outage) echo "{\"rules\":[{$writes,\"errorCode\":500,\"message\":\"etcdserver: request timed out\",\"forMs\":$ms}]}" ;;
        stall) echo "{\"rules\":[{\"action\":\"stall\",\"forMs\":$ms}]}" ;;
        storm) echo "{\"rules\":[{$sched,\"resources\":[\"leases\"],\"errorCode\":429,\"retryAfterSeconds\":1,\"errorRate\":0.3,\"forMs\":$ms},{$sched,$writes,\"errorCode\":429,\"retryAfterSeconds\":1,\"errorRate\":0.8,\"forMs\":$ms},{$sched,\"errorCode\":429,\"retryAfterSeconds\":1,\"errorRate\":0.3,\"forMs\":$ms}]}" ;;
        slow) echo "{\"rules\":[{$writes,\"delayMs\":500,\"forMs\":$ms},{\"delayMs\":200,\"forMs\":$ms}]}" ;;
    esac
}

# The flowcontrol version the cluster serves ("" when neither).
apf_version() {
    local v
    for v in v1 v1beta3; do
        kubectl api-versions 2>/dev/null | grep -qx "flowcontrol.apiserver.k8s.io/$v" && { echo "$v"; return; }
    done
}

# The storm on a cluster: the scheduler's ServiceAccount gets a priority
# level of nominally one share (a few seats), lending and borrowing none,
# rejecting (429) what does not fit.
apf_manifest() { # VERSION
    cat <<EOF
apiVersion: flowcontrol.apiserver.k8s.io/$1
kind: PriorityLevelConfiguration
metadata:
  name: $FAULT_APF_NAME
  labels:
    app.kubernetes.io/part-of: stickyvm-e2e
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse:
      type: Reject
---
apiVersion: flowcontrol.apiserver.k8s.io/$1
kind: FlowSchema
metadata:
  name: $FAULT_APF_NAME
  labels:
    app.kubernetes.io/part-of: stickyvm-e2e
spec:
  priorityLevelConfiguration:
    name: $FAULT_APF_NAME
  matchingPrecedence: 90
  distinguisherMethod:
    type: ByUser
  rules:
    - subjects:
        - kind: ServiceAccount
          serviceAccount:
            namespace: $STICKYVM_NS
            name: stickyvm-scheduler
      resourceRules:
        - verbs: ["*"]
          apiGroups: ["*"]
          resources: ["*"]
          clusterScope: true
          namespaces: ["*"]
      nonResourceRules:
        - verbs: ["*"]
          nonResourceURLs: ["*"]
EOF
}

apf_remove() {
    kubectl delete flowschemas.flowcontrol.apiserver.k8s.io,prioritylevelconfigurations.flowcontrol.apiserver.k8s.io \
        "$FAULT_APF_NAME" --ignore-not-found >/dev/null 2>&1
}

# fault_start NAME SECONDS / fault_end NAME: the fault on and off.
fault_start() {
    local v
    if [ "$MODE" = local ]; then
        emu_control POST faults "$(fault_rules "$1" "$2")" >/dev/null
        return
    fi
    v=$(apf_version)
    [ -n "$v" ] || { bad "the cluster serves no flowcontrol.apiserver.k8s.io v1 or v1beta3"; return 1; }
    E2E_APF=1 # run.sh's teardown removes the objects if the run is cut short
    apf_manifest "$v" | kubectl apply -f - >/dev/null
}

fault_end() {
    if [ "$MODE" = local ]; then
        emu_control DELETE faults >/dev/null
    else
        apf_remove
        # shellcheck disable=SC2034 # read by run.sh's teardown
        E2E_APF=""
    fi
}

# ---- the load ------------------------------------------------------------------

fault_pod_manifest() { # NAME CPU MEMORY
    cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $E2E_NS
  labels:
    app.kubernetes.io/part-of: stickyvm-e2e
    stickyvm-e2e/faults: plain
spec:
  schedulerName: stickyvm
  terminationGracePeriodSeconds: 0
  containers:
    - name: c
      image: registry.k8s.io/pause:3.9
      resources:
        requests:
          cpu: "$2"
          memory: $3
EOF
}

# fault_create WHAT COMMAND...: kubectl create of COMMAND's manifest until
# it is stored (an answer lost to the fault may hide a stored object:
# AlreadyExists counts), for at most two minutes.
fault_create() {
    local what=$1 end=$((SECONDS + 120)) out=""
    shift
    while [ "$SECONDS" -lt "$end" ]; do
        out=$("$@" | kubectl create --request-timeout=30s -f - 2>&1) && return 0
        case $out in *AlreadyExists* | *"already exists"*) return 0 ;; esac
        sleep 1
    done
    bad "creating $what failed for 120s: $out"
    return 1
}

# fault_wave FAULT N: wave N of FAULT, its objects created in parallel.
fault_wave() {
    local i pids="" rc=0 cpu=1 mem=1Gi p
    [ "$MODE" = local ] || { cpu=10m; mem=16Mi; }
    for i in $(seq 1 "$FAULT_WAVE_PODS"); do
        fault_create "pod f-$1-$2-$i" fault_pod_manifest "f-$1-$2-$i" "$cpu" "$mem" &
        pids="$pids $!"
    done
    for i in $(seq 1 "$FAULT_WAVE_VMS"); do
        fault_create "VM fvm-$1-$2-$i" vm_manifest "fvm-$1-$2-$i" &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p" || rc=1; done
    return $rc
}

# ---- the checks ----------------------------------------------------------------

# Pods of the namespace not being deleted: "name node vm" (node "-" when
# not bound, vm "-" for a plain pod).
fault_pods() {
    kubectl -n "$E2E_NS" get pods -o jsonpath='{range .items[*]}{.metadata.name}|{.spec.nodeName}|{.metadata.deletionTimestamp}|{.metadata.labels.vm\.kubevirt\.io/name}{"\n"}{end}' |
        awk -F'|' '$1 != "" && $3 == "" { print $1, ($2 == "" ? "-" : $2), ($4 == "" ? "-" : $4) }'
}

# The scenario's VMs: "name pin" (pin "-" when unpinned).
fault_vms() {
    kubectl -n "$E2E_NS" get virtualmachines -o jsonpath="{range .items[*]}{.metadata.name}|{.metadata.annotations.${STICKYVM_ANNOTATION//./\\.}}{\"\\n\"}{end}" |
        awk -F'|' '$1 ~ /^fvm-/ { print $1, ($2 == "" ? "-" : $2) }'
}

# fault_join: from fault_pods and fault_vms (files $1 $2), per VM of the
# scenario "vm pin nodes-of-its-bound-pods" ("-" when none).
fault_join() {
    awk 'NR == FNR { if ($3 != "-" && $2 != "-") nodes[$3] = nodes[$3] (nodes[$3] == "" ? "" : ",") $2; next }
        { print $1, $2, (nodes[$1] == "" ? "-" : nodes[$1]) }' "$1" "$2"
}

fault_snapshot() {
    fault_pods >"$E2E_WORK/fault-pods" && fault_vms >"$E2E_WORK/fault-vms" &&
        fault_join "$E2E_WORK/fault-pods" "$E2E_WORK/fault-vms" >"$E2E_WORK/fault-join"
}

# Every pod bound and every VM with a bound pod, or fails naming them.
fault_all_bound() {
    fault_snapshot || return 1
    FAULT_UNBOUND=$({
        awk '$2 == "-" { print $1 }' "$E2E_WORK/fault-pods"
        awk '$3 == "-" { print "vm/" $1 }' "$E2E_WORK/fault-join"
    } | tr '\n' ' ')
    [ -z "$FAULT_UNBOUND" ]
}

# Every VM pinned to the node of its bound pods, or fails naming the others.
fault_all_pinned() {
    fault_snapshot || return 1
    FAULT_UNPINNED=$(awk '{ n = split($3, a, ","); for (i = 1; i <= n; i++) if (a[i] != $2) { print $1 "(pod on " $3 ", pin " $2 ")"; break } }' \
        "$E2E_WORK/fault-join" | tr '\n' ' ')
    [ -z "$FAULT_UNPINNED" ]
}

# Pods with two 201 bindings in the emulator's log: "ns/name count".
fault_double_binds() {
    emu_control GET "requests?verb=create&resource=pods/binding" |
        grep -o '"namespace":"[^"]*","name":"[^"]*","code":201' |
        sed 's/"namespace":"\([^"]*\)","name":"\([^"]*\)".*/\1\/\2/' | sort | uniq -c |
        awk '$1 > 1 { print $2, $1 }'
}

# The number of bindings the emulator answered with CODE.
fault_binds_answered() { # CODE
    emu_control GET "requests?verb=create&resource=pods/binding" | grep -o "\"code\":$1[,}]" | wc -l
}

# Binds a replica logged while it did not hold the Lease, from the
# replicas' logs merged by time (klog's "Lmmdd hh:mm:ss.uuuuuu"): after
# another replica acquired it, or after its own renewal failed, until it
# acquired it again. $1: the replica leading when the logs were marked.
fault_deposed_binds() {
    local n
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        tail -c +"$((${FAULT_LOG_MARK[$n]:-0} + 1))" "$LOCAL_DIR/scheduler-$n.log" |
            grep -E 'successfully acquired lease|failed to renew lease|leaderelection lost|successfully bound pod' |
            awk -v n="$n" '{ print substr($1, 2) " " $2 "\t" n "\t" $0 }'
    done | sort -s -k1,2 | awk -F'\t' -v holder="$1" '
        $3 ~ /successfully acquired lease/ { holder = $2; lost[$2] = 0; next }
        $3 ~ /failed to renew lease|leaderelection lost/ { lost[$2] = 1; if (holder == $2) holder = ""; next }
        $3 ~ /successfully bound pod/ && (lost[$2] || (holder != "" && holder != $2)) {
            sub(/.*successfully bound pod /, "", $3); print "scheduler-" $2 ": " $3 }'
}

fault_mark_logs() {
    local n
    FAULT_LOG_MARK=()
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        FAULT_LOG_MARK[n]=$(stat -c %s "$LOCAL_DIR/scheduler-$n.log" 2>/dev/null || echo 0)
    done
}

# Nodes whose pods request more than allocatable: "node what used/allocatable".
fault_overcommitted() {
    {
        kubectl get nodes -o jsonpath='{range .items[*]}N|{.metadata.name}|{.status.allocatable.cpu}|{.status.allocatable.memory}|{.status.allocatable.pods}{"\n"}{end}'
        kubectl get pods -A -o jsonpath='{range .items[*]}P|{.spec.nodeName}|{.status.phase}|{range .spec.containers[*]}{.resources.requests.cpu},{.resources.requests.memory};{end}{"\n"}{end}'
    } | awk -F'|' '
        function q(s,   m, n) { # a quantity in milli-units
            if (s == "") return 0
            m = 1000
            if (s ~ /m$/) { m = 1; sub(/m$/, "", s) }
            else if (s ~ /Ki$/) { m *= 1024; sub(/Ki$/, "", s) }
            else if (s ~ /Mi$/) { m *= 1048576; sub(/Mi$/, "", s) }
            else if (s ~ /Gi$/) { m *= 1073741824; sub(/Gi$/, "", s) }
            else if (s ~ /Ti$/) { m *= 1099511627776; sub(/Ti$/, "", s) }
            else if (s ~ /k$/) { m *= 1e3; sub(/k$/, "", s) }
            else if (s ~ /M$/) { m *= 1e6; sub(/M$/, "", s) }
            else if (s ~ /G$/) { m *= 1e9; sub(/G$/, "", s) }
            else if (s ~ /T$/) { m *= 1e12; sub(/T$/, "", s) }
            n = s + 0
            return n * m
        }
        $1 == "N" { cpu[$2] = q($3); mem[$2] = q($4); pods[$2] = $5 + 0; next }
        $1 == "P" && $2 != "" && $3 != "Succeeded" && $3 != "Failed" {
            k = split($4, c, ";")
            for (i = 1; i <= k; i++) if (split(c[i], r, ",") == 2) { ucpu[$2] += q(r[1]); umem[$2] += q(r[2]) }
            upods[$2]++
        }
        END {
            for (n in cpu) {
                if (ucpu[n] > cpu[n]) printf "%s cpu %dm/%dm\n", n, ucpu[n], cpu[n]
                if (umem[n] > mem[n]) printf "%s memory %d/%d bytes\n", n, umem[n] / 1000, mem[n] / 1000
                if (upods[n] > pods[n]) printf "%s pods %d/%d\n", n, upods[n], pods[n]
            }
        }'
}

lease_field() { # JSONPATH
    kubectl -n "$FAULT_LEASE_NS" get lease "$FAULT_LEASE_NAME" -o jsonpath="{$1}" 2>/dev/null
}

# The Lease has a holder and its renewTime moves (a live leader renews).
fault_live_leader() {
    local first end=$((SECONDS + 30))
    FAULT_HOLDER=$(lease_field .spec.holderIdentity)
    [ -n "$FAULT_HOLDER" ] || return 1
    first=$(lease_field .spec.renewTime)
    while [ "$SECONDS" -lt "$end" ]; do
        sleep 1
        [ "$(lease_field .spec.renewTime)" != "$first" ] &&
            [ "$(lease_field .spec.holderIdentity)" = "$FAULT_HOLDER" ] && return 0
        FAULT_HOLDER=$(lease_field .spec.holderIdentity)
        [ -n "$FAULT_HOLDER" ] || return 1
    done
    return 1
}

# Local mode: replicas that exited (a lost Lease ends kube-scheduler) are
# started again, as their Deployment would.
fault_revive_schedulers() {
    local n
    [ "$MODE" = local ] || return 0
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        local_alive "scheduler-$n" && continue
        log "    scheduler-$n exited ($(grep -E 'leaderelection lost|F[0-9]{4} ' "$LOCAL_DIR/scheduler-$n.log" | tail -n1 | cut -c1-120)); starting it again"
        local_start_scheduler "$n"
    done
}

# fault_check NAME: the assertions after fault NAME; one summary line.
fault_check() {
    local name=$1 rc=0 doubles deposed over summary=""
    fault_revive_schedulers
    if wait_until "$FAULT_SETTLE" "every pod bound" fault_all_bound; then
        summary="bound: $(wc -l <"$E2E_WORK/fault-pods") pods, $(wc -l <"$E2E_WORK/fault-vms") VMs"
    else
        bad "$name: not bound after ${FAULT_SETTLE}s: $FAULT_UNBOUND"
        summary="bound: FAIL"
        rc=1
    fi
    if [ "$MODE" = local ]; then
        doubles=$(fault_double_binds)
        if [ -n "$doubles" ]; then
            bad "$name: pods bound twice (two 201 bindings): $(printf '%s\n' "$doubles" | tr '\n' ' ')"
            summary="$summary; single: FAIL"
            rc=1
        else
            summary="$summary; single: $(fault_binds_answered 201) binds 201, $(fault_binds_answered 409) 409"
        fi
        deposed=$(fault_deposed_binds "$FAULT_LEADER")
        if [ -n "$deposed" ]; then
            bad "$name: binds by a replica that did not hold the Lease:"
            printf '%s\n' "$deposed" | head -n 10 | sed 's/^/      /' >&2
            summary="$summary; fenced: FAIL ($(printf '%s\n' "$deposed" | wc -l))"
            rc=1
        else
            summary="$summary; fenced: ok"
        fi
    fi
    over=$(fault_overcommitted)
    if [ -n "$over" ]; then
        bad "$name: overcommitted: $(printf '%s\n' "$over" | tr '\n' ' ')"
        summary="$summary; allocatable: FAIL"
        rc=1
    else
        summary="$summary; allocatable: ok"
    fi
    if wait_until "$FAULT_SETTLE" "every VM pinned to its pod's node" fault_all_pinned; then
        summary="$summary; pinned: $(wc -l <"$E2E_WORK/fault-join") VMs"
    else
        bad "$name: VMs not pinned to their pod's node: $FAULT_UNPINNED"
        summary="$summary; pinned: FAIL"
        rc=1
    fi
    fault_revive_schedulers
    if fault_live_leader; then
        summary="$summary; leader: $FAULT_HOLDER"
    else
        bad "$name: no replica holds and renews Lease $FAULT_LEASE_NS/$FAULT_LEASE_NAME"
        summary="$summary; leader: FAIL"
        rc=1
    fi
    echo "    fault $name: $summary" >&2
    return $rc
}

# ---- the scenario --------------------------------------------------------------

# fault_round NAME SECONDS DESCRIPTION: a wave just before the fault (its
# binds and pin writes in flight as it starts), one every
# FAULT_WAVE_EVERY seconds during it, then the checks.
fault_round() {
    local name=$1 secs=$2 pids="" rc=0 n=0 t p
    if [ "$MODE" = local ]; then
        emu_control DELETE requests >/dev/null
        FAULT_LEADER=$(local_scheduler_leader)
        fault_mark_logs
    fi
    fault_wave "$name" 0 &
    pids=$!
    sleep 2
    log "  $name: $3 for ${secs}s"
    fault_start "$name" "$secs" || rc=1
    for ((t = 0; rc == 0 && t < secs; t += FAULT_WAVE_EVERY)); do
        n=$((n + 1))
        fault_wave "$name" "$n" &
        pids="$pids $!"
        sleep $((secs - t < FAULT_WAVE_EVERY ? secs - t : FAULT_WAVE_EVERY))
    done
    fault_end "$name"
    for p in $pids; do wait "$p" || rc=1; done
    [ "$rc" = 0 ] || return 1
    fault_check "$name"
}

# Local mode: both replicas restarted with short leader-election timings.
fault_short_leases() {
    local n
    # shellcheck disable=SC2034 # read by local_start_scheduler
    LOCAL_SCHEDULER_FLAGS=("${FAULT_LEASE[@]}")
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        local_alive "scheduler-$n" && local_stop "scheduler-$n" 15
        local_start_scheduler "$n"
    done
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        wait_until 30 "stickyvm-scheduler $n /healthz" local_scheduler_healthy "$n" || return 1
    done
    wait_until 30 "a scheduler replica leads" local_scheduler_leader || return 1
    log "  schedulers restarted with ${FAULT_LEASE[*]}"
}

scenario_faults() {
    local rc=0
    if [ "$MODE" != local ]; then
        fault_round storm 40 "429s for the scheduler (APF: a FlowSchema to a priority level of a few seats that rejects)" || rc=1
        apf_remove
        log "  outage, stall and slow link: local mode only (a cluster's etcd and API server are not the suite's to stop)"
        return $rc
    fi
    fault_short_leases || { bad "the schedulers did not come back with short leases"; return 1; }
    fault_round outage 10 "every write answers 500 etcdserver: request timed out" || rc=1
    fault_round stall 20 "requests accepted, never answered, then closed" || rc=1
    fault_round storm 60 "80% of the scheduler's writes, 30% of its reads and Lease requests answer 429 with Retry-After: 1" || rc=1
    fault_round slow 20 "reads wait 200 ms, writes 500 ms" || rc=1
    return $rc
}
