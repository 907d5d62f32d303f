#!/usr/bin/env bash
# e2e/lib/virt-controller.sh - plays KubeVirt's virt-controller for the
# e2e suite and the demo on clusters without KubeVirt (the emulator, or a
# cluster with the stand-in CRDs of crds/). Never run it where KubeVirt is
# installed.
#
# Usage: e2e/lib/virt-controller.sh NAMESPACE     (KUBECONFIG: the cluster)
#        VIRT_CONTROLLER_INTERVAL=1 (seconds between passes)
#        VIRT_CONTROLLER_IMAGE=registry.k8s.io/pause:3.9 (the pod's image)
#
# Each pass reads the namespace's VirtualMachines, VirtualMachineInstances
# and pods with ONE kubectl call and, like virt-controller:
#   - a VM that should run (runStrategy Always / RerunOnFailure / Manual with
#     running, or spec.running: true) and has no VMI gets one, named after
#     the VM, with the VM as controller ownerReference;
#   - a VMI without a virt-launcher pod gets one: generateName
#     virt-launcher-<vm>-, labels kubevirt.io=virt-launcher,
#     kubevirt.io/created-by=<VMI uid>, vm.kubevirt.io/name=<vm>, the VMI as
#     controller ownerReference, spec.schedulerName from the VM template;
#   - when that pod is bound, the VMI's status gets phase Running and
#     nodeName (what stickyvm-apiserver's /pin without ?node= reads);
#   - when the pod of a VMI that had one is gone (deleted, evicted), the VMI
#     has failed: it is deleted, and the next pass creates a new VMI (new
#     uid) and a new pod - as virt-controller restarts a VM;
#   - VMIs of VMs that are gone or stopped, and launcher pods of VMIs that
#     are gone, are deleted (the garbage collector's part).
# Errors are logged and retried on the next pass.
set -uo pipefail

ns=${1:?usage: virt-controller.sh NAMESPACE}
interval=${VIRT_CONTROLLER_INTERVAL:-1}
image=${VIRT_CONTROLLER_IMAGE:-registry.k8s.io/pause:3.9}

log() { printf '%s virt-controller: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

declare -A launched   # VMI uid -> 1 once a pod was created for it

# One line per object: kind|name|uid|deleting|running|runStrategy|
# ownerUid|vmiPhase|vmiNode|createdBy|podNode|schedulerName|resourceVersion
snapshot() {
    kubectl -n "$ns" get virtualmachines,virtualmachineinstances,pods -o jsonpath='{range .items[*]}{.kind}|{.metadata.name}|{.metadata.uid}|{.metadata.deletionTimestamp}|{.spec.running}|{.spec.runStrategy}|{.metadata.ownerReferences[0].uid}|{.status.phase}|{.status.nodeName}|{.metadata.labels.kubevirt\.io/created-by}|{.spec.nodeName}|{.spec.template.spec.schedulerName}|{.metadata.resourceVersion}{"\n"}{end}'
}

# PUT of the VMI's status subresource (kube-apiserver keeps everything but
# status from the stored object). `kubectl replace --raw` rather than
# `kubectl patch --subresource`, which kubectl before 1.24 lacks.
set_vmi_status() { # name resourceVersion node
    printf '{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"%s","namespace":"%s","resourceVersion":"%s"},"status":{"phase":"Running","nodeName":"%s"}}' \
        "$1" "$ns" "$2" "$3" |
        kubectl replace --raw "/apis/kubevirt.io/v1/namespaces/$ns/virtualmachineinstances/$1/status" -f - >/dev/null
}

should_run() { # running runStrategy
    case "$2" in
        Always|RerunOnFailure) return 0 ;;
        Halted) return 1 ;;
    esac
    [ "$1" = true ]
}

create_vmi() { # vm vm_uid scheduler
    kubectl -n "$ns" create -f - -o jsonpath='{.metadata.uid}' <<EOF
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
EOF
}

