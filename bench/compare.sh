#!/usr/bin/env bash
# Compare two commits side by side: the Go benchmarks of the matcher, the
# decoders and the spool, then the webhook end to end. Both commits are
# checked out into temporary worktrees and their runs alternate, so that
# the load of a shared machine falls on both sides alike.
#
#   bench/compare.sh BEFORE AFTER
#   ROUNDS=10 ONLY=decoders GO_BENCH='^BenchmarkDecode$/^loki' E2E=0 bench/compare.sh ea2023a main
#
# Settings (environment):
#   ROUNDS=6          Go benchmark rounds; each round runs every benchmark once per side
#   BENCHTIME=        -benchtime for the Go benchmarks (empty: Go's default, 1s)
#   ONLY=             run only the Go benchmark groups whose label matches this regex
#   GO_BENCH=         replace the -bench regex of the selected groups
#   GO=1, E2E=1       0 skips the Go benchmarks or the webhook end to end
#   E2E_ROUNDS=3      webhook rounds; each round runs one server per side
#   DURATION=10s      how long loadgen sends in each webhook run
#   CORPUS_LINES=300000
#   OUT=              where before.txt, after.txt and the loadgen JSON go
#                     (default: bench/out/compare-BEFORE-AFTER)
#   CPUPROFILE=1      also write a CPU profile of each Go benchmark run to OUT
#
# Needs Go, git and curl. benchstat is installed into a temporary GOBIN when
# it is not on PATH.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/compare.sh BEFORE AFTER" >&2
  exit 2
fi
REPO=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
BEFORE=$(git -C "$REPO" rev-parse --verify --quiet "$1^{commit}") || { echo "compare: $1 is not a commit" >&2; exit 2; }
AFTER=$(git -C "$REPO" rev-parse --verify --quiet "$2^{commit}") || { echo "compare: $2 is not a commit" >&2; exit 2; }
ROUNDS=${ROUNDS:-6}
BENCHTIME=${BENCHTIME:-}
ONLY=${ONLY:-}
GO_BENCH=${GO_BENCH:-}
GO=${GO:-1}
E2E=${E2E:-1}
E2E_ROUNDS=${E2E_ROUNDS:-3}
DURATION=${DURATION:-10s}
CORPUS_LINES=${CORPUS_LINES:-300000}
CPUPROFILE=${CPUPROFILE:-0}
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

TMP=$(mktemp -d)
OUT=${OUT:-$REPO/bench/out/compare-${BEFORE:0:7}-${AFTER:0:7}}
mkdir -p "$OUT"
SERVE_PID=
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  for side in before after; do
    [ -d "$TMP/$side" ] && git -C "$REPO" worktree remove --force "$TMP/$side" >/dev/null 2>&1
  done
  git -C "$REPO" worktree prune
  rm -rf "$TMP"
}
trap cleanup EXIT

# Go benchmark groups, one a line: label; packages to try in each tree,
# first existing wins (the restructure of issue 14 moved the decoders to
# ingest/decode and the spool to ingest/queue); -bench regex; extra
# test-binary flags. The matcher runs on one CPU as BENCHMARKS.md says.
GROUPS_TABLE='
matcher;  ./patterns;                ^Benchmark(Match.*|Tokenize|MinerAdd)$;  -test.cpu=1
starter;  ./starter;                 ^BenchmarkStarter;                       -test.cpu=1
decoders; ./ingest/decode ./ingest;  ^Benchmark(Decode|Detect|Decompress)$;
spool;    ./ingest/queue ./ingest;   ^BenchmarkSpoolEnqueue$;
'

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# pkgdir TREE CANDIDATES: the first candidate package that exists in TREE.
pkgdir() {
  local p
  for p in $2; do
    if compgen -G "$1/$p/*_test.go" >/dev/null; then echo "$p"; return; fi
  done
  echo "compare: none of $2 in $1" >&2
  exit 1
}

# median: the median of the numbers on stdin.
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "NA"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

echo "== compare $(git -C "$REPO" log -1 --format='%h %s' "$BEFORE")"
echo "   against $(git -C "$REPO" log -1 --format='%h %s' "$AFTER")"
echo "   $(go version), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
git -C "$REPO" worktree add --quiet --detach "$TMP/before" "$BEFORE"
git -C "$REPO" worktree add --quiet --detach "$TMP/after" "$AFTER"

