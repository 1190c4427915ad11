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
go test ./analysis/sidetrack ./analysis/block ./analysis/conflict -run '^$' -bench Analyze -benchtime 3x | grep -E '^Benchmark'
# SVD, high-level data races, stale values: the fft trace and a 1M-event server-like one.
go test ./analysis/svd ./analysis/hldr ./analysis/stale -run '^$' -bench Analyze -benchtime 3x | grep -E '^(pkg:|Benchmark)'
# Wang's dissertation: multi-lockset races, reduction, commit-node (events/s: with everything each requires).
go test ./analysis/lockset ./analysis/reduction ./analysis/commitnode -run '^$' -bench 'Lockset|Reduction|CommitNode' -benchtime 3x | grep -E '^Benchmark'
# Recording: the slowdown of two kernels, and issue 38's row: ns per event of
# the recorded run and of the conversion (memory-bound kernel, 5.3 M events).
go test ./recorder -run '^$' -bench 'RecordOverhead|RecordSpeed' -benchtime 3x 2>/dev/null | grep -E '^Benchmark' || true
go test ./service -run '^$' -bench Workers -benchtime 3x 2>/dev/null | grep -E '^Benchmark' || true
# Trace reading, 1M-event fft trace: built-in CSV vs the std and jsonl plugins.
go test ./formats -run '^$' -bench Read -benchtime 3x | grep -E '^Benchmark' || true
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
  per=$(awk -v t="$spinsample" -v n="$sampled" 'BEGIN { printf "%.3f", (n > 0 ? t / n : 0) }')
  spinall=$(awk -v p="$per" -v n="$models" 'BEGIN { printf "%.0f", p * n }')
  ratio=$(awk -v s="$spinall" -v a="$auto" 'BEGIN { printf "%.1f", (a > 0 ? s / a : 0) }')
  printf '| %s | %s | %s | %s | %s (%s to Spin) | %s s | %s s/model x %s = %s s (from %s models) | %sx |\n' \
    "$name" "$events" "$vars" "$bugs" "$models" "$spinmodels" "$auto" "$per" "$models" "$spinall" "$sampled" "$ratio"
}

echo "== End to end ($(nproc) CPUs)"
echo "| trace | events | shared vars | violations | models | default (auto) | --engine=spin | ratio |"
echo "|---|---|---|---|---|---|---|---|"
# Since ordered thread pairs are not modelled, the fft trace plans a few
# models only: Spin checks them all ('*'), no sample.
row fft "$work/fft.csv" '*'
row server "$work/server.csv" '*'

# Issue 11: a run that finds bugs must not be much slower than the native
# verdicts alone: Spin confirms one model per distinct bug (--confirm one).
peak() { # peak TIME-OUTPUT: "<seconds> s, <MB> MB"
  tail -1 "$1" | awk '{ printf "%s s, %.0f MB", $1, $2 / 1024 }'
}
timed() { # timed OUT CMD...: runs CMD, its wall time and peak RSS into OUT
  local out=$1; shift
  set +e
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -o "$out" -f '%e %M' "$@"  # the last line of $out: a failure adds one before
  else
    local t0 t1; t0=$(now); "$@"; t1=$(now); echo "$(secs "$t0" "$t1") 0" > "$out"
  fi
  local status=$?
  set -e
  [ $status -le 1 ] || { echo "failed ($status): $*"; exit 1; }
}
echo
echo "== Violating models: fft-like, 16 workers, 2 racy counters (--bugs 2), ~100,000 events ($(nproc) CPUs, --no-cache)"
"$BIN" gen --kind fft --threads 16 --vars 256 --bugs 2 --events 100000 -o "$work/racy.csv" 2>/dev/null
timed "$work/racy-auto.time" "$BIN" run --no-cache --quiet --format json -o "$work/racy-auto.json" "$work/racy.csv"
timed "$work/racy-native.time" "$BIN" run --no-cache --quiet --engine native --format json -o "$work/racy-native.json" "$work/racy.csv"
field() { tail -1 "$1" | cut -d' ' -f"$2"; }
ta=$(field "$work/racy-auto.time" 1); tn=$(field "$work/racy-native.time" 1)
echo "| engine | models | violations | bugs | Spin models | time |"
echo "|---|---|---|---|---|---|"
for e in auto native; do
  f="$work/racy-$e.json"
  printf '| %s | %s | %s | %s | %s | %s |\n' "$e" "$(stat "$f" models)" "$(grep -c '"bug_id"' "$f" || true)" \
    "$(grep -c '"id": "AV-' "$f" || true)" "$(stat "$f" spin_models)" "$(peak "$work/racy-$e.time")"
