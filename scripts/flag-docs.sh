#!/usr/bin/env bash
# scripts/flag-docs.sh - the flag tables of docs/configuration.md, made from
# the binaries' own --help, so the two cannot drift apart.
#
#   scripts/flag-docs.sh BUILD_DIR            rewrite the tables in place
#   scripts/flag-docs.sh --check BUILD_DIR    fail (exit 1, with a diff) when
#                                             a table differs from --help
#
# A table sits between "<!-- flags: BINARY -->" and "<!-- end flags -->";
# each "NAME flags:" section of BINARY --help becomes a "#### NAME flags"
# table of flag, type, default and meaning.
set -euo pipefail

usage() { sed -n '2,12s/^# \{0,1\}//p' "$0"; }

check=0
case "${1:-}" in
--check) check=1; shift ;;
-h | --help) usage; exit 0 ;;
esac
[ $# -eq 1 ] || { usage >&2; exit 2; }
build=$1
root=$(cd "$(dirname "$0")/.." && pwd)
doc=$root/docs/configuration.md

# The markdown tables of one binary's --help, on stdout.
tables() {
    "$build/$1" --help | awk '
    function flush() {
        if (flag == "") return
        def = ""
        if (match(help, / \(default [^)]*\)$/)) {
            def = substr(help, RSTART + 10, RLENGTH - 11)
            help = substr(help, 1, RSTART - 1)
        }
        gsub(/\|/, "\\|", help)
        printf "| `%s` | %s | %s | %s |\n", flag, type, def == "" ? "" : "`" def "`", help
        flag = ""
    }
    /^[A-Z][A-Za-z ]* flags:$/ {
        flush()
        printf "%s#### %s\n\n| flag | type | default | meaning |\n|---|---|---|---|\n", \
            (n++ ? "\n" : ""), $0
        next
    }
    /^  +-/ {
        flush()
        line = $0
        sub(/^ +/, "", line)
        split(line, w, / +/)
        if (w[1] ~ /^-[a-z],$/) { flag = w[1] " " w[2]; i = 3 } else { flag = w[1]; i = 2 }
        type = ""
        rest = substr(line, index(line, flag) + length(flag))
        sub(/^ /, "", rest)
        if (rest !~ /^  / && match(rest, /^[^ ]+/)) {
            type = substr(rest, 1, RLENGTH)
            rest = substr(rest, RLENGTH + 1)
        }
        sub(/^ +/, "", rest)
        help = rest
        next
    }
    /^   +[^ -]/ && flag != "" {
        line = $0
        sub(/^ +/, "", line)
        help = help "<br>" line
        next
    }
    { flush() }
    END { flush() }'
}

# doc with the table of binary $1 replaced (the whole file on stdout).
replace() {
    local t
    t=$(tables "$1")
    TABLE=$t awk -v bin="$1" '
        $0 == "<!-- flags: " bin " -->" { print; print ENVIRON["TABLE"]; skip = 1; next }
        skip && $0 == "<!-- end flags -->" { skip = 0 }
        !skip { print }'
}

new=$(replace stickyvm-scheduler <"$doc" | replace stickyvm-apiserver)
if [ "$check" = 1 ]; then
    if ! diff -u "$doc" <(printf '%s\n' "$new"); then
        echo "flag-docs: docs/configuration.md differs from --help; run scripts/flag-docs.sh $build" >&2
        exit 1
    fi
    echo "flag-docs: docs/configuration.md matches --help"
else
    printf '%s\n' "$new" >"$doc"
fi
