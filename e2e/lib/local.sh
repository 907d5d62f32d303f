# shellcheck shell=bash
# e2e/lib/local.sh - a local stickyvm "cluster" for the e2e suite and the
# demo (sourced; bash; needs e2e/lib/common.sh):
#
#   the API emulator (tests/emulator) with N nodes, enforcing RBAC from the
#   ClusterRoles/Roles and bindings applied to it (--authorization-mode=RBAC)
#   and playing kube-apiserver's aggregation layer towards the local
#   stickyvm-apiserver (--service-endpoint for the Service of the
#   APIService);
#   the manifests installed with `kubectl apply -k manifests/` and the
#   serving certificate with scripts/gen-apiserver-certs.sh, as on a cluster;
#   stickyvm-apiserver (one) and stickyvm-scheduler (two, leader-elected)
#   as local processes, authenticated with bearer tokens of their
#   ServiceAccounts (system:serviceaccount:stickyvm-system:<name>), with the
#   flags of the Deployments and the configuration from the applied
#   ConfigMap;
#   the virt-controller stand-in (e2e/lib/virt-controller.sh) per namespace,
#   also playing the kubelet for its pods (VIRT_CONTROLLER_KUBELET=1).
#
# Everything lives under LOCAL_DIR; local_down stops exactly the processes
# local_up started (their ids are in $LOCAL_DIR/pids/).
#
#   LOCAL_DIR=/tmp/x LOCAL_BIN=build LOCAL_NODES=4 local_up
#   export KUBECONFIG=$LOCAL_DIR/emulator/admin.kubeconfig
#   local_virt_controller NAMESPACE
#   local_down

LOCAL_NODES=${LOCAL_NODES:-4}
LOCAL_SA_NS=stickyvm-system
LOCAL_SCHEDULERS=${LOCAL_SCHEDULERS:-2}
LOCAL_SCHEDULER_FLAGS=() # more flags for the replicas started from now on

local_pid_file() { echo "$LOCAL_DIR/pids/$1"; }
local_pid() { cat "$(local_pid_file "$1")" 2>/dev/null; }

# local_start NAME LOGFILE COMMAND...: starts COMMAND in the background.
local_start() {
    local name=$1 logf=$2
    shift 2
    "$@" >>"$logf" 2>&1 &
    echo $! >"$(local_pid_file "$name")"
}

local_stop() { # NAME [SECONDS]
    stop_pid "$(local_pid "$1")" "${2:-15}"
    rm -f "$(local_pid_file "$1")"
}

local_alive() { kill -0 "$(local_pid "$1")" 2>/dev/null; }

local_token() { openssl rand -hex 24; }

# A kubeconfig for a bearer token (as the kubelet mounts one for a pod).
local_write_kubeconfig() { # FILE USER TOKEN
    umask 077
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: emulator
    cluster:
      server: $LOCAL_URL
      certificate-authority: $LOCAL_DIR/emulator/ca.crt
users:
  - name: $2
    user:
      token: $3
contexts:
  - name: $2
    context:
      cluster: emulator
      user: $2
current-context: $2
EOF
}

