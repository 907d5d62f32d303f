#!/usr/bin/env bash
# e2e/lib/virt-controller.sh - plays KubeVirt's virt-controller for the
# e2e suite and the demo on clusters without KubeVirt (the emulator, or a
# cluster with the stand-in CRDs of crds/), and, when asked, the kubelet
# for the pods it creates. Never run it where KubeVirt is installed.
#
# Usage: e2e/lib/virt-controller.sh NAMESPACE     (KUBECONFIG: the cluster)
#        VIRT_CONTROLLER_INTERVAL=1 (seconds between passes)
#        VIRT_CONTROLLER_IMAGE=registry.k8s.io/pause:3.9 (the pod's image)
#        VIRT_CONTROLLER_KUBELET=0 (1: also play the kubelet, see below;
#          e2e/lib/local.sh sets it against the emulator, which has no
#          kubelets; the e2e suite's cluster mode leaves it off)
#
# Each pass reads the namespace's VirtualMachines, VirtualMachineInstances
# and pods with ONE kubectl call and, like virt-controller:
#   - a VM that should run (runStrategy Always / RerunOnFailure / Manual with
#     running, or spec.running: true) and has no VMI gets one, named after
#     the VM, with the VM as controller ownerReference;
#   - a VMI without a virt-launcher pod gets one: generateName
#     virt-launcher-<vm>-, labels kubevirt.io=virt-launcher,
#     kubevirt.io/created-by=<VMI uid>, vm.kubevirt.io/name=<vm>, the VMI as
#     controller ownerReference, spec.schedulerName and
#     terminationGracePeriodSeconds (default 0) from the VM template;
#   - when that pod is bound, the VMI's status gets phase Running and
#     nodeName (what stickyvm-apiserver's /pin without ?node= reads);
#   - when the pod of a VMI that had one is gone (deleted, evicted; not
#     while it terminates), the VMI has failed: it is deleted, and the next pass creates a new VMI (new
#     uid) and a new pod - as virt-controller restarts a VM;
#   - VMIs of VMs that are gone or stopped, and launcher pods of VMIs that
#     are gone, are deleted (the garbage collector's part);
#   - a VM that should run gets KubeVirt's status, which `kubectl get vm`
#     shows (STATUS, READY): printableStatus Running with a Ready condition
#     True once its VMI runs, ErrorUnschedulable while its launcher pod is
#     unschedulable, Starting otherwise (Ready False).
#
# With VIRT_CONTROLLER_KUBELET=1 it also plays the kubelet for those
# launcher pods, on every node whose Lease in kube-node-lease was not
# renewed in the last 40 s (a node with a live kubelet is left alone) and
# whose Ready condition is not Unknown: a node e2e/lib/node-lifecycle.sh
# lost has a dead kubelet, which neither starts its pods nor finishes
# their deletion (they stay, Terminating once deleted, until force-deleted;
# their VMIs stay too, as KubeVirt's do on a dead node):
#   - a bound pod becomes Running through pods/status, as the kubelet
#     reports it: conditions Initialized, Ready, ContainersReady (and the
#     scheduler's PodScheduled) True, the container running and ready, a
#     pod IP 10.244.<N>.<M> (N from the node's podCIDR a.b.N.0/24, or its
#     place in the node list; M the next free host number on the node),
#     hostIP the node's InternalIP, startTime;
#   - a pod being deleted goes away once its grace period has passed
#     (deletionTimestamp reached): deleted with gracePeriodSeconds=0 (once:
#     a pod kept at grace 0 waits for its finalizers);
#   - the VMI follows KubeVirt's phases: Scheduling while its pod is not
#     running, Scheduled with status.nodeName once it runs, then Running
#     with the pod's IP as interface "default" and a Ready condition.
# Without it, the VMI gets phase Running and nodeName as soon as its pod is
# bound (a real kubelet runs the pod).
# Errors are logged and retried on the next pass.
set -uo pipefail

ns=${1:?usage: virt-controller.sh NAMESPACE}
interval=${VIRT_CONTROLLER_INTERVAL:-1}
image=${VIRT_CONTROLLER_IMAGE:-registry.k8s.io/pause:3.9}
kubelet=${VIRT_CONTROLLER_KUBELET:-0}
export TZ=UTC # timestamps below are RFC 3339 in UTC, compared as strings

