#!/usr/bin/env bash
# bench/scale/run.sh: the measured scaling of the split pipeline (replay
# split, replay -partition i/N SPLIT, replay merge), each task run as its own
# process, one after another, on this machine, as N nodes would run them at
# once. Run by `make bench-scale`.
#
# For each trace (replay gen uniform, histogram -bins 4096, bfs; SCALE_LANE_OPS
# lane-ops each) it replays the trace once (-tables $SCALE_TABLES): the
# single replay; then for each N of SCALE_NS it splits the trace into N
# partitions in M = N slices (N split tasks), replays each partition from the
# split directory (N tasks) and merges them, checks that every merged table
# is byte for byte the single replay's, and reports:
#
#   split      the slowest split task's wall time
#   replay     the slowest partition replay's wall time
#   merge      the merge's wall time
#   speedup    the predicted N-node speedup: single wall / (split + replay + merge)
#   cpu        the CPU time (user + system) of all 2N+1 tasks / the single replay's
#   balance    the largest and smallest partition's lane-ops (as the split
#              tasks routed them, before any combining) / their mean
#
# and, on a line of its own, the CPU time of all split tasks, of all
# partition replays and of the merge,
# and what the split tasks say of an uneven split: slice 0's partition over
# 1.25 times the mean and its hottest words, and any word whose accesses
# alone exceed 1.25 times the mean partition's load. Wall times on a shared machine are
# noisy: it prints the load average before and after, and the machine's own
# two-goroutine ceiling and cross-core round trip before and after (bench/e2e
# -machine, as make bench prints them), and it runs SCALE_REPEAT passes,
# each of them every measurement once (the single replay, then every task
# of every N, in order), keeping each one's fastest run (CPU of that run).
#
# Environment:
#   SCALE_DIR        where the traces and tables go (default /tmp/replay-bench-scale;
#                    the traces are kept and reused, the tables removed)
#   SCALE_NS         partition counts (default "2 4 8 16")
#   SCALE_LANE_OPS   lane-ops a trace (default 1e8)
#   SCALE_TRACES     which of uniform histogram bfs (default all three)
#   SCALE_TABLES     the tables written (default memory,instructions,ops)
#   SCALE_REPEAT     passes: runs of each measurement, the fastest kept (default 5, as
#                    make bench keeps the best of 5)
#   SCALE_OUT        also write the report to this file
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
DIR=${SCALE_DIR:-/tmp/replay-bench-scale}
NS=${SCALE_NS:-2 4 8 16}
LANE_OPS=${SCALE_LANE_OPS:-1e8}
TRACES=${SCALE_TRACES:-uniform histogram bfs}
TABLES=${SCALE_TABLES:-memory,instructions,ops}
REPEAT=${SCALE_REPEAT:-5}
OUT=${SCALE_OUT:-}
mkdir -p "$DIR"
BIN=$DIR/replay
$GO build -o "$BIN" ./cmd/replay
$GO build -o "$DIR/e2e" ./bench/e2e

report() { echo "$*"; [ -z "$OUT" ] || echo "$*" >>"$OUT"; }
[ -z "$OUT" ] || : >"$OUT"

# once LOG CMD... runs CMD once and appends "wall cpu" to LOG (seconds);
# its standard output goes to LOG.out. It is timed by bench/e2e -time-to,
# as make bench times its commands: the system's dirty pages written back
# first (untimed), then the process's wall time from start to exit and its
# CPU time, to the microsecond.
once() {
  local log=$1 t w c
  shift
  t=$(mktemp)
  "$DIR/e2e" -time-to "$t" -- "$@" >"$log.out"
  read -r w c <"$t"
  rm -f "$t"
  echo "$w $c" >>"$log"
}

# best LOG prints LOG's fastest run, "wall cpu".
best() { sort -g -k1,1 "$1" | head -n 1; }

# machine prints the machine's two-goroutine ceiling (one goroutine's time
# over two's, on the same work) and its cross-core round trip.
machine() {
  "$DIR/e2e" -machine | awk '
    /goroutines=1 / { one = $3 } /goroutines=2 / { two = $3 } /handoff/ { ho = $3 }
    END { printf "two-goroutine ceiling %.2fx (%.1f ms against %.1f ms), cross-core handoff %.0f ns", one / two, one / 1e6, two / 1e6, ho }'
}

gen() {
  local name=$1 path=$DIR/$1-$LANE_OPS.zst
  shift
  [ -f "$path" ] || "$BIN" gen "$@" -lane-ops "$LANE_OPS" -q -o "$path"
  echo "$path"
}

report "bench-scale: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before;" \
  "tables $TABLES, $LANE_OPS lane-ops a trace, M = N slices"
