#!/usr/bin/env bash
# End-to-end benchmarks (make bench runs the Go benchmarks first, then this).
# Writes bench/out/*.json and prints a summary. Needs Go, bc and curl; uses
# rg and GNU time when present (Debian: apt-get install ripgrep time bc).
#
#   LINES=1000000 DURATION=30s bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
LINES=${LINES:-1000000}
DURATION=${DURATION:-30s}
mkdir -p "$OUT"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

echo "== build"
go build -o "$OUT/incidex" ./cmd/incidex
go build -o "$OUT/gencorpus" ./bench/gencorpus
go build -o "$OUT/literals" ./bench/literals
go build -o "$OUT/loadgen" ./bench/loadgen

echo "== corpus: $LINES lines, 1% known errors"
[ -s "$OUT/corpus.log" ] && [ "$(wc -l < "$OUT/corpus.log")" -eq "$LINES" ] || "$OUT/gencorpus" -n "$LINES" -errors 0.01 > "$OUT/corpus.log"
"$OUT/literals" > "$OUT/literals.txt"
echo "   $(wc -c < "$OUT/corpus.log") bytes, $(wc -l < "$OUT/literals.txt") signature literals"

DATA=$(mktemp -d)
trap 'rm -rf "$DATA"; [ -n "${SERVE_PID:-}" ] && kill "$SERVE_PID" 2>/dev/null || true' EXIT
"$OUT/incidex" list --data "$DATA/kb" >/dev/null 2>&1   # creates it with the starter knowledge base

echo "== matcher vs literal scans over the corpus (median of 5 runs each)"
# median_time CMD: wall seconds of the median run.
median_time() {
  local ts=()
  for _ in 1 2 3 4 5; do
    local s e
    # Output goes to a file: GNU grep stops at the first match when its
    # output is /dev/null, which would not be a scan.
    s=$(date +%s.%N); bash -c "$1" >"$OUT/.scan.out" 2>&1 || true; e=$(date +%s.%N)
    ts+=("$(echo "$e - $s" | bc)")
  done
  printf '%s\n' "${ts[@]}" | sort -n | sed -n 3p
}
t_incidex=$(median_time "$OUT/incidex match --quiet --data $DATA/kb - < $OUT/corpus.log")
t_grep=$(median_time "grep -c -F -f $OUT/literals.txt $OUT/corpus.log")
t_rg=NA
command -v rg >/dev/null && t_rg=$(median_time "rg -c -F -f $OUT/literals.txt $OUT/corpus.log")
matched=$("$OUT/incidex" match --quiet --data "$DATA/kb" - < "$OUT/corpus.log" | sed -n 2p)
echo "   incidex match --quiet -   ${t_incidex}s   ($matched)"
echo "   grep -c -F -f literals    ${t_grep}s   ($(grep -c -F -f "$OUT/literals.txt" "$OUT/corpus.log") lines contain a literal)"
echo "   rg -c -F -f literals      ${t_rg}s"
echo "   incidex/grep time ratio: $(echo "scale=2; $t_incidex / $t_grep" | bc)   incidex/rg: $( [ "$t_rg" = NA ] && echo NA || echo "scale=2; $t_incidex / $t_rg" | bc)"
printf '{"lines": %s, "incidex_s": %s, "grep_s": %s, "rg_s": "%s"}\n' "$LINES" "$t_incidex" "$t_grep" "$t_rg" > "$OUT/scan.json"
cmd_incidex="$OUT/incidex match --quiet --data $DATA/kb - < $OUT/corpus.log"

echo "== memory: incidex match over the corpus (max RSS)"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f "   %M KiB max RSS" bash -c "$cmd_incidex > /dev/null"
fi

echo "== memory with 10,000 signatures: incidex match over the corpus (max RSS)"
"$OUT/gencorpus" -writeups 3900 -dir "$DATA/w10k"
"$OUT/incidex" ingest --no-starter --data "$DATA/kb10k" "$DATA/w10k" | tail -1
if [ -x /usr/bin/time ]; then
  for _ in 1 2 3; do
    /usr/bin/time -f "   %M KiB max RSS, %e s" bash -c "$OUT/incidex match --quiet --data $DATA/kb10k - < $OUT/corpus.log > /dev/null" 2>&1 | tail -1
  done
fi

echo "== webhook: Fluent Bit-style 1 MiB JSON batches for $DURATION"
"$OUT/incidex" serve --data "$DATA/kb" --addr 127.0.0.1:18181 --log-level warn 2>"$OUT/serve.log" &
SERVE_PID=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:18181/readyz >/dev/null 2>&1 && break; sleep 0.2; done
"$OUT/loadgen" -url http://127.0.0.1:18181 -corpus "$OUT/corpus.log" -duration "$DURATION" | tee "$OUT/webhook.json"
echo "   server RSS: $(grep VmHWM /proc/$SERVE_PID/status | awk '{print $2, $3}') peak"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=
echo "== done; figures in $OUT/"
