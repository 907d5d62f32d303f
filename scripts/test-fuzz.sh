#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (libFuzzer + ASan + UBSan, the
# apiserver and kube/ sources, kube/serving/httpreq.c the request parser among them,
# instrumented for coverage too) and runs each
# for a bounded time (FUZZ_SECONDS, default 60): apiserver/fuzz_*.c from a
# seed corpus of real aggregator requests, kube/*/fuzz_*.c (what kube/client
# and kube/informer make of a server's answers) from seed answers,
# apiserver/kubectl/fuzz_argv.c (the request paths kubectl-stickyvm builds
# from its argv) from seed command lines. A crash, leak,
# sanitizer report or timeout fails the script; the reproducer is left in
# the fuzz build dir.
#
# Output: one line per fuzz target (runs, corpus, coverage, time) naming
# its full libFuzzer log, <fuzz build dir>/<target>.log; when a target
# fails, the end of that log.
#
# The objects are compiled here rather than through CMake's STICKYVM_FUZZ
# option so the apiserver code keeps -Werror while a clang-only warning in
# another module cannot stop the fuzz run.
# Usage: scripts/test-fuzz.sh          (build dir: build-fuzz/, or FUZZ_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${FUZZ_BUILD_DIR:-build-fuzz}
secs=${FUZZ_SECONDS:-60}
jobs=$(nproc)
command -v clang >/dev/null || { echo "test-fuzz: clang is required" >&2; exit 1; }

san="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
common="-g -O1 -std=gnu11 -D_GNU_SOURCE -fno-strict-aliasing -I. -Iapiserver $san
        $(pkg-config --cflags libcurl libcjson openssl yaml-0.1 libwebsockets)"
strict="-Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-unused-parameter"
libs="$(pkg-config --libs libcurl libcjson openssl yaml-0.1 libwebsockets) -lpthread -lm"
mkdir -p "$dir/obj"
dir=$(cd "$dir" && pwd) # absolute: the targets run from inside it