create_pod() { # vm vmi_uid scheduler
    kubectl -n "$ns" create -f - -o name <<EOF
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
  terminationGracePeriodSeconds: 0
  containers:
    - name: compute
      image: $image
      resources:
        requests:
          cpu: 10m
          memory: 16Mi
EOF
}

reconcile() {
    local lines line kind name uid deleting running strategy owner phase vnode createdby pnode sched rv
    declare -A vm_uid vm_run vm_sched vmi_uid vmi_owner vmi_phase vmi_node vmi_deleting vmi_rv
    declare -A pod_of pod_node
    local -a pods=()

    lines=$(snapshot) || { log "listing failed"; return; }
    while IFS='|' read -r kind name uid deleting running strategy owner phase vnode createdby pnode sched rv; do
        case "$kind" in
            VirtualMachine)
                [ -n "$deleting" ] && continue
                vm_uid[$name]=$uid
                vm_sched[$name]=${sched:-default-scheduler}
                if should_run "$running" "$strategy"; then vm_run[$name]=1; fi ;;
            VirtualMachineInstance)
                vmi_uid[$name]=$uid
                vmi_owner[$name]=$owner
                vmi_phase[$name]=$phase
                vmi_node[$name]=$vnode
                vmi_rv[$name]=$rv
                [ -z "$deleting" ] || vmi_deleting[$name]=1 ;;
            Pod)
                [ -n "$createdby" ] || continue
                pods+=("$name|$createdby|$deleting")
                if [ -z "$deleting" ]; then
                    pod_of[$createdby]=$name
                    pod_node[$createdby]=$pnode
                fi ;;
        esac
    done <<< "$lines"

    # Launcher pods whose VMI is gone: the garbage collector's part.
    for line in "${pods[@]}"; do
        IFS='|' read -r name createdby deleting <<< "$line"
        [ -z "$deleting" ] || continue
        local alive=0 v
        for v in "${!vmi_uid[@]}"; do
            [ "${vmi_uid[$v]}" = "$createdby" ] && alive=1
        done
        if [ "$alive" = 0 ]; then
            kubectl -n "$ns" delete pod "$name" --wait=false >/dev/null 2>&1 &&
                log "deleted pod $name (its VMI is gone)"
        fi
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
        if [ -z "${pod_of[$uid]:-}" ] && [ -n "${launched[$uid]:-}" ]; then
            kubectl -n "$ns" delete vmi "$name" --wait=false >/dev/null 2>&1 &&
                log "VMI $name failed (its pod is gone): deleted, the VM restarts it"
            unset "launched[$uid]"
            continue
        fi
        if [ -z "${pod_of[$uid]:-}" ]; then
            if pod=$(create_pod "$name" "$uid" "${vm_sched[$name]}" 2>&1); then
                launched[$uid]=1
                log "VMI $name: created ${pod#pod/}"
            else
                log "VMI $name: creating the pod failed: $pod"
            fi
            continue
        fi
        pnode=${pod_node[$uid]}
        if [ -n "$pnode" ] && [ "${vmi_node[$name]}" != "$pnode" ]; then
            set_vmi_status "$name" "${vmi_rv[$name]}" "$pnode" 2>/dev/null &&
                log "VMI $name: running on $pnode"
        fi
    done

    # VMs that should run and have no VMI.
    for name in "${!vm_run[@]}"; do
        [ -z "${vmi_uid[$name]:-}" ] || continue
        if uid=$(create_vmi "$name" "${vm_uid[$name]}" "${vm_sched[$name]}" 2>&1); then
            log "VM $name: created VMI $name ($uid)"
            if pod=$(create_pod "$name" "$uid" "${vm_sched[$name]}" 2>&1); then
                launched[$uid]=1
                log "VMI $name: created ${pod#pod/}"
            fi
        else
            log "VM $name: creating the VMI failed: $uid"
        fi
    done
}

trap 'exit 0' TERM INT
log "playing virt-controller in namespace $ns (every ${interval}s)"
while :; do
    reconcile
    sleep "$interval" &
    wait $!
done