log() { printf '%s virt-controller: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
now() { printf '%(%Y-%m-%dT%H:%M:%SZ)T' -1; }

declare -A launched   # VMI uid -> 1 once a pod was created for it

# One line per object: kind|name|uid|deleting|running|runStrategy|
# ownerUid|phase|vmiNode|createdBy|podNode|schedulerName|resourceVersion|
# podIP|qosClass|podScheduledTime|vmiIPs|vmGracePeriod|deletionGracePeriod|
# printableStatus|readyCondition|podScheduledReason
snapshot() {
    kubectl -n "$ns" get virtualmachines,virtualmachineinstances,pods -o jsonpath='{range .items[*]}{.kind}|{.metadata.name}|{.metadata.uid}|{.metadata.deletionTimestamp}|{.spec.running}|{.spec.runStrategy}|{.metadata.ownerReferences[0].uid}|{.status.phase}|{.status.nodeName}|{.metadata.labels.kubevirt\.io/created-by}|{.spec.nodeName}|{.spec.template.spec.schedulerName}|{.metadata.resourceVersion}|{.status.podIP}|{.status.qosClass}|{.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}|{.status.interfaces[*].ipAddress}|{.spec.template.spec.terminationGracePeriodSeconds}|{.metadata.deletionGracePeriodSeconds}|{.status.printableStatus}|{.status.conditions[?(@.type=="Ready")].status}|{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}'
}

# put_status KIND RESOURCE NAME RESOURCE_VERSION STATUS_JSON: PUT of the
# status subresource of a kubevirt.io object (kube-apiserver keeps
# everything but status from the stored object of a custom resource).
# `kubectl replace --raw` rather than `kubectl patch --subresource`, which
# kubectl before 1.24 lacks.
put_status() {
    printf '{"apiVersion":"kubevirt.io/v1","kind":"%s","metadata":{"name":"%s","namespace":"%s","resourceVersion":"%s"},"status":%s}' \
        "$1" "$3" "$ns" "$4" "$5" |
        kubectl replace --raw "/apis/kubevirt.io/v1/namespaces/$ns/$2/$3/status" -f - >/dev/null
}

set_vmi_status() { # name resourceVersion phase [node [ip]]
    local status t
    status=$(printf '{"phase":"%s"' "$3")
    [ -z "${4:-}" ] || status+=$(printf ',"nodeName":"%s"' "$4")
    if [ -n "${5:-}" ]; then
        t=$(now)
        status+=$(printf ',"interfaces":[{"name":"default","ipAddress":"%s","ipAddresses":["%s"],"infoSource":"domain"}],"conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"%s"}]' "$5" "$5" "$t")
    fi
    put_status VirtualMachineInstance virtualmachineinstances "$1" "$2" "$status}"
}

# vm_follow VM: the VM's printableStatus and Ready condition after its
# VMI's phase and its launcher pod's scheduling (as virt-controller sets
# them); written only when they change.
vm_follow() {
    local name=$1 uid=${vmi_uid[$1]:-} want=Starting ready=False
    if [ -n "$uid" ] && [ "${vmi_phase[$name]}" = Running ]; then
        want=Running ready=True
    elif [ -n "$uid" ] && [ -n "${pod_unsched[$uid]:-}" ]; then
        want=ErrorUnschedulable
    fi
    [ "$want" = "${vm_pstat[$name]}" ] && [ "$ready" = "${vm_ready[$name]}" ] && return 0
    put_status VirtualMachine virtualmachines "$name" "${vm_rv[$name]}" \
        "$(printf '{"created":%s,"ready":%s,"printableStatus":"%s","conditions":[{"type":"Ready","status":"%s","lastProbeTime":null,"lastTransitionTime":"%s"}]}' \
            "$([ -n "$uid" ] && echo true || echo false)" "$([ "$ready" = True ] && echo true || echo false)" \
            "$want" "$ready" "$(now)")" 2>/dev/null &&
        log "VM $name: $want"
}

should_run() { # running runStrategy
    case "$2" in
        Always|RerunOnFailure) return 0 ;;
        Halted) return 1 ;;
    esac
    [ "$1" = true ]
}

create_vmi() { # vm vm_uid scheduler
    kubectl -n "$ns" create -f - -o jsonpath='{.metadata.uid}' <<EOT
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: $1
  labels:
    kubevirt.io/vm: $1
  ownerReferences:
    - apiVersion: kubevirt.io/v1
      kind: VirtualMachine
      name: $1
      uid: $2
      controller: true
      blockOwnerDeletion: true
spec:
  schedulerName: $3
EOT
}