report "bench-scale: machine before: $(machine)"
report "$(printf '%-10s %3s %8s %8s %8s %8s %8s %7s %7s %7s' trace N single split replay merge speedup cpu max/mean min/mean)"
for tr in $TRACES; do
  case $tr in
  uniform) trace=$(gen uniform uniform) ;;
  histogram) trace=$(gen histogram4096 histogram -bins 4096) ;;
  bfs) trace=$(gen bfs bfs) ;;
  *) echo "bench-scale: unknown trace $tr" >&2; exit 2 ;;
  esac
  work=$DIR/work-$tr
  rm -rf "$work"
  mkdir -p "$work"
  # SCALE_REPEAT passes, each of them the single replay and then every
  # task of every N once, as make bench's passes run every command once:
  # a burst of other load, or a slow spell of the host (the single replay
  # took 0.6 s in one pass and 1.1 s in another here), falls on a figure
  # and its baseline alike. Each figure is a task's fastest run.
  for pass in $(seq "$REPEAT"); do
    once "$work/single.runs" "$BIN" "$trace" -tables "$TABLES" -o "$work/single" -q
    for n in $NS; do
      split=$work/split-$n parts=$work/parts-$n merged=$work/merged-$n
      if [ "$pass" -eq 1 ]; then
        : >"$work/hot-$n"
        : >"$work/lanes-$n"
      fi
      for k in $(seq 0 $((n - 1))); do
        once "$work/split-$n-$k.runs" "$BIN" split "$trace" -partitions "$n" -slice "$k/$n" -tables "$TABLES" -o "$split"
        [ "$pass" -eq 1 ] || continue
        # "  partition lane-ops L0 L1 ...": the slice's lane-ops a partition.
        sed -n 's/^  partition lane-ops //p' "$work/split-$n-$k.runs.out" >>"$work/lanes-$n"
        grep '^  hot word' "$work/split-$n-$k.runs.out" >>"$work/hot-$n" || true
        if [ "$k" -eq 0 ]; then # slice 0's view of an uneven split: the partition, its hottest words
          grep '^  imbalance' "$work/split-$n-$k.runs.out" | sed 's/^  imbalance */slice 0: /' >>"$work/hot-$n" || true
        fi
      done
      for i in $(seq 0 $((n - 1))); do
        once "$work/replay-$n-$i.runs" "$BIN" "$split" -partition "$i/$n" -tables "$TABLES" -o "$parts"
      done
      once "$work/merge-$n.runs" "$BIN" merge "$parts" -o "$merged" -q
      for f in "$work/single"/*; do
        cmp -s "$f" "$merged/$(basename "$f")" || { echo "bench-scale: $tr N=$n: merged $(basename "$f") differs from the single replay's" >&2; exit 1; }
      done
    done
  done
  read -r swall scpu < <(best "$work/single.runs")
  for n in $NS; do
    split=$work/split-$n parts=$work/parts-$n merged=$work/merged-$n
    # split-N.t, replay-N.t: each task's fastest run, a line a task.
    for k in $(seq 0 $((n - 1))); do best "$work/split-$n-$k.runs"; done >"$work/split-$n.t"
    for i in $(seq 0 $((n - 1))); do best "$work/replay-$n-$i.runs"; done >"$work/replay-$n.t"
    best "$work/merge-$n.runs" >"$work/merge-$n.t"
    line=$(awk -v n="$n" -v swall="$swall" -v scpu="$scpu" -v tr="$tr" \
      -v sf="$work/split-$n.t" -v rf="$work/replay-$n.t" -v mf="$work/merge-$n.t" -v lf="$work/lanes-$n" '
      function slowest(f,   w, c, m) { m = 0; while ((getline line < f) > 0) { split(line, a, " "); if (a[1] > m) m = a[1]; cpu += a[2] } close(f); return m }
      BEGIN {
        cpu = 0
        s = slowest(sf); r = slowest(rf); m = slowest(mf)
        sum = 0; k = 0; lo = -1; hi = 0
        # the lane-ops of partition i: the sum over the slices of column i
        while ((getline line < lf) > 0) { np = split(line, a, " "); for (i = 1; i <= np; i++) per[i] += a[i] }
        for (i = 1; i <= n; i++) { x = per[i]; sum += x; k++; if (lo < 0 || x < lo) lo = x; if (x > hi) hi = x }
        mean = sum / k
        printf "%-10s %3d %8.3f %8.3f %8.3f %8.3f %7.2fx %7.2fx %7.3f %7.3f", tr, n, swall, s, r, m, swall / (s + r + m), cpu / scpu, hi / mean, lo / mean
      }')
    report "$line"
    report "$(awk -v tr="$tr" -v n="$n" -v sf="$work/split-$n.t" -v rf="$work/replay-$n.t" -v mf="$work/merge-$n.t" '
      function total(f,   c) { c = 0; while ((getline line < f) > 0) { split(line, a, " "); c += a[2] } close(f); return c }
      BEGIN { printf "  %s N=%d CPU of all tasks: split %.2f s, replay %.2f s, merge %.2f s", tr, n, total(sf), total(rf), total(mf) }')"
    sort -u "$work/hot-$n" | sed "s/^  hot word */hot word: /; s/^/$tr N=$n /" | while read -r l; do report "  $l"; done
    rm -rf "$split" "$parts" "$merged"
  done
  report "$(printf '%-10s single replay: %.3f s wall, %.3f s CPU' "$tr" "$swall" "$scpu")"
done
report "bench-scale: load average $(cut -d' ' -f1-3 /proc/loadavg) after"
report "bench-scale: machine after: $(machine)"
