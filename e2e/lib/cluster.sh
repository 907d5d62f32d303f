# shellcheck shell=bash
# e2e/lib/cluster.sh - the e2e suite against a real cluster (sourced; bash;
# needs common.sh). The cluster is the one KUBECONFIG names.
#
# KubeVirt: when the cluster serves virtualmachines.kubevirt.io from
# KubeVirt's own CRD, VMs are started by KubeVirt. Without KubeVirt the
# stand-in CRDs of crds/ are installed (when missing) and
# e2e/lib/virt-controller.sh plays virt-controller in the test namespace
# (pods run registry.k8s.io/pause).
#
# stickyvm: used as installed in stickyvm-system. When the Deployments are
# missing, the suite installs it as docs/install.md says - `kubectl apply
# -k` of an overlay of manifests/ setting the image to $STICKYVM_IMAGE
# (default stickyvm/stickyvm:latest, which the nodes must be able to pull),
# then scripts/gen-apiserver-certs.sh - and removes it again at the end.

STICKYVM_NS=stickyvm-system
CLUSTER_INSTALLED=0
CLUSTER_CRDS=0

# Sets E2E_STANDIN=1 when VMs need the virt-controller stand-in.
cluster_detect_kubevirt() {
    local root=$1 label
    if ! kubectl get crd virtualmachines.kubevirt.io >/dev/null 2>&1; then
        if kubectl get kubevirts.kubevirt.io -A >/dev/null 2>&1; then
            die "KubeVirt is installed but virtualmachines.kubevirt.io is not served"
        fi
        log "no KubeVirt: installing the stand-in CRDs of crds/"
        kubectl apply -f "$root/crds/" >/dev/null || die "kubectl apply -f crds/ failed"
        kubectl wait --for=condition=Established --timeout=60s \
            crd/virtualmachines.kubevirt.io crd/virtualmachineinstances.kubevirt.io >/dev/null ||
            die "the stand-in CRDs are not established"
        CLUSTER_CRDS=1
        E2E_STANDIN=1
        return
    fi
    label=$(kubectl get crd virtualmachines.kubevirt.io \
        -o jsonpath='{.metadata.labels.stickyvm\.io/stand-in}')
    if [ "$label" = true ]; then
        E2E_STANDIN=1
    else
        log "KubeVirt serves VirtualMachines: VMs are started by KubeVirt"
        E2E_STANDIN=0
    fi
}

cluster_stickyvm_installed() {
    kubectl -n "$STICKYVM_NS" get deployment stickyvm-scheduler stickyvm-apiserver >/dev/null 2>&1
}

cluster_install() { # ROOT WORKDIR
    local root=$1 work=$2 overlay=$2/overlay
    log "installing stickyvm (image ${STICKYVM_IMAGE:-stickyvm/stickyvm:latest})"
    mkdir -p "$overlay"
    cat >"$overlay/kustomization.yaml" <<EOF
resources:
  - $(realpath --relative-to="$overlay" "$root/manifests")
images:
  - name: stickyvm/stickyvm
    newName: $(echo "${STICKYVM_IMAGE:-stickyvm/stickyvm:latest}" | sed 's/:[^:/]*$//')
    newTag: $(echo "${STICKYVM_IMAGE:-stickyvm/stickyvm:latest}" | sed -n 's/.*:\([^:/]*\)$/\1/p' | grep . || echo latest)
EOF
    kubectl apply -k "$overlay" >"$work/install.log" 2>&1 ||
        die "kubectl apply -k failed: $(tail -5 "$work/install.log")"
    "$root/scripts/gen-apiserver-certs.sh" --dir "$work/certs" >>"$work/install.log" 2>&1 ||
        die "gen-apiserver-certs.sh failed: $(tail -5 "$work/install.log")"
    CLUSTER_INSTALLED=1
}

cluster_wait_ready() {
    local d
    for d in stickyvm-scheduler stickyvm-apiserver; do
        kubectl -n "$STICKYVM_NS" rollout status "deployment/$d" --timeout=300s >/dev/null ||
            die "deployment $d did not become ready"
    done
    wait_until 120 "APIService v1.subresources.stickyvm.io Available" cluster_apiservice_available ||
        die "the APIService v1.subresources.stickyvm.io is not Available"
}

cluster_apiservice_available() {
    [ "$(kubectl get apiservice v1.subresources.stickyvm.io \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" = True ]
}

cluster_setup() { # ROOT WORKDIR
    kubectl get --raw /readyz >/dev/null 2>&1 || kubectl get nodes >/dev/null ||
        die "cannot reach the cluster of KUBECONFIG=$KUBECONFIG"
    cluster_detect_kubevirt "$1"
    cluster_stickyvm_installed || cluster_install "$1" "$2"
    cluster_wait_ready
}

# The scheduler replica holding the Lease (its pod name: the holder
# identity is <hostname>_<uuid>, and a pod's hostname is its name).
cluster_scheduler_leader_pod() {
    local holder
    holder=$(kubectl -n kube-system get lease stickyvm-scheduler \
        -o jsonpath='{.spec.holderIdentity}' 2>/dev/null) || return 1
    [ -n "$holder" ] && echo "${holder%%_*}"
}

cluster_teardown() { # ROOT WORKDIR
    if [ "$CLUSTER_INSTALLED" = 1 ]; then
        log "removing the stickyvm installed for the suite"
        kubectl delete -k "$2/overlay" --ignore-not-found --wait=false >/dev/null 2>&1
    fi
    if [ "$CLUSTER_CRDS" = 1 ]; then
        kubectl delete -f "$1/crds/" --ignore-not-found --wait=false >/dev/null 2>&1
    fi
}

# Logs of every pod of a Deployment (for the RBAC check).
cluster_logs() { # DEPLOYMENT
    kubectl -n "$STICKYVM_NS" logs -l "app.kubernetes.io/name=$1" --tail=-1 --prefix \
        --max-log-requests=10 2>&1
}