create_pod() { # vm vmi_uid scheduler grace
    kubectl -n "$ns" create -f - -o name <<EOT
apiVersion: v1
kind: Pod
metadata:
  generateName: virt-launcher-$1-
  labels:
    kubevirt.io: virt-launcher
    kubevirt.io/created-by: $2
    vm.kubevirt.io/name: $1
  annotations:
    kubevirt.io/domain: $1
  ownerReferences:
    - apiVersion: kubevirt.io/v1
      kind: VirtualMachineInstance
      name: $1
      uid: $2
      controller: true
      blockOwnerDeletion: true
spec:
  schedulerName: $3
  restartPolicy: Never
  terminationGracePeriodSeconds: $4
  containers:
    - name: compute
      image: $image
      resources:
        requests:
          cpu: 10m
          memory: 16Mi
EOT
}

# launch VM VMI_UID: creates the VMI's launcher pod.
launch() {
    local pod
    if pod=$(create_pod "$1" "$2" "${vm_sched[$1]}" "${vm_grace[$1]}" 2>&1); then
        launched[$2]=1
        log "VMI $1: created ${pod#pod/}"
    else
        log "VMI $1: creating the pod failed: $pod"
    fi
}

# ---- the kubelet's part (VIRT_CONTROLLER_KUBELET=1) ---------------------------

declare -A node_ip    # node -> its InternalIP
declare -A node_net   # node -> the first three octets of its pod IPs
declare -A node_live  # node -> 1 when a kubelet renewed its Lease lately
declare -A node_dead  # node -> 1 when its Ready condition is Unknown (lost)
declare -A next_host  # node -> the host number to try next
declare -A ip_used    # pod IP -> 1, pods of every namespace
ALLOC_IP=""

# Reads the nodes, their Leases and every pod's IP with one kubectl call.
kubelet_refresh() {
    local lines kind name lease_ns ip cidr renew pip ready fresh epoch i=0
    printf -v epoch '%(%s)T' -1
    printf -v fresh '%(%Y-%m-%dT%H:%M:%S)T' $((epoch - 40))
    lines=$(kubectl get nodes,leases.coordination.k8s.io,pods -A -o jsonpath='{range .items[*]}{.kind}|{.metadata.name}|{.metadata.namespace}|{.status.addresses[?(@.type=="InternalIP")].address}|{.spec.podCIDR}|{.spec.renewTime}|{.status.podIP}|{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}') ||
        { log "listing nodes, leases and pods failed"; return 1; }
    node_ip=() node_net=() node_live=() node_dead=() ip_used=()
    while IFS='|' read -r kind name lease_ns ip cidr renew pip ready; do
        case $kind in
            Node)
                node_ip[$name]=$ip
                [ "$ready" != Unknown ] || node_dead[$name]=1
                node_net[$name]=10.244.$((i % 256))
                [[ $cidr =~ ^([0-9]+\.[0-9]+\.[0-9]+)\.0/24$ ]] && node_net[$name]=${BASH_REMATCH[1]}
                i=$((i + 1)) ;;
            Lease)
                [ "$lease_ns" = kube-node-lease ] && [[ $renew > $fresh ]] && node_live[$name]=1 ;;
            Pod)
                [ -z "$pip" ] || ip_used[$pip]=1 ;;
        esac
    done <<< "$lines"
}

# played NODE: the node exists, no kubelet of its own renews its Lease,
# and it is not lost.
played() { [ -n "${node_net[$1]:-}" ] && [ -z "${node_live[$1]:-}" ] && [ -z "${node_dead[$1]:-}" ]; }

# alloc_ip NODE: the next free pod IP of NODE in ALLOC_IP (as host-local
# IPAM hands them out: in turn, skipping those in use).
alloc_ip() {
    local node=$1 h=${next_host[$1]:-2} n ip
    for ((n = 0; n < 253; n++)); do
        ip=${node_net[$node]}.$h
        h=$((h >= 254 ? 2 : h + 1))
        if [ -z "${ip_used[$ip]:-}" ]; then
            next_host[$node]=$h
            ip_used[$ip]=1
            ALLOC_IP=$ip
            return 0
        fi
    done
    return 1
}