done
awk -v a="$ta" -v n="$tn" 'BEGIN { printf "default / native: %.1fx (target: within 3x, under 30 s)\n", a / n }'

echo
echo "== Threads: main creates N threads, each writes its own variable, main joins them (--engine native)"
echo "| threads | events | time, peak RSS |"
echo "|---|---|---|"
for n in 2000 20000; do
  awk -v n="$n" 'BEGIN {
    for (i = 0; i < n; i++) printf "main, %d, m.c-10, Create, w%d\n", i, i
    for (i = 0; i < n; i++) printf "w%d, %d, w.c-20, Write, slot%d\n", i, i, i
    for (i = 0; i < n; i++) printf "main, %d, m.c-12, Join, w%d\n", i, i
  }' > "$work/threads$n.csv"
  timed "$work/threads$n.time" "$BIN" run --no-cache --quiet --engine native "$work/threads$n.csv" >/dev/null
  printf '| %s | %s | %s |\n' "$n" "$((3 * n))" "$(peak "$work/threads$n.time")"
done
awk -v a="$(field "$work/threads2000.time" 1)" -v b="$(field "$work/threads20000.time" 1)" \
  -v ma="$(field "$work/threads2000.time" 2)" -v mb="$(field "$work/threads20000.time" 2)" \
  'BEGIN { printf "20,000 / 2,000 threads: time %.1fx, peak RSS %.1fx (10x the events; target linear)\n", (a > 0 ? b / a : 0), (ma > 0 ? mb / ma : 0) }'

# Issue 22: traces bigger than memory. Both 10 M-event shapes, end to end
# with the default flags (past 1 M events the trace is spilled to a
# temporary file), beside `zcat | wc -l` of the same file; BENCH_100M=1 adds
# the 100 M-event runs (minutes each, 4-7 GB of temporary disk).
echo
echo "== Large traces ($(nproc) CPUs, --engine native --no-cache; peak RSS; stats.spill_bytes)"
echo "| trace | events | run | zcat \| wc -l | run / zcat | temporary disk |"
echo "|---|---|---|---|---|---|"
large_row() { # large_row SLUG NAME EVENTS GEN-ARGS...
  local slug=$1 label=$2 events=$3; shift 3
  local name="$slug-$events"
  local f="$work/$name.csv.gz"
  "$BIN" gen "$@" --events "$events" -o "$f" 2>/dev/null
  timed "$work/$name-zcat.time" sh -c "zcat '$f' | wc -l >/dev/null"
  timed "$work/$name.time" "$BIN" run --no-cache --engine native --quiet --format json -o "$work/$name.json" "$f"
  local disk
  disk=$(stat "$work/$name.json" spill_bytes)
  awk -v n="$label" -v e="$events" -v r="$(tail -1 "$work/$name.time")" -v z="$(tail -1 "$work/$name-zcat.time")" -v d="${disk:-0}" \
    'BEGIN { split(r, a, " "); split(z, b, " "); printf "| %s | %d M | %.1f s, %.0f MB | %.2f s | %.1fx | %.1f GB |\n", n, e / 1e6, a[1], a[2] / 1024, b[1], a[1] / b[1], d / 1e9 }'
  rm -f "$f"
}
large_row fft16k "fft, 8 threads, 16,384 vars" 10000000 --kind fft --threads 8 --vars 16384
large_row fft33 "fft, 33 vars" 10000000 --kind fft
# Issue 38: a server's trace, its cost against the read of the same file.
large_row server "server, 8 threads" 1000000 --kind server --threads 8
if [ "${BENCH_100M:-0}" = 1 ]; then
  large_row server "server, 8 threads" 10000000 --kind server --threads 8
  large_row fft16k "fft, 8 threads, 16,384 vars" 100000000 --kind fft --threads 8 --vars 16384
  large_row server "server, 8 threads" 100000000 --kind server --threads 8
fi

