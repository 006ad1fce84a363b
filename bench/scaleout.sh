#!/usr/bin/env bash
# Scale-out on NATS JetStream against the single process, in one run:
#   single  incidex serve (durable spool on)
#   1+1     nats-server, writer, 1 worker, 1 receiver
#   1+2     the same with 2 workers
# each flooded by bench/loadgen for DURATION, ROUNDS times, alternating.
# Per run: records/s acknowledged, records/s until the backlog drained (the
# writer's occurrence counts add up), p99 batch latency, whether every
# acknowledged record was matched and counted, and the CPU seconds
# (user+sys from /proc/PID/stat) of every process per million records.
# Then the writer's apply rate alone (BenchmarkApplier).
#
#   DURATION=20s ROUNDS=2 bench/scaleout.sh
#
# Needs Go, curl, jq, bc and nats-server (Debian: apt-get install nats-server jq bc).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
LINES=${LINES:-1000000}
DURATION=${DURATION:-20s}
ROUNDS=${ROUNDS:-2}
SENDERS=${SENDERS:-4}
APPLIER_COUNT=${APPLIER_COUNT:-6}
NATS_SERVER=${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}
mkdir -p "$OUT"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
for c in curl jq bc "$NATS_SERVER"; do command -v "$c" >/dev/null || { echo "scaleout.sh: $c not found" >&2; exit 2; }; done

echo "== build"
go build -o "$OUT/incidex" ./cmd/incidex
go build -o "$OUT/gencorpus" ./bench/gencorpus
go build -o "$OUT/loadgen" ./bench/loadgen

echo "== corpus: $LINES lines, 1% known errors"
[ -s "$OUT/corpus.log" ] && [ "$(wc -l < "$OUT/corpus.log")" -eq "$LINES" ] || "$OUT/gencorpus" -n "$LINES" -errors 0.01 > "$OUT/corpus.log"

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then echo "   logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
"$OUT/incidex" list --data "$WORK/kb-template" >/dev/null 2>&1   # the starter knowledge base