# The status the kubelet reports for a started launcher pod.
running_status() { # node ip podUid podScheduledTime qosClass
    local t cid=${3//-/}
    t=$(now)
    printf '{"phase":"Running","conditions":['
    printf '{"type":"%s","status":"True","lastProbeTime":null,"lastTransitionTime":"%s"},' \
        Initialized "$t" Ready "$t" ContainersReady "$t"
    printf '{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"%s"}],' "${4:-$t}"
    [ -z "${node_ip[$1]}" ] || printf '"hostIP":"%s",' "${node_ip[$1]}"
    printf '"podIP":"%s","podIPs":[{"ip":"%s"}],"startTime":"%s",' "$2" "$2" "$t"
    printf '"containerStatuses":[{"name":"compute","state":{"running":{"startedAt":"%s"}},"lastState":{},"ready":true,"restartCount":0,"image":"%s","imageID":"","containerID":"containerd://%s%s","started":true}]' \
        "$t" "$image" "$cid" "$cid"
    [ -z "$5" ] || printf ',"qosClass":"%s"' "$5"
    printf '}'
}

# run_pod POD NODE UID PODSCHEDULED_TIME QOS: PUT of pods/status with the
# pod as read (kubectl's JSON puts status last: it is cut there) and the
# new status; kube-apiserver keeps spec from the stored pod.
run_pod() {
    local pod
    alloc_ip "$2" || { log "pod $1: no free pod IP on $2"; return 1; }
    pod=$(kubectl -n "$ns" get pod "$1" -o json) || return 1
    grep -q '^    "status": {' <<< "$pod" || { log "pod $1: no status in kubectl's JSON"; return 1; }
    { sed '/^    "status": {/,$d' <<< "$pod"
      printf '    "status": %s\n}\n' "$(running_status "$2" "$ALLOC_IP" "$3" "$4" "$5")"
    } | kubectl replace --raw "/api/v1/namespaces/$ns/pods/$1/status" -f - >/dev/null
}

# kubelet_pass: starts the bound launcher pods and removes those whose
# grace period is over, on the nodes played; updates pod_phase/pod_ip.
kubelet_pass() {
    local line name createdby deleting pnode phase uid stime qos dgrace t refreshed=0
    t=$(now)
    for line in "${pods[@]}"; do
        IFS='|' read -r name createdby deleting pnode phase uid stime qos dgrace <<< "$line"
        [ -n "$pnode" ] || continue
        # grace 0 and still there: finalizers hold it, nothing left to stop
        [ -z "$deleting" ] || [ "$dgrace" != 0 ] || continue
        [ -n "$deleting" ] || [ "$phase" != Running ] || continue
        [ -z "$deleting" ] || [[ ! $deleting > $t ]] || continue
        if [ "$refreshed" = 0 ]; then
            kubelet_refresh || return
            refreshed=1
        fi
        played "$pnode" || continue
        if [ -n "$deleting" ]; then
            kubectl -n "$ns" delete pod "$name" --grace-period=0 --force --wait=false >/dev/null 2>&1 &&
                log "pod $name: grace period over, deleted from $pnode"
        elif run_pod "$name" "$pnode" "$uid" "$stime" "$qos" 2>/dev/null; then
            pod_phase[$createdby]=Running
            pod_ip[$createdby]=$ALLOC_IP
            log "pod $name: Running on $pnode, IP $ALLOC_IP"
        fi
    done
}

# vmi_follow VMI UID: KubeVirt's VMI phases after its pod's: Scheduling
# while the pod does not run, Scheduled (with the node) once it does, then
# Running with the pod's IP.
vmi_follow() {
    local name=$1 uid=$2 node="" ip="" want
    if [ "${pod_phase[$uid]:-}" != Running ]; then
        want=Scheduling
    else
        node=${pod_node[$uid]}
        want=Scheduled
        case ${vmi_phase[$name]} in
            Scheduled|Running) want=Running ip=${pod_ip[$uid]} ;;
        esac
    fi
    [ "$want" = "${vmi_phase[$name]}" ] && [ "$node" = "${vmi_node[$name]}" ] &&
        [ "$ip" = "${vmi_ip[$name]}" ] && return 0
    set_vmi_status "$name" "${vmi_rv[$name]}" "$want" "$node" "$ip" 2>/dev/null &&
        log "VMI $name: $want${node:+ on $node}${ip:+, IP $ip}"
}

# ---- virt-controller's part ------------------------------------------------------