local_service_accounts() {
    local sa tok
    : >"$LOCAL_DIR/tokens.csv"
    for sa in stickyvm-scheduler stickyvm-apiserver; do
        tok=$(local_token)
        echo "$tok,system:serviceaccount:$LOCAL_SA_NS:$sa,$(local_token | cut -c1-16),\"system:serviceaccounts,system:serviceaccounts:$LOCAL_SA_NS\"" \
            >>"$LOCAL_DIR/tokens.csv"
        echo "$tok" >"$LOCAL_DIR/$sa.token"
    done
    chmod 600 "$LOCAL_DIR/tokens.csv" "$LOCAL_DIR"/*.token
}

local_start_emulator() {
    LOCAL_API_PORT=$(free_port) || die "no free port"
    echo "$LOCAL_API_PORT" >"$LOCAL_DIR/apiserver.port"
    local_start emulator "$LOCAL_DIR/emulator.log" "$LOCAL_BIN/stickyvm-emulator" \
        --data-dir "$LOCAL_DIR/emulator" --port 0 --nodes "$LOCAL_NODES" \
        --authorization-mode=RBAC --token-auth-file="$LOCAL_DIR/tokens.csv" \
        --service-endpoint="$LOCAL_SA_NS/stickyvm-apiserver=127.0.0.1:$LOCAL_API_PORT" \
        --aggregator-probe-interval-ms=500
    for _ in $(seq 1 100); do
        [ -s "$LOCAL_DIR/emulator/port" ] && break
        local_alive emulator || die "the emulator did not start: $(tail -5 "$LOCAL_DIR/emulator.log")"
        sleep 0.1
    done
    [ -s "$LOCAL_DIR/emulator/port" ] || die "the emulator did not start"
    LOCAL_URL="https://127.0.0.1:$(cat "$LOCAL_DIR/emulator/port")"
    export KUBECONFIG=$LOCAL_DIR/emulator/admin.kubeconfig
}

# What a person does on a cluster: apply the manifests (MANIFESTS, default
# ROOT/manifests), make the serving certificate (Secret + APIService
# caBundle). Keeps the scheduler configuration and the pin key the daemons
# are started with.
local_install() { # ROOT [MANIFESTS]
    local root=$1 manifests=${2:-$1/manifests}
    kubectl apply -k "$manifests/" 2>&1 | grep -v 'memcache.go' >>"$LOCAL_DIR/install.log" ||
        die "kubectl apply -k $manifests/ failed: $(cat "$LOCAL_DIR/install.log")"
    "$root/scripts/gen-apiserver-certs.sh" --dir "$LOCAL_DIR/certs" >>"$LOCAL_DIR/install.log" 2>&1 ||
        die "gen-apiserver-certs.sh failed: $(tail -5 "$LOCAL_DIR/install.log")"
    kubectl -n "$LOCAL_SA_NS" get configmap stickyvm-scheduler-config \
        -o jsonpath='{.data.config\.yaml}' >"$LOCAL_DIR/scheduler-config.yaml" ||
        die "the scheduler ConfigMap is missing"
    # the Deployment's --pin-annotation-key=$(STICKYVM_PIN_ANNOTATION_KEY)
    kubectl -n "$LOCAL_SA_NS" get configmap stickyvm-pin-key \
        -o jsonpath='{.data.key}' >"$LOCAL_DIR/pin-key" || die "the pin key ConfigMap is missing"
}

local_start_apiserver() {
    local_start apiserver "$LOCAL_DIR/apiserver.log" "$LOCAL_BIN/stickyvm-apiserver" \
        --secure-port="$LOCAL_API_PORT" --bind-address=127.0.0.1 \
        --tls-cert-file="$LOCAL_DIR/certs/tls.crt" \
        --tls-private-key-file="$LOCAL_DIR/certs/tls.key" \
        --kubeconfig="$LOCAL_DIR/stickyvm-apiserver.kubeconfig" \
        --pin-annotation-key="$(cat "$LOCAL_DIR/pin-key")" \
        --shutdown-timeout=10s --v=1
}

# local_start_scheduler N: replica N (1-based) on its own secure port.
local_start_scheduler() {
    local n=$1 port
    port=$(free_port) || die "no free port"
    echo "$port" >"$LOCAL_DIR/scheduler-$n.port"
    # KUBECONFIG, not --kubeconfig: as kube-scheduler, stickyvm-scheduler
    # ignores the deprecated --kubeconfig when --config is given.
    local_start "scheduler-$n" "$LOCAL_DIR/scheduler-$n.log" \
        env KUBECONFIG="$LOCAL_DIR/stickyvm-scheduler.kubeconfig" "$LOCAL_BIN/stickyvm-scheduler" \
        --config="$LOCAL_DIR/scheduler-config.yaml" \
        --secure-port="$port" --bind-address=127.0.0.1 --v=2 "${LOCAL_SCHEDULER_FLAGS[@]}"
}

local_scheduler_healthy() { # N
    curl -ksf "https://127.0.0.1:$(cat "$LOCAL_DIR/scheduler-$1.port")/healthz" >/dev/null
}

local_apiservice_available() {
    [ "$(kubectl get apiservice v1.subresources.stickyvm.io \
        -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" = True ]
}

# local_up ROOT: starts everything and waits until it serves.
local_up() {
    local root=$1 n
    mkdir -p "$LOCAL_DIR/pids"
    for n in stickyvm-emulator stickyvm-scheduler stickyvm-apiserver; do
        [ -x "$LOCAL_BIN/$n" ] || die "$LOCAL_BIN/$n is missing: build first"
    done
    local_service_accounts
    local_start_emulator
    local_install "$root"
    local_write_kubeconfig "$LOCAL_DIR/stickyvm-scheduler.kubeconfig" \
        "system:serviceaccount:$LOCAL_SA_NS:stickyvm-scheduler" \
        "$(cat "$LOCAL_DIR/stickyvm-scheduler.token")"
    local_write_kubeconfig "$LOCAL_DIR/stickyvm-apiserver.kubeconfig" \
        "system:serviceaccount:$LOCAL_SA_NS:stickyvm-apiserver" \
        "$(cat "$LOCAL_DIR/stickyvm-apiserver.token")"
    local_start_apiserver
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        local_start_scheduler "$n"
    done
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        wait_until 30 "stickyvm-scheduler $n /healthz" local_scheduler_healthy "$n" ||
            die "stickyvm-scheduler $n is not healthy: $(tail -5 "$LOCAL_DIR/scheduler-$n.log")"
    done
    wait_until 30 "APIService v1.subresources.stickyvm.io Available" local_apiservice_available ||
        die "the APIService is not available: $(tail -5 "$LOCAL_DIR/apiserver.log")"
}

# local_set_pin_key ROOT KEY: what a person does to change the pin key:
# edits the one value (apiserver/15-pin-key.yaml, in a copy of the
# manifests), applies them with -k, and restarts both daemons.
local_set_pin_key() {
    local root=$1 key=$2 copy=$LOCAL_DIR/manifests-pin-key n
    rm -rf "$copy" && cp -rL "$root/manifests" "$copy" || return 1
    sed -i "s|^  key: .*|  key: $key|" "$copy/apiserver/15-pin-key.yaml"
    local_install "$root" "$copy"
    local_stop apiserver 15
    local_start_apiserver
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        local_alive "scheduler-$n" && local_stop "scheduler-$n" 15
    done
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        local_start_scheduler "$n"
    done
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        wait_until 30 "stickyvm-scheduler $n /healthz" local_scheduler_healthy "$n" || return 1
    done
    wait_until 30 "APIService v1.subresources.stickyvm.io Available" local_apiservice_available
}

# The virt-controller stand-in for NAMESPACE; it also plays the kubelet
# (the emulator has none): launcher pods become Running with an IP.
local_virt_controller() { # NAMESPACE
    local_start "virt-controller-$1" "$LOCAL_DIR/virt-controller-$1.log" \
        env VIRT_CONTROLLER_KUBELET=1 "$(dirname "${BASH_SOURCE[0]}")/virt-controller.sh" "$1"
}

# The replica holding the Lease: its log says it acquired it last and has
# not released it since.
local_scheduler_leader() {
    local n
    for n in $(seq 1 "$LOCAL_SCHEDULERS"); do
        local_alive "scheduler-$n" || continue
        if [ "$(grep -E 'successfully acquired lease|released lease|failed to renew lease' \
            "$LOCAL_DIR/scheduler-$n.log" | tail -n1 | grep -c 'successfully acquired')" = 1 ]; then
            echo "$n"
            return 0
        fi
    done
    return 1
}

local_down() {
    local f
    [ -d "$LOCAL_DIR/pids" ] || return 0
    for f in "$LOCAL_DIR"/pids/virt-controller-*; do
        [ -e "$f" ] && local_stop "$(basename "$f")" 5
    done
    for f in "$LOCAL_DIR"/pids/scheduler-*; do
        [ -e "$f" ] && local_stop "$(basename "$f")" 15
    done
    local_stop apiserver 15
    local_stop emulator 10
}
