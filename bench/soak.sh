#!/usr/bin/env bash
# Soak: run the webhook at a fixed rate (half the measured capacity by
# default) for a while and sample the server's memory and goroutines; they
# must stay flat. Writes bench/out/soak.csv and prints a summary.
#
#   RATE=70000 DURATION=600 bench/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
RATE=${RATE:-70000}
DURATION=${DURATION:-600}
mkdir -p "$OUT"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
go build -o "$OUT/incidex" ./cmd/incidex
go build -o "$OUT/gencorpus" ./bench/gencorpus
go build -o "$OUT/loadgen" ./bench/loadgen
[ -s "$OUT/corpus.log" ] || "$OUT/gencorpus" -n 200000 > "$OUT/corpus.log"
DATA=$(mktemp -d)
"$OUT/incidex" serve --data "$DATA" --addr 127.0.0.1:18282 --log-level warn 2>"$OUT/soak-serve.log" &
PID=$!
trap 'kill $PID 2>/dev/null; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:18282/readyz >/dev/null 2>&1 && break; sleep 0.2; done
"$OUT/loadgen" -url http://127.0.0.1:18282 -corpus "$OUT/corpus.log" -rate "$RATE" -senders 4 -duration "${DURATION}s" > "$OUT/soak-load.json" &
LOAD=$!
echo "seconds,rss_kib,goroutines,heap_bytes,queue_depth,processed" > "$OUT/soak.csv"
start=$(date +%s)
while kill -0 $LOAD 2>/dev/null; do
  m=$(curl -s http://127.0.0.1:18282/metrics)
  g=$(echo "$m" | awk '/^go_goroutines /{print $2}')
  h=$(echo "$m" | awk '/^go_memstats_heap_inuse_bytes /{print $2}')
  q=$(echo "$m" | awk '/^incidex_queue_depth /{print $2}')
  p=$(echo "$m" | awk '/^incidex_records_processed_total/{s+=$2} END{print s}')
  rss=$(awk '/VmRSS/{print $2}' /proc/$PID/status)
  echo "$(( $(date +%s) - start )),$rss,$g,$h,$q,$p" >> "$OUT/soak.csv"
  sleep 10
done
wait $LOAD || true
cat "$OUT/soak-load.json"
awk -F, 'NR==2{r0=$2;g0=$3} NR>1{if($2>rmax)rmax=$2; if(rmin==""||$2<rmin)rmin=$2; if($3>gmax)gmax=$3; if(gmin==""||$3<gmin)gmin=$3; r=$2; g=$3}
  END{printf "RSS KiB first %d last %d min %d max %d; goroutines first %d last %d min %d max %d\n", r0, r, rmin, rmax, g0, g, gmin, gmax}' "$OUT/soak.csv"