if [ "$GO" = 1 ]; then
  if command -v benchstat >/dev/null; then
    BENCHSTAT=benchstat
  else
    echo "== installing benchstat into $TMP/bin"
    GOBIN="$TMP/bin" go install golang.org/x/perf/cmd/benchstat@latest
    BENCHSTAT=$TMP/bin/benchstat
  fi

  labels=() pkgs_before=() pkgs_after=() regexes=() flags=()
  while IFS=';' read -r label cands re fl; do
    label=$(trim "$label")
    [ -z "$label" ] && continue
    [ -n "$ONLY" ] && ! [[ $label =~ $ONLY ]] && continue
    re=$(trim "$re")
    [ -n "$GO_BENCH" ] && re=$GO_BENCH
    labels+=("$label")
    pkgs_before+=("$(pkgdir "$TMP/before" "$(trim "$cands")")")
    pkgs_after+=("$(pkgdir "$TMP/after" "$(trim "$cands")")")
    regexes+=("$re")
    flags+=("$(trim "$fl")")
  done <<<"$GROUPS_TABLE"
  [ ${#labels[@]} -gt 0 ] || { echo "compare: ONLY=$ONLY selects no group" >&2; exit 2; }

  echo "== build test binaries"
  for i in "${!labels[@]}"; do
    for side in before after; do
      if [ $side = before ]; then p=${pkgs_before[$i]}; else p=${pkgs_after[$i]}; fi
      (cd "$TMP/$side" && go test -c -o "$TMP/bin-$side-${labels[$i]}.test" "$p")
    done
    echo "   ${labels[$i]}: ${pkgs_before[$i]} -> ${pkgs_after[$i]}, -bench '${regexes[$i]}' ${flags[$i]}"
  done

  : >"$OUT/before.txt"
  : >"$OUT/after.txt"
  # runbench SIDE I ROUND: one run of group I, appended to SIDE.txt with
  # its pkg line named after the group, so that benchstat pairs the moved
  # packages.
  runbench() {
    local side=$1 i=$2 round=$3 p extra=()
    if [ "$side" = before ]; then p=${pkgs_before[$i]}; else p=${pkgs_after[$i]}; fi
    [ -n "$BENCHTIME" ] && extra+=("-test.benchtime=$BENCHTIME")
    [ "$CPUPROFILE" = 1 ] && extra+=("-test.cpuprofile=$OUT/cpu-$side-${labels[$i]}-$round.prof")
    # shellcheck disable=SC2086 # flags holds several words
    if ! (cd "$TMP/$side/$p" && "$TMP/bin-$side-${labels[$i]}.test" -test.run '^$' -test.bench "${regexes[$i]}" \
      -test.benchmem -test.count 1 ${flags[$i]} "${extra[@]}") >"$TMP/run.txt" 2>&1; then
      cat "$TMP/run.txt" >&2
      echo "compare: ${labels[$i]} failed in $side" >&2
      exit 1
    fi
    sed "s|^pkg: .*|pkg: ${labels[$i]} (${pkgs_before[$i]#./} -> ${pkgs_after[$i]#./})|" "$TMP/run.txt" |
      grep -E '^(goos|goarch|pkg|cpu|Benchmark)' >>"$OUT/$side.txt"
  }
  echo "== Go benchmarks: $ROUNDS rounds, before and after alternating"
  for round in $(seq "$ROUNDS"); do
    order="before after"
    [ $((round % 2)) = 0 ] && order="after before"
    for i in "${!labels[@]}"; do
      for side in $order; do runbench "$side" "$i" "$round"; done
    done
    echo "   round $round done ($(cut -d' ' -f1 /proc/loadavg) load)"
  done
  echo "== benchstat before.txt after.txt"
  (cd "$OUT" && "$BENCHSTAT" before.txt after.txt)
fi

if [ "$E2E" = 1 ]; then
  echo "== webhook end to end: build"
  for side in before after; do
    (cd "$TMP/$side" && go build -o "$TMP/incidex-$side" ./cmd/incidex)
  done
  # One load generator and one corpus for both sides: AFTER's.
  (cd "$TMP/after" && go build -o "$TMP/gencorpus" ./bench/gencorpus && go build -o "$TMP/loadgen" ./bench/loadgen)
  (cd "$TMP/after" && "$TMP/gencorpus" -n "$CORPUS_LINES" -errors 0.01) >"$TMP/corpus.log"
  echo "   corpus: $CORPUS_LINES lines, $(wc -c <"$TMP/corpus.log") bytes; loadgen $DURATION a run, Fluent Bit 1 MiB JSON batches"

  # webhook SIDE ROUND: one server on a fresh data dir, one loadgen run;
  # writes "records/s p99_ms all_matched" to $TMP/last.txt.
  webhook() {
    local side=$1 round=$2 data url="" json="$OUT/webhook-$1-$2.json"
    data=$(mktemp -d "$TMP/data.XXXX")
    "$TMP/incidex-$side" list --data "$data/kb" >/dev/null 2>&1
    "$TMP/incidex-$side" serve --data "$data/kb" --addr 127.0.0.1:0 --log-level warn 2>"$data/serve.log" &
    SERVE_PID=$!
    for _ in $(seq 100); do
      url=$(sed -n 's/^incidex: serving on \(http[^ ]*\).*/\1/p' "$data/serve.log")
      [ -n "$url" ] && curl -sf "$url/readyz" >/dev/null 2>&1 && break
      kill -0 "$SERVE_PID" 2>/dev/null || break
      sleep 0.2
    done
    if [ -z "$url" ] || ! curl -sf "$url/readyz" >/dev/null 2>&1; then
      cat "$data/serve.log" >&2
      echo "compare: $side server did not become ready" >&2
      exit 1
    fi
    "$TMP/loadgen" -url "$url" -corpus "$TMP/corpus.log" -duration "$DURATION" >"$json" 2>"$data/loadgen.err" || true
    kill -TERM "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
    SERVE_PID=
    rm -rf "$data"
    local rps p99 ok
    rps=$(sed -n 's/.*"lines_per_s": \([0-9.e+]*\).*/\1/p' "$json")
    p99=$(sed -n 's/.*"p99_ms": \([0-9.e+]*\).*/\1/p' "$json")
    ok=$(sed -n 's/.*"all_matched": \([a-z]*\).*/\1/p' "$json")
    echo "${rps:-NA} ${p99:-NA} ${ok:-false}" >"$TMP/last.txt"
  }
  echo "== webhook end to end: $E2E_ROUNDS rounds, before and after alternating"
  printf '   %-6s %-6s %12s %10s %s\n' round side records/s p99_ms all_matched
  : >"$TMP/e2e.txt"
  for round in $(seq "$E2E_ROUNDS"); do
    order="before after"
    [ $((round % 2)) = 0 ] && order="after before"
    for side in $order; do
      webhook "$side" "$round"
      read -r rps p99 ok <"$TMP/last.txt"
      printf '   %-6s %-6s %12.0f %10.1f %s\n' "$round" "$side" "$rps" "$p99" "$ok"
      echo "$side $rps $p99 $ok" >>"$TMP/e2e.txt"
    done
  done
  rb=$(awk '$1=="before"{print $2}' "$TMP/e2e.txt" | median)
  ra=$(awk '$1=="after"{print $2}' "$TMP/e2e.txt" | median)
  lb=$(awk '$1=="before"{print $3}' "$TMP/e2e.txt" | median)
  la=$(awk '$1=="after"{print $3}' "$TMP/e2e.txt" | median)
  echo "   median       before       after   after/before"
  awk -v b="$rb" -v a="$ra" 'BEGIN{printf "   records/s %9.0f %11.0f %10.3f\n", b, a, a/b}'
  awk -v b="$lb" -v a="$la" 'BEGIN{printf "   p99 ms    %9.1f %11.1f %10.3f\n", b, a, a/b}'
  if grep -q ' false$' "$TMP/e2e.txt"; then
    echo "   warning: in some runs the server did not process every acknowledged record in time (see $OUT/webhook-*.json)"
  fi
fi
echo "== raw figures in $OUT"
