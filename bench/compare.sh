#!/bin/bash
# bench/compare.sh - two or more scheduler builds, alternated, in one sitting.
#
#   bench/compare.sh [--reps N] [--sizes "NODES:PODS ..."] [--auth "cert token"]
#                    [--out FILE] NAME=SCHEDULER_BINARY NAME=SCHEDULER_BINARY ...
#
# For each round, size and auth mode, runs build/bench-scheduler once per
# build (--scheduler BINARY, --token for "token"), the builds' order flipped
# every other round so neither always runs first on a warm machine. Every
# run's output goes to --out (default bench-compare.log); then prints, per
# size, auth and build, each round's scheduler CPU per pod, throughput and
# peak RSS, and their means, with the emulator's Event writes and its own
# CPU per pod (which, on a small machine, throughput also depends on).
#
# Build each binary first, e.g. with a worktree of the older commit:
#   git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/old/build -j2 \
#     --target stickyvm-scheduler
#   bench/compare.sh --reps 5 old=/tmp/old/build/stickyvm-scheduler \
#     now=build/stickyvm-scheduler
# Defaults: 3 rounds, 1000:3000 and 5000:10000, cert and token.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
bench=${BENCH_SCHEDULER:-$here/build/bench-scheduler}
reps=3
sizes="1000:3000 5000:10000"
auths="cert token"
out="bench-compare.log"
builds=()

usage() {
    sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --reps) reps=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --auth) auths=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) usage ;;
    *=*) builds+=("$1"); shift ;;
    *) echo "compare.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
[ ${#builds[@]} -ge 1 ] || usage
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: --reps '$reps' is not a positive number" >&2; exit 2; }
[ -x "$bench" ] || { echo "compare.sh: $bench not built (cmake --build build)" >&2; exit 1; }
for b in "${builds[@]}"; do
    [ -x "${b#*=}" ] || { echo "compare.sh: ${b#*=} (build ${b%%=*}) is not an executable" >&2; exit 1; }
done
for a in $auths; do
    [ "$a" = cert ] || [ "$a" = token ] || { echo "compare.sh: --auth '$a' is neither cert nor token" >&2; exit 2; }
done

: >"$out"
for ((r = 1; r <= reps; r++)); do
    order=("${builds[@]}")
    if ((r % 2 == 0)); then
        mapfile -t order < <(printf '%s\n' "${builds[@]}" | tac)
    fi
    for size in $sizes; do
        for auth in $auths; do
            flag=()
            [ "$auth" = token ] && flag=(--token)
            for b in "${order[@]}"; do
                echo "### round=$r size=${size/:/\/} auth=$auth build=${b%%=*}" >>"$out"
                "$bench" "${flag[@]}" --scheduler "${b#*=}" "${size%%:*}" "${size##*:}" >>"$out" 2>&1 ||
                    echo "### failed" >>"$out"
            done
        done
    done
done

awk '
/^### round=/ { split($3, s, "="); split($4, a, "="); split($5, b, "=");
                key = s[2] " " a[2] " " b[2]; if (!(key in seen)) { seen[key] = 1; keys[++n] = key } next }
/^### failed/ { failed[key]++ }
/^  throughput/ { tp[key] = tp[key] " " $2; tps[key] += $2; runs[key]++ }
/^  scheduler CPU  / { cpu[key] = cpu[key] " " $3; cpus[key] += $3 }
/^  scheduler peak RSS/ { rss[key] = rss[key] " " $4; rsss[key] += $4 }
/^  server CPU/ { srvs[key] += $4 }
/^  writes/ { evs[key] += $6 }
END {
    printf "%-22s %-6s %-8s %-36s %-36s %-28s %8s %8s\n", "size", "auth", "build",
           "CPU ms/pod (mean)", "pods/s (mean)", "peak RSS MB (mean)", "events", "server";
    for (i = 1; i <= n; i++) {
        k = keys[i]; split(k, p, " "); m = runs[k] ? runs[k] : 1;
        printf "%-22s %-6s %-8s %-36s %-36s %-28s %8.0f %8.3f%s\n", p[1], p[2], p[3],
               cpu[k] sprintf(" (%.3f)", cpus[k] / m), tp[k] sprintf(" (%.0f)", tps[k] / m),
               rss[k] sprintf(" (%.2f)", rsss[k] / m), evs[k] / m, srvs[k] / m,
               failed[k] ? "  FAILED " failed[k] : "";
    }
}' "$out"
