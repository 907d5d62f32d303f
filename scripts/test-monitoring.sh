#!/usr/bin/env bash
# The monitoring component (manifests/components/monitoring) against the
# real tools: promtool (Debian's prometheus package, 2.42 in bookworm) and
# kubectl's built-in kustomize, offline.
#
#   1. renders manifests/ with the component, as a user's overlay does, and
#      takes the PrometheusRule and the dashboard's ConfigMap from that
#      render (kubectl reads each object: a real YAML parser, no
#      assumption on the files' layout; kubectl is already a dependency);
#   2. promtool check rules on the PrometheusRule's spec (a rule file as
#      is; written as JSON, which promtool reads as YAML);
#   3. promtool test rules tests/monitoring/alerts_test.yaml: every alert
#      fires on made-up series that should fire it and stays quiet on
#      others (checked here: each alert has both kinds of case);
#   4. every alert has a summary, a description and a runbook_url whose
#      anchor is a heading of docs/operations.md;
#   5. every query of the Grafana dashboard, Grafana's range variables
#      replaced by 5m, goes through promtool's parser as a recording rule
#      (promtool 2.42 has no offline "parse this query"); a variable
#      unknown to this script fails;
#   6. every scheduler_* and stickyvm_* metric the rules and the dashboard
#      read is one the daemons register (a name in scheduler/, apiserver/
#      or kube/; a histogram's _bucket, _sum and _count by its name).
# Prints one line per check ("monitoring: ...").
# Usage: scripts/test-monitoring.sh
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "monitoring: $*" >&2; exit 1; }
for tool in kubectl promtool csplit; do
    command -v "$tool" >/dev/null || die "$tool is required (scripts/deps.sh installs it)"
done
component=manifests/components/monitoring
docs=docs/operations.md
alerts=(StickyVMSchedulerDown StickyVMApiserverDown StickyVMPinnedNodeNotReady
        StickyVMPinnedVMWaiting StickyVMPinWriteErrors)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The render, one file per object (kustomize separates them with ---).
mkdir "$work/overlay" "$work/objects"
cat >"$work/overlay/kustomization.yaml" <<YAML
resources:
  - $(realpath --relative-to="$work/overlay" manifests)
components:
  - $(realpath --relative-to="$work/overlay" "$component")
YAML
kubectl kustomize "$work/overlay" >"$work/render.yaml"
csplit -s -z -n 4 -f "$work/objects/o-" "$work/render.yaml" '/^---$/' '{*}'
sed -i '/^---$/d' "$work"/objects/o-*

# kind/name of each object, in the render's order (that of the files).
kubectl annotate --local -f "$work/render.yaml" t=1 \
    -o go-template='{{.kind}}/{{.metadata.name}}{{"\n"}}' >"$work/objects.txt"
[ "$(wc -l <"$work/objects.txt")" = "$(ls "$work"/objects | wc -l)" ] ||
    die "the render split into $(ls "$work"/objects | wc -l) files, kubectl read $(wc -l <"$work/objects.txt") objects"

# The file of the object of kind $1 and name $2 in the render.
object_file() {
    local n
    n=$(grep -nxF "$1/$2" "$work/objects.txt" | cut -d: -f1)
    [ -n "$n" ] || die "the render has no $1 $2"
    ls "$work"/objects/o-* | sed -n "${n}p"
}
rule=$(object_file PrometheusRule stickyvm)
dashboard=$(object_file ConfigMap stickyvm-dashboard)

# 2. The rule file.
kubectl annotate --local -f "$rule" t=1 -o jsonpath='{.spec}' >"$work/stickyvm-rules.json"
promtool check rules "$work/stickyvm-rules.json" >"$work/check.log" 2>&1 ||
    { cat "$work/check.log" >&2; die "promtool check rules failed on the PrometheusRule"; }
echo "monitoring: promtool check rules: $(grep -o '[0-9]* rules found' "$work/check.log")"

# 3. The alerts' unit tests, next to the rule file they name.
cp tests/monitoring/alerts_test.yaml "$work/"
promtool test rules "$work/alerts_test.yaml" >"$work/test.log" 2>&1 ||
    { cat "$work/test.log" >&2; die "promtool test rules failed"; }