# Issue 22: one 10 M-event trace with two seeded bugs through the service —
# serve with an embedded NATS server and no worker of its own, then 1 and 2
# `mcpredict worker`s, on loopback — against `mcpredict run` of the same
# file: the time of `batch --server` (upload, parse, plan, projection, the
# workers' checks, the report) and whether the report is the same (mcpredict
# diff: no new or fixed bug; the same number of violation instances).
echo
echo "== One 10 M-event trace through serve + workers (NATS JetStream, loopback)"
"$BIN" gen --kind fft --threads 8 --vars 16384 --bugs 2 --events 10000000 -o "$work/dist.csv.gz" 2>/dev/null
timed "$work/dist-run.time" "$BIN" run --no-cache --engine native --quiet --format json -o "$work/dist-run.json" "$work/dist.csv.gz"
echo "| how | time | same report as run |"
echo "|---|---|---|"
printf '| dist, run | %s | |\n' "$(peak "$work/dist-run.time")"
port=$((20000 + RANDOM % 20000)); nport=$((port + 1))
# Then the same with --shards (the workers project their shards of the
# models from the trace), on a server-like trace too, where projection is
# a third of the work.
dist_rows() { # dist_rows TRACE SHARDS
  local trace=$1 shards=$2 tag n
  tag=$(basename "$trace" .csv.gz)
  for n in 1 2; do
    d="$work/dist-$tag-$shards-$n"; mkdir -p "$d/in"; ln -sf "$trace" "$d/in/"
    "$BIN" serve --addr "127.0.0.1:$port" --data "$d/data" --embedded-nats --nats-listen "127.0.0.1:$nport" --workers 0 --shards "$shards" --no-cache >"$d/serve.log" 2>&1 &
    sp=$!
    trap 'kill "$sp" "${wps[@]}" 2>/dev/null; rm -rf "$work"' EXIT
    wps=()
    for i in $(seq 1 "$n"); do
      "$BIN" worker --nats "nats://127.0.0.1:$nport" --jobs 1 --native-only --no-cache --name "w$i" >"$d/w$i.log" 2>&1 &
      wps+=($!)
    done
    for _ in $(seq 1 100); do curl -sf "127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
    timed "$d/batch.time" "$BIN" batch --quiet --server "http://127.0.0.1:$port" --engine native --out-dir "$d/out" "$d/in" >/dev/null
    kill "$sp" "${wps[@]}" 2>/dev/null || true
    wait "$sp" "${wps[@]}" 2>/dev/null || true
    trap 'rm -rf "$work"' EXIT
    rep="$d/out/reports/$tag.csv.gz.json"
    same=no
    if "$BIN" diff "$work/$tag-run.json" "$rep" 2>/dev/null | grep -q '^0 new, 0 fixed' &&
      [ "$(grep -c '"bug_id"' "$rep")" = "$(grep -c '"bug_id"' "$work/$tag-run.json")" ]; then
      same=yes
    fi
    printf '| %s, serve --shards %d + %d worker(s) | %s s | %s |\n' "$tag" "$shards" "$n" "$(tail -1 "$d/batch.time" | cut -d' ' -f1)" "$same"
    port=$((port + 2)); nport=$((port + 1))
  done
}
dist_rows "$work/dist.csv.gz" 0
dist_rows "$work/dist.csv.gz" 2
"$BIN" gen --kind server --threads 8 --events 1000000 -o "$work/srv.csv.gz" 2>/dev/null
timed "$work/srv-run.time" "$BIN" run --no-cache --engine native --quiet --format json -o "$work/srv-run.json" "$work/srv.csv.gz"
printf '| srv (server, 8 threads, 1 M events), run | %s | |\n' "$(peak "$work/srv-run.time")"
dist_rows "$work/srv.csv.gz" 0
dist_rows "$work/srv.csv.gz" 2

# Issue 38: conflict against RAPID's Aerodrome (Mathur and Viswanathan,
# ASPLOS 2020), side by side on the same RAPID STD files of 10 M events:
# gen fft with every worker's barrier phase a Begin/End transaction (End
# before its BarrierWait, Begin before its next event), one clean and one
# with two racy counters (--bugs 2), converted with convert --to std
# --rapid. RAPID stops at the first violation; `--first` does too. Runs only
# when RAPID_CLASSPATH names a RAPID build (its classes and
# commons-cli; JAVA overrides java): RAPID is not part of the project.
echo
echo "== conflict against RAPID's Aerodrome, 10 M-event traces with transactions (RAPID STD read by both; wall time, peak RSS)"
if [ -z "${RAPID_CLASSPATH:-}" ]; then
  echo "skipped: set RAPID_CLASSPATH to a RAPID build (umangm/rapid's classes and commons-cli) to run it"