TCK=$(getconf CLK_TCK)
# cpu PID...: user+sys seconds of the processes so far.
cpu() {
  local t=0 p
  for p in "$@"; do
    # Fields after the ")" of comm: state is 3, utime 14, stime 15.
    t=$((t + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
  done
  echo "scale=3; $t / $TCK" | bc
}
# wait_http URL: until it answers 2xx.
wait_http() {
  for _ in $(seq 300); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "scaleout.sh: $1 did not come up" >&2; return 1
}
# metric URL NAME: the sum of NAME's samples.
metric() {
  curl -sf "$1/metrics" | awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%.0f\n", s }'
}
stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}

RESULTS="$OUT/scaleout.jsonl"
: > "$RESULTS"
# record NAME ROUND LOADGEN_JSON CPU_INCIDEX CPU_NATS EXTRA_JSON
record() {
  jq -c --arg name "$1" --argjson round "$2" --argjson cpu "$4" --argjson cpu_nats "$5" --argjson extra "$6" \
    '{name: $name, round: $round} + . + {cpu_incidex_s: $cpu, cpu_nats_s: $cpu_nats} + $extra' <<< "$3" >> "$RESULTS"
  jq -r '"   \(.name) round \(.round): \(.lines_per_s | floor) acked/s, \(.drained_lines_per_s | floor) drained/s, p99 \(.p99_ms) ms, 503s \(.refused_503), all counted \(.all_matched), CPU \(.cpu_incidex_s)+\(.cpu_nats_s) s (incidex+nats)"' <<< "$(tail -1 "$RESULTS")"
}

run_single() {
  local round=$1; local d="$WORK/single-$round"
  mkdir -p "$d"; cp -a "$WORK/kb-template" "$d/kb"
  "$OUT/incidex" serve --data "$d/kb" --addr 127.0.0.1:18281 --spool on --log-level warn 2>"$d/serve.log" &
  local pid=$!; PIDS+=("$pid")
  wait_http http://127.0.0.1:18281/readyz
  local c0; c0=$(cpu "$pid")
  local out
  out=$("$OUT/loadgen" -url http://127.0.0.1:18281 -writer-url http://127.0.0.1:18281 -corpus "$OUT/corpus.log" \
    -senders "$SENDERS" -duration "$DURATION") || true
  local c1; c1=$(cpu "$pid")
  local rss; rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  stop_all
  record single "$round" "$out" "$(echo "$c1 - $c0" | bc)" 0 "{\"rss_kib\": {\"single\": $rss}}"
}

# run_scaled WORKERS ROUND
run_scaled() {
  local nw=$1 round=$2; local d="$WORK/scaled-$1-$2"
  mkdir -p "$d"; cp -a "$WORK/kb-template" "$d/kb"
  local nurl=nats://127.0.0.1:14222 common=(--nats nats://127.0.0.1:14222 --log-level warn)
  "$NATS_SERVER" -js -sd "$d/nats" -a 127.0.0.1 -p 14222 -m 18222 2>"$d/nats.log" &
  local npid=$!; PIDS+=("$npid")
  wait_http http://127.0.0.1:18222/healthz
  "$OUT/incidex" serve --role writer --data "$d/kb" --addr 127.0.0.1:18282 "${common[@]}" 2>"$d/writer.log" &
  local wpid=$!; PIDS+=("$wpid")
  wait_http http://127.0.0.1:18282/readyz
  local wkpids=() checks=() i
  for i in $(seq "$nw"); do
    "$OUT/incidex" serve --role worker --addr "127.0.0.1:$((18290 + i))" "${common[@]}" 2>"$d/worker-$i.log" &
    wkpids+=($!); PIDS+=($!)
    checks+=("http://127.0.0.1:$((18290 + i))")
  done
  "$OUT/incidex" serve --role receiver --addr 127.0.0.1:18283 "${common[@]}" 2>"$d/receiver.log" &
  local rpid=$!; PIDS+=("$rpid")
  for u in "${checks[@]}"; do wait_http "$u/healthz"; done   # a worker serves once it has a snapshot
  wait_http http://127.0.0.1:18283/readyz
  local cw0 ck0 cr0 cn0
  cw0=$(cpu "$wpid"); ck0=$(cpu "${wkpids[@]}"); cr0=$(cpu "$rpid"); cn0=$(cpu "$npid")
  local out
  out=$("$OUT/loadgen" -url http://127.0.0.1:18283 -check-url "$(IFS=,; echo "${checks[*]}")" -writer-url http://127.0.0.1:18282 \
    -corpus "$OUT/corpus.log" -senders "$SENDERS" -duration "$DURATION") || true
  local cw ck cr cn
  cw=$(echo "$(cpu "$wpid") - $cw0" | bc); ck=$(echo "$(cpu "${wkpids[@]}") - $ck0" | bc)
  cr=$(echo "$(cpu "$rpid") - $cr0" | bc); cn=$(echo "$(cpu "$npid") - $cn0" | bc)
  # Per-batch match time on the workers (mean of the histogram) and the
  # writer's counters.
  local bsum bcnt u
  bsum=$(for u in "${checks[@]}"; do curl -sf "$u/metrics"; done | awk '$1 ~ /^incidex_match_batch_seconds_sum/ { s += $2 } END { printf "%.6f", s }')
  bcnt=$(for u in "${checks[@]}"; do curl -sf "$u/metrics"; done | awk '$1 ~ /^incidex_match_batch_seconds_count/ { s += $2 } END { printf "%.0f", s }')
  local results published records_applied
  results=$(metric http://127.0.0.1:18282 incidex_results_applied_total)
  records_applied=$(metric http://127.0.0.1:18282 incidex_records_applied_total)
  published=$(metric http://127.0.0.1:18283 incidex_nats_published_records_total)
  local rss_w rss_r rss_k=0 p
  rss_w=$(awk '/VmHWM/ {print $2}' "/proc/$wpid/status"); rss_r=$(awk '/VmHWM/ {print $2}' "/proc/$rpid/status")
  for p in "${wkpids[@]}"; do rss_k=$(( $(awk '/VmHWM/ {print $2}' "/proc/$p/status") > rss_k ? $(awk '/VmHWM/ {print $2}' "/proc/$p/status") : rss_k )); done
  stop_all
  record "1+$nw" "$round" "$out" "$(echo "$cw + $ck + $cr" | bc)" "$cn" \
    "{\"cpu_writer_s\": $cw, \"cpu_workers_s\": $ck, \"cpu_receiver_s\": $cr, \"results_applied\": $results, \"records_applied\": $records_applied,
      \"published_records\": $published, \"match_batches\": $bcnt, \"match_batch_seconds_sum\": $bsum,
      \"rss_kib\": {\"writer\": $rss_w, \"receiver\": $rss_r, \"worker_max\": $rss_k}}"
}

echo "== webhook floods: $DURATION each, $SENDERS senders, $ROUNDS rounds (single, 1+1, 1+2 alternating)"
PHASES=${PHASES:-single 1 2}
for r in $(seq "$ROUNDS"); do
  for ph in $PHASES; do
    if [ "$ph" = single ]; then run_single "$r"; else run_scaled "$ph" "$r"; fi
  done
done

echo "== the writer's apply rate alone: BenchmarkApplier, 2000 results x $APPLIER_COUNT"
go test -run '^$' -bench BenchmarkApplier -benchtime 2000x -count "$APPLIER_COUNT" ./ingest/cluster | tee "$OUT/applier.txt" | grep Benchmark

echo "== summary (medians over rounds)"
jq -rs '
  def med: sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
  group_by(.name) | .[] | . as $g |
  ($g | map(.acked_records) | add) as $rec |
  "   \($g[0].name): acked \($g | map(.lines_per_s) | med | floor)/s, drained \($g | map(.drained_lines_per_s) | med | floor)/s, p99 \($g | map(.p99_ms) | med) ms, all counted: \($g | map(.all_matched) | all), incidex CPU \(($g | map(.cpu_incidex_s) | add) / $rec * 1e6 * 100 | floor / 100) s per M records, + nats \(($g | map(.cpu_nats_s) | add) / $rec * 1e6 * 100 | floor / 100)"' "$RESULTS"
grep Benchmark "$OUT/applier.txt" | awk '{for (i = 1; i <= NF; i++) if ($(i+1) == "results/s") print $i}' | sort -n | awk '{a[NR] = $1} END {printf "   applier alone: median %.0f results/s of 512 records (64 aggregates) each\n", (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'
echo "== done; per-run figures in $RESULTS"