compile() { # flags, source
    local obj="$dir/obj/$(echo "$2" | tr / _).o"
    clang $common $1 -c "$2" -o "$obj"
    echo "$obj"
}
export -f compile
export common dir
# the version stamp CMake generates (kube/util/version.c reads it)
cmake -DSRC="$PWD" -DOUT="$dir/obj/version_stamp.c" -DFALLBACK=v0.1.0 -P cmake/version_stamp.cmake
objs=$(
    { echo "-Wall|$dir/obj/version_stamp.c"
      for f in apiserver/*.c apiserver/kubectl/*.c; do
          case $f in apiserver/main.c|apiserver/fuzz_*|apiserver/kubectl/main.c|apiserver/kubectl/fuzz_*) continue ;; esac
          echo "$strict|$f"
      done
      for f in kube/*/*.c; do
          case $f in
              kube/*/fuzz_*) continue ;;
              kube/serving/httpreq.c) echo "$strict|$f" ;; # the apiserver's request parser
              *) echo "-Wall|$f" ;;
          esac
      done
    } | xargs -P "$jobs" -I{} bash -c 'compile "$(echo "{}" | cut -d"|" -f1)" "$(echo "{}" | cut -d"|" -f2)"'
)
targets="apiserver/fuzz_*.c kube/*/fuzz_*.c apiserver/kubectl/fuzz_*.c"
for src in $targets; do
    name=$(basename "$src" .c)
    clang $common -Iapiserver/kubectl $strict -fsanitize=fuzzer "$src" $objs $libs -o "$dir/$name"
done
echo "fuzz: built $(echo $targets | wc -w) targets in $dir/ (${SECONDS}s)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus="$work/corpus"
mkdir -p "$corpus"

# Seeds: byte 0 picks the client certificate (1: trusted front proxy).
seed() { # name, first byte (octal escape), request bytes
    printf "$2" > "$corpus/$1"
    printf '%s' "$3" >> "$corpus/$1"
}
gv=/apis/subresources.stickyvm.io/v1
vm=$gv/namespaces/default/virtualmachines/vm1
crlf=$'\r\n'
seed probe '\001' "GET $gv HTTP/1.1${crlf}Host: 10.96.0.50:8443${crlf}User-Agent: Go-http-client/1.1${crlf}X-Remote-Group: system:masters${crlf}X-Remote-User: system:kube-aggregator${crlf}Accept-Encoding: gzip${crlf}${crlf}"
seed get-pin '\001' "GET $vm/pin?node=node-1&timeout=32s HTTP/1.1${crlf}Host: h${crlf}X-Remote-Group: system:masters${crlf}X-Remote-Group: system:authenticated${crlf}X-Remote-User: admin${crlf}X-Remote-Extra-Scopes: a${crlf}${crlf}"
seed put-unpin '\001' "PUT $vm/unpin HTTP/1.1${crlf}Host: h${crlf}Transfer-Encoding: chunked${crlf}X-Remote-User: admin${crlf}X-Remote-Group: system:masters${crlf}${crlf}0${crlf}${crlf}"
seed post-body '\001' "POST $vm/pin HTTP/1.1${crlf}Host: h${crlf}Content-Length: 2${crlf}X-Remote-User: admin${crlf}${crlf}{}GET /openapi/v2 HTTP/1.1${crlf}Host: h${crlf}X-Remote-User: system:aggregator${crlf}${crlf}"
seed forged '\000' "GET $vm/pin HTTP/1.1${crlf}Host: h${crlf}X-Remote-User: admin${crlf}Authorization: Bearer abc${crlf}${crlf}"
seed untrusted '\002' "GET /metrics HTTP/1.1${crlf}Host: h${crlf}X-Remote-User: admin${crlf}${crlf}"
seed paths '\001' "GET $gv/namespaces/default/virtualmachines/..%2Fx/pin HTTP/1.1${crlf}Host: h${crlf}X-Remote-User: a${crlf}Connection: Upgrade${crlf}Upgrade: websocket${crlf}${crlf}"
seed health '\000' "GET /healthz HTTP/1.0${crlf}${crlf}"
seed nul-node '\001' "GET $vm/pin?node=node-2%00evil&node%00=x HTTP/1.1${crlf}Host: h${crlf}X-Remote-User: admin${crlf}X-Remote-Group: system:masters${crlf}${crlf}"
# byte 0 bit 2: the stream also parsed in reads of (byte0 >> 3) + 1 bytes
seed split-1 '\005' "PUT $vm/unpin HTTP/1.1${crlf}Host: h${crlf}Expect: 100-continue${crlf}Transfer-Encoding: chunked${crlf}X-Remote-User: admin${crlf}${crlf}1;e=1${crlf}{${crlf}1${crlf}}${crlf}0${crlf}T: v${crlf}${crlf}"
seed split-8 '\075' "POST $vm/pin?node=n1 HTTP/1.1${crlf}Host: h${crlf}Content-Length: 2${crlf}X-Remote-User: admin${crlf}${crlf}{}"

cat > "$work/dict" <<'DICT'
"\x0d\x0a"
"HTTP/1.1"
"Host: "
"X-Remote-User: "
"X-Remote-Group: "
"X-Remote-Extra-"
"Authorization: Bearer "
"Transfer-Encoding: chunked"
"Content-Length: "
"Connection: close"
"Upgrade: "
"Expect: 100-continue"
"If-None-Match: "
"/apis/subresources.stickyvm.io/v1"
"/namespaces/"
"/virtualmachines/"
"/pin"
"/unpin"
"?node="
"%00"
"%2F"
"/.."
"//"
DICT

# run_target TARGET CORPUS_DIR DICT: runs TARGET for secs with its output
# in $dir/<target>.log; prints one summary line (or the log's end).
run_target() {
    local name log start=$SECONDS done_line runs seeds corp cov
    name=$(basename "$1")
    log=$dir/$name.log
    if ! (cd "$dir" && "$1" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=16384 -dict="$3" -print_final_stats=1 "$2") >"$log" 2>&1; then
        echo "fuzz: $name FAILED after $((SECONDS - start))s (reproducer in $dir/; full log: $log):"
        tail -n 40 "$log" | sed 's/^/  /'
        return 1
    fi
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE ' "$log" | tail -n1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    seeds=$(sed -n 's/^INFO: seed corpus: files: \([0-9]*\) .*/\1/p' "$log")
    corp=$(sed -n 's/.* corp: \([0-9]*\)\/\([^ ]*\) .*/\1 inputs (\2)/p' <<<"$done_line")
    cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' <<<"$done_line")
    echo "fuzz: $name: ${runs:-?} runs in $((SECONDS - start))s, corpus ${seeds:-?} -> ${corp:-?}, coverage ${cov:-?} (log: $log)"
}
run_target "$dir/fuzz_request" "$corpus" "$work/dict"

# kube/client + kube/informer: answers (status, headers, body) and streamed
# bodies (watch lines, lists) as libcurl hands them over; see
# kube/transport/fuzz_answer.c for the input layout.
answers="$work/answers"
mkdir -p "$answers"
answer() { printf "$2" > "$answers/$1"; printf '%s' "$3" >> "$answers/$1"; }
status() { printf '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s","reason":"%s","code":%s}' "$1" "$2" "$3"; }
answer created '\000\000\311' "Content-Type: application/json${crlf}Content-Length: 2${crlf}${crlf}{}"
answer retry '\000\001\255' "Retry-After: 1${crlf}Content-Type: application/json${crlf}${crlf}$(status 'too many requests' TooManyRequests 429)"
answer interim '\000\001\364' "HTTP/1.1 100 Continue${crlf}Retry-After: 7${crlf}HTTP/1.1 500 Internal Server Error${crlf}${crlf}$(status 'etcd is sad' InternalError 500)"
answer notfound '\001\001\224' "Content-Type: text/plain${crlf}${crlf}404 page not found"
answer conflict '\000\001\231' "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT${crlf}${crlf}$(status 'the object has been modified; please apply your changes to the latest version and try again' Conflict 409)"
pod='{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1","namespace":"default","uid":"u1","resourceVersion":"12"},"spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]},"status":{"phase":"Running"}}'
answer watch '\002\007' "{\"type\":\"ADDED\",\"object\":$pod}
{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"13\"}}}
{\"type\":\"ERROR\",\"object\":$(status 'too old resource version: 1 (12)' Expired 410)}
"
answer list '\003\052' "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"12\",\"continue\":\"abc\"},\"items\":[$pod,$pod]}"
cat > "$work/answer-dict" <<'DICT'
"\x0d\x0a"
"HTTP/1.1 "
"HTTP/2 "
"Retry-After: "
"retry-after:"
"100 Continue"
"{\"kind\":\"Status\""
"\"reason\":"
"\"message\":"
"\"code\":"
"{\"type\":\"MODIFIED\",\"object\":"
"\"items\":["
"\"metadata\":{"
"\"resourceVersion\":"
"\\\""
"\x0a"
DICT
run_target "$dir/fuzz_answer" "$answers" "$work/answer-dict"

# kubectl-stickyvm: argv words separated by NUL bytes (fuzz_argv.c).
argvs="$work/argv"
mkdir -p "$argvs"
words() { # name, words...
    local name=$1
    shift
    printf '%s\0' "$@" | head -c -1 > "$argvs/$name"
}
words injection pin vm-web -n 'demo/virtualmachines/vm-db/pin?node=node-2#' --node node-0 --dry-run
words pin pin vm-web -n demo --node node-2 --force
words unpin unpin vm-web --namespace=demo --dry-run
words why why virt-launcher-vm-web-abcde -n demo -o json
words why-ctl why $'vm-web\x01' -n demo
words list list -A --node node-1 --node-status NotReady,Unknown
words evacuate evacuate node-3 --to node-2 -n demo -l app=web --dry-run
words evacuate-unpin evacuate .. -A --force
cat > "$work/argv-dict" <<'DICT'
"\x00"
"--node"
"--to"
"--dry-run"
"--force"
"-n"
"-A"
"--namespace="
"/virtualmachines/"
"?node="
"#"
"%2F"
".."
"pin"
"unpin"
"why"
"list"
"evacuate"
DICT
run_target "$dir/fuzz_argv" "$argvs" "$work/argv-dict"
echo "fuzz: passed"
