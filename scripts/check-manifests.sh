#!/usr/bin/env bash
# The render test of manifests/ (ctest manifests_render; offline, needs only
# kubectl's built-in kustomize): `kubectl apply -k manifests/` must render
# both ways stickyvm-apiserver gets its serving certificate:
#   - without the component (the default, scripts/gen-apiserver-certs.sh):
#     the APIService has no caBundle and no cert-manager annotation, and no
#     cert-manager object is rendered;
#   - with manifests/components/cert-manager in an overlay: the same objects
#     plus the Issuers and Certificates, the Certificate writes the Secret the
#     Deployment mounts for the Service's DNS name, and the APIService carries
#     cert-manager.io/inject-ca-from naming that Certificate;
#   - with manifests/components/monitoring: the same objects plus the
#     scheduler's Service, a ServiceMonitor per daemon on its https port,
#     the /metrics reader role, the PrometheusRule and the dashboard
#     (scripts/test-monitoring.sh checks the rules and queries themselves).
# Usage: scripts/check-manifests.sh        (exit 0: both renders are right)
set -euo pipefail
cd "$(dirname "$0")/.."

ns=stickyvm-system
secret=stickyvm-apiserver-serving
bad=0
fail() { echo "check-manifests: $*" >&2; bad=1; }
command -v kubectl >/dev/null || { echo "check-manifests: kubectl is required" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One object of a render (kustomize writes documents separated by ---):
# the document of kind $2 and metadata name $3.
object() { # file kind name
    awk -v kind="$2" -v name="$3" '
        /^---$/ { if (k && n) print doc; doc = ""; k = n = 0; next }
        { doc = doc $0 "\n" }
        $0 == "kind: " kind { k = 1 }
        $0 == "  name: " name { n = 1 }
        END { if (k && n) printf "%s", doc }' "$1"
}

# Renders manifests/ alone, and through an overlay with the component.
kubectl kustomize manifests/ >"$work/base.yaml"
mkdir "$work/overlay"
cat >"$work/overlay/kustomization.yaml" <<YAML
resources:
  - $(realpath --relative-to="$work/overlay" manifests)
components:
  - $(realpath --relative-to="$work/overlay" manifests/components/cert-manager)
YAML
kubectl kustomize "$work/overlay" >"$work/cm.yaml"
mkdir "$work/monitoring"
cat >"$work/monitoring/kustomization.yaml" <<YAML
resources:
  - $(realpath --relative-to="$work/monitoring" manifests)
components:
  - $(realpath --relative-to="$work/monitoring" manifests/components/monitoring)
YAML
kubectl kustomize "$work/monitoring" >"$work/mon.yaml"

# Without the component.
api=$(object "$work/base.yaml" APIService v1.subresources.stickyvm.io)
[ -n "$api" ] || fail "manifests/: no APIService v1.subresources.stickyvm.io"
! grep -q caBundle <<<"$api" || fail "manifests/: the APIService still carries a caBundle"
! grep -q inject-ca-from <<<"$api" || fail "manifests/: the APIService has cert-manager's annotation"
! grep -q '^apiVersion: cert-manager.io/' "$work/base.yaml" || fail "manifests/: renders cert-manager objects"
! grep -q '^apiVersion: monitoring.coreos.com/' "$work/base.yaml" || fail "manifests/: renders monitoring objects"
dep=$(object "$work/base.yaml" Deployment stickyvm-apiserver)
grep -q "secretName: $secret\$" <<<"$dep" ||
    fail "manifests/: the apiserver Deployment does not mount the Secret $secret"

# With the component: every base object, plus cert-manager's.
kinds() { grep -E '^kind: ' "$1" | sort; }
missing=$(comm -23 <(kinds "$work/base.yaml") <(kinds "$work/cm.yaml"))
[ -z "$missing" ] || fail "with the component, objects are missing: $missing"
for o in "Issuer stickyvm-selfsigned" "Certificate stickyvm-apiserver-ca" "Issuer stickyvm-ca" \
         "Certificate stickyvm-apiserver-serving"; do
    [ -n "$(object "$work/cm.yaml" $o)" ] || fail "with the component: no $o"
done
cert=$(object "$work/cm.yaml" Certificate stickyvm-apiserver-serving)
grep -q "secretName: $secret\$" <<<"$cert" || fail "the serving Certificate does not write $secret"
grep -q -- "- stickyvm-apiserver.$ns.svc\$" <<<"$cert" ||
    fail "the serving Certificate lacks the DNS name stickyvm-apiserver.$ns.svc"
grep -q "namespace: $ns\$" <<<"$cert" || fail "the serving Certificate is not in $ns"
api=$(object "$work/cm.yaml" APIService v1.subresources.stickyvm.io)
grep -q "cert-manager.io/inject-ca-from: $ns/stickyvm-apiserver-serving\$" <<<"$api" ||
    fail "with the component, the APIService lacks cert-manager.io/inject-ca-from: $ns/stickyvm-apiserver-serving"
! grep -q caBundle <<<"$api" || fail "with the component, the APIService carries a caBundle"
dep=$(object "$work/cm.yaml" Deployment stickyvm-apiserver)
grep -q "secretName: $secret\$" <<<"$dep" ||
    fail "with the component, the apiserver Deployment does not mount $secret"

# With the monitoring component: every base object, plus its own.
missing=$(comm -23 <(kinds "$work/base.yaml") <(kinds "$work/mon.yaml"))
[ -z "$missing" ] || fail "with the monitoring component, objects are missing: $missing"
for o in "Service stickyvm-scheduler" "ServiceMonitor stickyvm-scheduler" \
         "ServiceMonitor stickyvm-apiserver" "ClusterRole stickyvm-metrics-reader" \
         "ClusterRoleBinding stickyvm-metrics-reader" "PrometheusRule stickyvm" \
         "ConfigMap stickyvm-dashboard"; do
    [ -n "$(object "$work/mon.yaml" $o)" ] || fail "with the monitoring component: no $o"
done
svc=$(object "$work/mon.yaml" Service stickyvm-scheduler)
grep -q 'port: 10259$' <<<"$svc" || fail "the scheduler's Service does not expose 10259"
for d in scheduler apiserver; do
    sm=$(object "$work/mon.yaml" ServiceMonitor stickyvm-$d)
    grep -q "app.kubernetes.io/name: stickyvm-$d\$" <<<"$sm" || fail "ServiceMonitor stickyvm-$d selects another Service"
    grep -q 'scheme: https$' <<<"$sm" && grep -q 'port: https$' <<<"$sm" && grep -q 'path: /metrics$' <<<"$sm" ||
        fail "ServiceMonitor stickyvm-$d does not scrape https /metrics"
done
sm=$(object "$work/mon.yaml" ServiceMonitor stickyvm-apiserver)
grep -q "serverName: stickyvm-apiserver.$ns.svc\$" <<<"$sm" && grep -q "name: $secret\$" <<<"$sm" &&
    grep -q 'key: ca.crt$' <<<"$sm" ||
    fail "ServiceMonitor stickyvm-apiserver does not verify the certificate with $secret"
grep -q 'grafana_dashboard: "1"$' <<<"$(object "$work/mon.yaml" ConfigMap stickyvm-dashboard)" ||
    fail "the dashboard's ConfigMap lacks the label grafana_dashboard"

[ "$bad" = 0 ] && echo "check-manifests: manifests/ renders without and with the cert-manager and monitoring components"
exit "$bad"
