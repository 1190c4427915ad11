#!/usr/bin/env bash
# Benchmarks of mcpredict on this machine, printed as a table (make bench).
#  1. Go benchmarks: parse throughput and bytes per event, the native
#     pipeline on a million-event fft-like trace.
#  2. End to end with the CLI, on
#     (a) an fft-like trace: >= 1 million events, >= 3,000 shared variables,
#         no violation;
#     (b) a server-like trace with seeded bugs;
#     each with the default engine (auto: native search, Spin confirms
#     violations) and with --engine=spin (every model through Spin and gcc,
#     as the paper). --engine=spin on all of (a) would take hours, so it runs
#     on a sample of the models (--vars) and the per-model time is
#     multiplied by the number of models: the table says so.
# Caches are off (--no-cache) so that every number is a real check.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/mcpredict}
[ -x "$BIN" ] || go build -o "$BIN" ./cmd/mcpredict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== Go benchmarks"
go test ./predict -run '^$' -bench 'Parse|RunNative' -benchtime 3x | grep -E '^Benchmark'
go test ./analysis/deadlock -run '^$' -bench Deadlock -benchtime 5x | grep -E '^Benchmark'
go test ./recorder -run '^$' -bench RecordOverhead -benchtime 3x 2>/dev/null | grep -E '^Benchmark' || true
go test ./service -run '^$' -bench Workers -benchtime 3x 2>/dev/null | grep -E '^Benchmark' || true
echo

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
stat() { # stat FILE FIELD: a number from a JSON report's stats
  sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1" | head -1
}

"$BIN" gen --kind fft --threads 4 --vars 2000 --events 1000000 -o "$work/fft.csv" 2>/dev/null
"$BIN" gen --kind server --threads 4 --bugs 4 --events 30000 -o "$work/server.csv" 2>/dev/null

row() { # row NAME TRACE SAMPLE-GLOB
  local name=$1 trace=$2 sample=$3
  local t0 t1 status
  t0=$(now)
  set +e
  "$BIN" run --no-cache --format json -o "$work/$name.json" "$trace"
  status=$?
  set -e
  t1=$(now)
  [ $status -le 1 ] || { echo "run failed ($status)"; exit 1; }
  local auto events vars models bugs spinmodels
  auto=$(secs "$t0" "$t1")
  events=$(stat "$work/$name.json" events)
  vars=$(stat "$work/$name.json" shared_vars)
  models=$(stat "$work/$name.json" models)
  spinmodels=$(stat "$work/$name.json" spin_models)
  bugs=$(grep -c '"pattern_name"' "$work/$name.json" || true)
  t0=$(now)
  set +e
  "$BIN" run --no-cache --engine spin --vars "$sample" --format json -o "$work/$name-spin.json" "$trace"
  status=$?
  set -e
  t1=$(now)
  [ $status -le 1 ] || { echo "spin run failed ($status)"; exit 1; }
  local sampled spinsample per spinall ratio
  sampled=$(stat "$work/$name-spin.json" models)
  spinsample=$(secs "$t0" "$t1")
  per=$(awk -v t="$spinsample" -v n="$sampled" 'BEGIN { printf "%.3f", t / n }')
  spinall=$(awk -v p="$per" -v n="$models" 'BEGIN { printf "%.0f", p * n }')
  ratio=$(awk -v s="$spinall" -v a="$auto" 'BEGIN { printf "%.0f", s / a }')
  printf '| %s | %s | %s | %s | %s (%s to Spin) | %s s | %s s/model x %s = %s s (from %s models) | %sx |\n' \
    "$name" "$events" "$vars" "$bugs" "$models" "$spinmodels" "$auto" "$per" "$models" "$spinall" "$sampled" "$ratio"
}

echo "== End to end ($(nproc) CPUs)"
echo "| trace | events | shared vars | violations | models | default (auto) | --engine=spin | ratio |"
echo "|---|---|---|---|---|---|---|---|"
row fft "$work/fft.csv" 'x1_1[0-9]'
row server "$work/server.csv" '*'
