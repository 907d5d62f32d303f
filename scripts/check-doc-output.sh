#!/usr/bin/env bash
# scripts/check-doc-output.sh TRANSCRIPT - checks the "Real output (the
# demo):" blocks of docs/stickyvm.md against a run of the demo
# (scripts/demo.sh's output, which scripts/test-demo.sh passes): each
# command of a block ("$ kubectl ...") must be one the demo ran ("    $
# ..." in the transcript), and its output in the doc must be the demo's
# output, once both are normalized for what changes from run to run: node
# names (node-N), ages and durations (5s, 2m, 117s ago), pod suffixes,
# versions (v0.1.0-g<sha>, the server's), spaces (table columns follow the
# widest cell). A doc block showing a column the tool no longer prints, or
# lacking one it prints (NODE-STATUS), fails here.
# Prints "doc-output: N commands match" or each difference (exit 1).
# Usage: scripts/check-doc-output.sh TRANSCRIPT
set -euo pipefail
cd "$(dirname "$0")/.."
transcript=${1:?usage: scripts/check-doc-output.sh TRANSCRIPT}
doc=docs/stickyvm.md

normalize() {
    sed -E -e 's/node-[0-9]+/node-N/g' -e 's/\b[0-9]+(\.[0-9]+)?(ms|s|m|h|d)\b/T/g' \
        -e 's/(virt-launcher-[a-z0-9-]+)-[a-z0-9]{5}\b/\1-XXXXX/g' \
        -e 's/v[0-9]+\.[0-9]+\.[0-9]+[-+a-z0-9.]*/vX/g' -e 's/[[:space:]]+/ /g' -e 's/ $//'
}

# The doc's blocks: "CMD<TAB>output line" for each output line, and
# "CMD<TAB>" for a command without output.
doc_pairs() {
    awk '
        /^Real output \(the demo\):/ { want = 1; next }
        want && /^```/ { inside = !inside; if (!inside) want = 0; next }
        inside && /^\$ / { cmd = substr($0, 3); print cmd "\t"; next }
        inside && cmd != "" && $0 != "" { print cmd "\t" $0 }
    ' "$doc"
}

# The transcript's output of command cmd (normalized) on stdout.
demo_output() {
    awk -v want="$1" '
        /^    \$ / { cur = substr($0, 7); on = (cur == want); if (on) found = 1; next }
        on && /^      / { print substr($0, 7); next }
        on { on = 0 }
        END { if (!found) exit 3 }
    ' "$transcript"
}

fail=0 n=0
while IFS= read -r cmd; do
    n=$((n + 1))
    want=$(doc_pairs | awk -F'\t' -v c="$cmd" '$1 == c && $2 != "" { print $2 }' | normalize)
    # the demo's command for it: the same once node names are normalized
    demo_cmd=$(grep -E '^    \$ kubectl stickyvm ' "$transcript" | sed 's/^    \$ //' |
        while IFS= read -r c; do
            [ "$(normalize <<<"$c")" = "$(normalize <<<"$cmd")" ] && { echo "$c"; break; }
        done || true)
    if [ -z "$demo_cmd" ]; then
        echo "doc-output: \"$cmd\" ($doc) is not a command the demo ran" >&2
        fail=1
        continue
    fi
    got=$(demo_output "$demo_cmd" | grep -v '^$' | normalize)
    if [ "$want" != "$got" ]; then
        echo "doc-output: the output of \"$cmd\" in $doc differs from the demo's (normalized):" >&2
        diff <(echo "$want") <(echo "$got") | sed 's/^/  /' >&2 || true
        fail=1
    fi
done < <(doc_pairs | cut -f1 | uniq)
[ "$n" -gt 0 ] || { echo "doc-output: no \"Real output (the demo):\" block in $doc" >&2; exit 1; }
[ "$fail" = 0 ] || exit 1
echo "doc-output: the $n commands of $doc's \"Real output (the demo)\" blocks match the demo's output"