reconcile() {
    local lines line kind name uid deleting running strategy owner phase vnode createdby pnode sched rv
    local pip qos stime vips grace dgrace pstat ready sreason
    declare -A vm_uid vm_run vm_sched vm_grace vm_rv vm_pstat vm_ready
    declare -A vmi_uid vmi_owner vmi_phase vmi_node vmi_ip
    declare -A vmi_deleting vmi_rv pod_of pod_any pod_node pod_phase pod_ip pod_unsched
    local -a pods=()

    lines=$(snapshot) || { log "listing failed"; return; }
    while IFS='|' read -r kind name uid deleting running strategy owner phase vnode createdby pnode sched rv pip qos stime vips grace dgrace pstat ready sreason; do
        case "$kind" in
            VirtualMachine)
                [ -n "$deleting" ] && continue
                vm_uid[$name]=$uid
                vm_sched[$name]=${sched:-default-scheduler}
                vm_grace[$name]=${grace:-0}
                vm_rv[$name]=$rv
                vm_pstat[$name]=$pstat
                vm_ready[$name]=$ready
                if should_run "$running" "$strategy"; then vm_run[$name]=1; fi ;;
            VirtualMachineInstance)
                vmi_uid[$name]=$uid
                vmi_owner[$name]=$owner
                vmi_phase[$name]=$phase
                vmi_node[$name]=$vnode
                vmi_ip[$name]=$vips
                vmi_rv[$name]=$rv
                [ -z "$deleting" ] || vmi_deleting[$name]=1 ;;
            Pod)
                [ -n "$createdby" ] || continue
                pods+=("$name|$createdby|$deleting|$pnode|$phase|$uid|$stime|$qos|$dgrace")
                pod_any[$createdby]=1
                if [ -z "$deleting" ]; then
                    pod_of[$createdby]=$name
                    pod_node[$createdby]=$pnode
                    pod_phase[$createdby]=$phase
                    pod_ip[$createdby]=$pip
                    [ "$sreason" != Unschedulable ] || pod_unsched[$createdby]=1
                fi ;;
        esac
    done <<< "$lines"

    [ "$kubelet" != 1 ] || kubelet_pass

    # Launcher pods whose VMI is gone: the garbage collector's part.
    local -A vmi_alive=()
    for name in "${!vmi_uid[@]}"; do vmi_alive[${vmi_uid[$name]}]=1; done
    for line in "${pods[@]}"; do
        IFS='|' read -r name createdby deleting _ <<< "$line"
        [ -n "$deleting" ] || [ -n "${vmi_alive[$createdby]:-}" ] && continue
        kubectl -n "$ns" delete pod "$name" --wait=false >/dev/null 2>&1 &&
            log "deleted pod $name (its VMI is gone)"
    done

    # VMIs: delete those without a running VM, and failed ones.
    for name in "${!vmi_uid[@]}"; do
        uid=${vmi_uid[$name]}
        [ -z "${vmi_deleting[$name]:-}" ] || continue
        if [ -z "${vm_run[$name]:-}" ] || [ "${vmi_owner[$name]}" != "${vm_uid[$name]:-}" ]; then
            kubectl -n "$ns" delete vmi "$name" --wait=false >/dev/null 2>&1 &&
                log "deleted VMI $name (its VM is gone or stopped)"
            continue
        fi
        if [ -z "${pod_any[$uid]:-}" ] && [ -n "${launched[$uid]:-}" ]; then
            kubectl -n "$ns" delete vmi "$name" --wait=false >/dev/null 2>&1 &&
                log "VMI $name failed (its pod is gone): deleted, the VM restarts it"
            unset "launched[$uid]"
            continue
        fi
        if [ -z "${pod_any[$uid]:-}" ]; then
            launch "$name" "$uid"
            continue
        fi
        [ -n "${pod_of[$uid]:-}" ] || continue # its pod is terminating
        pnode=${pod_node[$uid]}
        if [ "$kubelet" = 1 ]; then
            vmi_follow "$name" "$uid"
        elif [ -n "$pnode" ] && [ "${vmi_node[$name]}" != "$pnode" ]; then
            set_vmi_status "$name" "${vmi_rv[$name]}" Running "$pnode" 2>/dev/null &&
                log "VMI $name: running on $pnode"
        fi
    done

    # VMs that should run and have no VMI.
    for name in "${!vm_run[@]}"; do
        [ -z "${vmi_uid[$name]:-}" ] || continue
        if uid=$(create_vmi "$name" "${vm_uid[$name]}" "${vm_sched[$name]}" 2>&1); then
            log "VM $name: created VMI $name ($uid)"
            launch "$name" "$uid"
        else
            log "VM $name: creating the VMI failed: $uid"
        fi
    done
    for name in "${!vm_run[@]}"; do vm_follow "$name"; done
}

trap 'exit 0' TERM INT
roles=virt-controller
[ "$kubelet" != 1 ] || roles="virt-controller and the kubelet"
log "playing $roles in namespace $ns (every ${interval}s)"
while :; do
    reconcile
    sleep "$interval" &
    wait $!
done