else
  "$BIN" formats 2>/dev/null | grep -q '^std ' || go build -o "$(dirname "$BIN")/mcpredict-format-std" ./plugins/std
  echo "| trace | events | conflict | conflict --first | conflict --first, CSV of the same run | RAPID Aerodrome | time, memory / RAPID's (--first on the violation) |"
  echo "|---|---|---|---|---|---|---|"
  for bugs in 0 2; do
    f="$work/rapid$bugs.std"
    "$BIN" gen --kind fft --threads 8 --vars 2000 --bugs "$bugs" --events 10000000 2>/dev/null |
      awk 'BEGIN { FS = ", "; OFS = ", " }
        /^#/ || NF < 4 { print; next }
        { t = $1
          if ($4 == "Join" && open[$5]) { print $5, ++n, $3, "End", "phase"; open[$5] = 0 }
          if (t != "main" && !open[t] && $4 != "BarrierWait") { print t, ++n, $3, "Begin", "phase"; open[t] = 1 }
          if ($4 == "BarrierWait" && open[t]) { print t, ++n, $3, "End", "phase"; open[t] = 0 }
          $2 = ++n; print }' > "$work/rapid$bugs.csv"
    "$BIN" convert --to std --rapid -o "$f" "$work/rapid$bugs.csv" 2>/dev/null
    timed "$work/rapid$bugs-csv.time" "$BIN" run --no-cache --engine native --quiet --analysis conflict --first --format json -o "$work/rapid$bugs-csv.json" "$work/rapid$bugs.csv"
    rm -f "$work/rapid$bugs.csv"
    timed "$work/rapid$bugs-all.time" "$BIN" run --no-cache --engine native --quiet --analysis conflict --format json -o "$work/rapid$bugs-all.json" "$f"
    timed "$work/rapid$bugs-first.time" "$BIN" run --no-cache --engine native --quiet --analysis conflict --first --format json -o "$work/rapid$bugs-first.json" "$f"
    timed "$work/rapid$bugs-aero.time" "${JAVA:-java}" -cp "$RAPID_CLASSPATH" Aerodrome -f std -p "$f" > "$work/rapid$bugs-aero.out"
    verdict() { grep -q '"id": "CS-' "$1" && echo violation || echo none; }
    aero=$(grep -q '^Atomicity violation detected' "$work/rapid$bugs-aero.out" && echo violation || echo none)
    at=$( [ "$aero" = violation ] && echo "at event $(sed -n 's/^Number of events analyzed = //p' "$work/rapid$bugs-aero.out"), " || true)
    cmp=$( [ "$bugs" = 0 ] && echo all || echo first)
    awk -v a="$(tail -1 "$work/rapid$bugs-$cmp.time")" -v r="$(tail -1 "$work/rapid$bugs-aero.time")" \
      -v name="$( [ "$bugs" = 0 ] && echo clean || echo '2 racy counters')" -v ev="$(stat "$work/rapid$bugs-all.json" events)" \
      -v va="$(verdict "$work/rapid$bugs-all.json")" -v vf="$(verdict "$work/rapid$bugs-first.json")" -v vr="$aero" -v at="$at" \
      -v x="$(tail -1 "$work/rapid$bugs-all.time")" -v y="$(tail -1 "$work/rapid$bugs-first.time")" \
      -v z="$(tail -1 "$work/rapid$bugs-csv.time")" -v vc="$(verdict "$work/rapid$bugs-csv.json")" \
      'BEGIN { split(a, A, " "); split(r, R, " "); split(x, X, " "); split(y, Y, " "); split(z, Z, " ")
        printf "| %s | %s | %s, %.1f s, %.0f MB | %s, %.1f s, %.0f MB | %s, %.1f s, %.0f MB | %s, %s%.1f s, %.0f MB | %.2fx, %.2fx |\n",
          name, ev, va, X[1], X[2] / 1024, vf, Y[1], Y[2] / 1024, vc, Z[1], Z[2] / 1024, vr, at, R[1], R[2] / 1024, A[1] / R[1], A[2] / R[2] }'
    rm -f "$f" "$f.locs"
  done
  echo "target (issue 38): conflict at most RAPID's time and memory (ratios <= 1)"
fi
