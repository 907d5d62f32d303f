#!/usr/bin/env bash
# Makes the TLS material of stickyvm-apiserver and installs it:
#   1. a CA (kept in DIR and reused, so the APIService caBundle stays stable),
#   2. a serving certificate signed by it for the Service DNS names
#      (stickyvm-apiserver.stickyvm-system.svc and friends), ECDSA P-256,
#      serverAuth,
#   3. with kubectl: creates or updates the kubernetes.io/tls Secret the
#      Deployment mounts (tls.crt, tls.key, and ca.crt = the caBundle, which
#      the monitoring component's ServiceMonitor verifies the server with,
#      as with cert-manager's Secret), and patches the APIService caBundle
#      (never insecureSkipTLSVerify).
#
# Rotation (see docs/api.md):
#   serving certificate:  run again. The Secret is updated in place; the kubelet
#                         refreshes the mounted files within about a minute and
#                         stickyvm-apiserver reloads them (no restart, no
#                         caBundle change).
#   CA, step 1:           --rotate-ca. A new CA signs a new serving certificate;
#                         the caBundle holds the new and the old CA, so both the
#                         old and the new serving certificate verify meanwhile.
#   CA, step 2:           --finish-ca-rotation, once every replica serves the new
#                         certificate: the caBundle holds only the new CA.
#
# Usage: scripts/gen-apiserver-certs.sh [--dir DIR] [--namespace NS] [--service NAME]
#          [--secret NAME] [--apiservice NAME] [--days N] [--rotate-ca]
#          [--finish-ca-rotation] [--no-kubectl]
# Defaults: DIR=./apiserver-certs, NS=stickyvm-system, NAME=stickyvm-apiserver,
#           secret stickyvm-apiserver-serving, APIService v1.subresources.stickyvm.io,
#           365 days.
# Files in DIR: ca.crt ca.key (0600) [ca-old.crt] tls.crt tls.key (0600) ca-bundle.crt
set -euo pipefail

dir=./apiserver-certs
ns=stickyvm-system
svc=stickyvm-apiserver
secret=stickyvm-apiserver-serving
apiservice=v1.subresources.stickyvm.io
days=365
rotate_ca=0
finish=0
use_kubectl=1

die() { echo "gen-apiserver-certs: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
        --dir) dir=${2:?}; shift ;;
        --namespace) ns=${2:?}; shift ;;
        --service) svc=${2:?}; shift ;;
        --secret) secret=${2:?}; shift ;;
        --apiservice) apiservice=${2:?}; shift ;;
        --days) days=${2:?}; shift ;;
        --rotate-ca) rotate_ca=1 ;;
        --finish-ca-rotation) finish=1 ;;
        --no-kubectl) use_kubectl=0 ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) die "unknown argument $1" ;;
    esac
    shift
done
command -v openssl >/dev/null || die "openssl is required"
[ "$use_kubectl" = 0 ] || command -v kubectl >/dev/null || die "kubectl is required (or --no-kubectl)"
mkdir -p "$dir"
umask 077

new_ca() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$dir/ca.key" -out "$dir/ca.crt" -days $((days * 3)) \
        -subj "/CN=stickyvm-apiserver-ca@$(date +%s)" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
}

if [ "$finish" = 1 ]; then
    rm -f "$dir/ca-old.crt"
elif [ "$rotate_ca" = 1 ]; then
    [ -f "$dir/ca.crt" ] || die "--rotate-ca: no CA in $dir to rotate"
    cp "$dir/ca.crt" "$dir/ca-old.crt"
    new_ca
elif [ ! -f "$dir/ca.crt" ] || [ ! -f "$dir/ca.key" ]; then
    new_ca
fi

if [ "$finish" = 0 ]; then
    san="DNS:$svc,DNS:$svc.$ns,DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.cluster.local"
    cat > "$dir/serving.cnf" <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$san
EOF
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/tls.key.new" \
        -out "$dir/tls.csr" -subj "/CN=$svc.$ns.svc" 2>/dev/null
    openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
        -CAcreateserial -out "$dir/tls.crt.new" -days "$days" -sha256 \
        -extfile "$dir/serving.cnf" 2>/dev/null
    openssl verify -CAfile "$dir/ca.crt" -purpose sslserver "$dir/tls.crt.new" >/dev/null ||
        die "the new serving certificate does not verify"
    mv "$dir/tls.key.new" "$dir/tls.key"
    mv "$dir/tls.crt.new" "$dir/tls.crt"
    rm -f "$dir/tls.csr" "$dir/serving.cnf"
fi

cat "$dir/ca.crt" > "$dir/ca-bundle.crt"
[ ! -f "$dir/ca-old.crt" ] || cat "$dir/ca-old.crt" >> "$dir/ca-bundle.crt"
chmod 644 "$dir/ca.crt" "$dir/tls.crt" "$dir/ca-bundle.crt"
bundle=$(base64 -w0 < "$dir/ca-bundle.crt")
echo "CA: $dir/ca.crt  serving: $dir/tls.crt (valid $days days)  caBundle: $dir/ca-bundle.crt"

[ "$use_kubectl" = 1 ] || exit 0
# The caBundle first: it already trusts the CA of the certificate the Secret
# is about to carry (during a CA rotation it holds both CAs).
if kubectl get apiservice "$apiservice" >/dev/null 2>&1; then
    kubectl patch apiservice "$apiservice" --type=merge \
        -p "{\"spec\":{\"caBundle\":\"$bundle\",\"insecureSkipTLSVerify\":false}}"
else
    echo "APIService $apiservice does not exist yet: apply manifests/apiserver/ and run again" >&2
fi
kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns"
kubectl -n "$ns" create secret generic "$secret" --type=kubernetes.io/tls \
    --from-file=tls.crt="$dir/tls.crt" --from-file=tls.key="$dir/tls.key" \
    --from-file=ca.crt="$dir/ca-bundle.crt" --dry-run=client -o yaml | kubectl apply -f -
