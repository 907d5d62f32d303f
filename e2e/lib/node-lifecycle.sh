#!/usr/bin/env bash
# e2e/lib/node-lifecycle.sh - plays kube-controller-manager's node
# lifecycle controller for one node, for the e2e suite and the demo on the
# emulator (which has no kubelets and no controller-manager). Never run it
# against a real cluster: there the real controller and the node's kubelet
# would overwrite what it writes within seconds.
#
# Usage: e2e/lib/node-lifecycle.sh lose NODE      (KUBECONFIG: the cluster)
#        e2e/lib/node-lifecycle.sh restore NODE
#
# lose: what the controller writes once a node's kubelet stopped posting
# status for longer than --node-monitor-grace-period:
#   - every condition the kubelet owns (Ready, MemoryPressure, DiskPressure,
#     PIDPressure; those present) becomes status Unknown, reason
#     NodeStatusUnknown, message "Kubelet stopped posting node status.",
#     lastTransitionTime now, lastHeartbeatTime kept (the kubelet's last);
#   - the taints node.kubernetes.io/unreachable:NoSchedule (no timeAdded,
#     as the taint-by-condition pass writes it) and
#     node.kubernetes.io/unreachable:NoExecute (timeAdded now, from which
#     the taint manager counts the pods' tolerationSeconds) are added.
# The controller also marks the node's pods Ready=False and, after their
# toleration (300 s by default), evicts them; this stand-in does neither:
# the pods stay as they were, as e2e/lib/virt-controller.sh's kubelet
# leaves them on a node whose Ready condition is Unknown (a dead kubelet
# neither starts nor finishes pods there, so a pod deleted there stays
# Terminating until it is force-deleted).
#
# restore: the kubelet is back: Ready True (KubeletReady, "kubelet is
# posting ready status"), the pressure conditions False, the unreachable
# taints removed.
set -euo pipefail

usage() { echo "usage: node-lifecycle.sh lose|restore NODE" >&2; exit 2; }
[ $# = 2 ] || usage
action=$1 node=$2
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
case $action in lose | restore) ;; *) usage ;; esac

obj=$(kubectl get node "$node" -o json)

# The node's conditions as the controller (lose) or the kubelet (restore)
# writes them.
conditions() {
    jq -c --arg now "$now" --arg action "$action" '
        def kubelet_owned: .type == "Ready" or .type == "MemoryPressure" or
            .type == "DiskPressure" or .type == "PIDPressure";
        [.status.conditions[]? |
            if kubelet_owned | not then .
            elif $action == "lose" then
                (if .status != "Unknown" then .lastTransitionTime = $now else . end) |
                .status = "Unknown" | .reason = "NodeStatusUnknown" |
                .message = "Kubelet stopped posting node status."
            elif .type == "Ready" then
                .status = "True" | .reason = "KubeletReady" |
                .message = "kubelet is posting ready status" |
                .lastHeartbeatTime = $now | .lastTransitionTime = $now
            else
                .status = "False" | .reason = ("KubeletHas" + (if .type == "MemoryPressure" then
                    "SufficientMemory" elif .type == "DiskPressure" then "NoDiskPressure"
                    else "SufficientPID" end)) |
                .lastHeartbeatTime = $now | .lastTransitionTime = $now
            end]'
}

# The node's taints without the unreachable ones, plus them when losing it.
taints() {
    jq -c --arg now "$now" --arg action "$action" '
        [.spec.taints[]? | select(.key != "node.kubernetes.io/unreachable")] +
        (if $action == "lose" then
            [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
             {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
              "timeAdded": $now}]
         else [] end)'
}

status=$(printf '%s' "$obj" | conditions)
printf '%s' "$obj" | jq -c --argjson c "$status" '.status.conditions = $c' |
    kubectl replace --raw "/api/v1/nodes/$node/status" -f - >/dev/null
kubectl patch node "$node" --type=merge \
    -p "{\"spec\":{\"taints\":$(printf '%s' "$obj" | taints)}}" >/dev/null
if [ "$action" = lose ]; then
    echo "node/$node lost: Ready Unknown (NodeStatusUnknown), tainted node.kubernetes.io/unreachable:NoSchedule and :NoExecute"
else
    echo "node/$node restored: Ready True, node.kubernetes.io/unreachable taints removed"
fi