# Each alert has a case where it fires (exp_labels follow) and one where it
# does not (exp_alerts: []).
cases() { # alert -> "fires quiet"
    awk -v a="$1" '
        $0 ~ "alertname: " a "$" { seen = 1; next }
        seen && /exp_alerts: \[\]/ { quiet++; seen = 0; next }
        seen && /exp_labels:/ { fires++; seen = 0 }
        END { print fires + 0, quiet + 0 }' tests/monitoring/alerts_test.yaml
}
for a in "${alerts[@]}"; do
    read -r fires quiet < <(cases "$a")
    [ "$fires" -gt 0 ] && [ "$quiet" -gt 0 ] ||
        die "tests/monitoring/alerts_test.yaml: $a needs a case that fires and one that does not ($fires, $quiet)"
done
echo "monitoring: promtool test rules: ${#alerts[@]} alerts fire and stay quiet as expected"

# 4. Annotations, and the runbook anchors: GitHub's heading slugs.
anchors=$(sed -n 's/^#\{1,6\} //p' "$docs" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g')
kubectl annotate --local -f "$rule" t=1 -o go-template='{{range .spec.groups}}{{range .rules}}{{if .alert}}{{.alert}} {{if and .annotations.summary .annotations.description}}ok{{else}}missing{{end}} {{.annotations.runbook_url}}{{"\n"}}{{end}}{{end}}{{end}}' \
    >"$work/alerts.txt"
for a in "${alerts[@]}"; do
    grep -q "^$a " "$work/alerts.txt" || die "the PrometheusRule has no alert $a"
done
while read -r a texts url; do
    [ "$texts" = ok ] || die "$a: no summary or no description"
    case $url in
        https://*/docs/operations.md\#*) ;;
        *) die "$a: runbook_url '$url' is not a section of docs/operations.md" ;;
    esac
    grep -qxF "${url##*#}" <<<"$anchors" || die "$a: $docs has no heading for #${url##*#}"
done <"$work/alerts.txt"
echo "monitoring: $(wc -l <"$work/alerts.txt") alerts have a summary, a description and a runbook in $docs"

# 5. The dashboard's queries, as recording rules (the JSON wrapped into an
# object kubectl reads; %q quotes each query as a YAML string).
kubectl annotate --local -f "$dashboard" t=1 -o jsonpath='{.data.stickyvm\.json}' |
    sed 's/\$__rate_interval/5m/g; s/\$__range/5m/g; s/\$__interval/5m/g' >"$work/dashboard.json"
{
    printf '{"apiVersion":"v1","kind":"Dashboard","metadata":{"name":"d"},"dashboard":'
    cat "$work/dashboard.json"
    printf '}\n'
} >"$work/wrapped.json"
{
    printf 'groups:\n  - name: dashboard\n    rules:\n'
    kubectl annotate --local -f "$work/wrapped.json" t=1 -o go-template='{{range .dashboard.panels}}{{$p := .}}{{range .targets}}      - record: dashboard:panel_{{$p.id}}:{{.refId}}{{"\n"}}        expr: {{printf "%q" .expr}}{{"\n"}}{{end}}{{end}}'
} >"$work/dashboard-rules.yaml"
queries=$(grep -c '^        expr: ' "$work/dashboard-rules.yaml" || true)
[ "$queries" -gt 0 ] || die "the dashboard has no query"
[ "$queries" = "$(grep -c '"expr":' "$work/dashboard.json")" ] ||
    die "only $queries of the dashboard's queries are in top-level panels' targets"
! grep -n '^        expr: .*\$' "$work/dashboard-rules.yaml" ||
    die "a dashboard query uses a variable this script does not know"
promtool check rules "$work/dashboard-rules.yaml" >"$work/check.log" 2>&1 ||
    { cat "$work/check.log" >&2; die "a dashboard query does not parse"; }
echo "monitoring: the dashboard's $queries queries parse"

# 6. The metric names read, against those the daemons register.
registered=$(grep -rhoE '"(stickyvm|scheduler)_[a-z_]+"' scheduler apiserver kube | tr -d '"' | sort -u)
read_names=$(cat "$work/stickyvm-rules.json" "$work/dashboard-rules.yaml" |
    grep -oE '\b(stickyvm|scheduler)_[a-z_]+' | sort -u)
for name in $read_names; do
    base=$(sed -E 's/_(bucket|sum|count)$//' <<<"$name")
    grep -qxF -e "$name" -e "$base" <<<"$registered" ||
        die "the rules or the dashboard read $name, which no daemon registers"
done
echo "monitoring: the $(wc -w <<<"$read_names") metrics read are registered"
