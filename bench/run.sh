#!/usr/bin/env bash
# bench/run.sh (make bench): every benchmark behind docs/PERFORMANCE.md, in
# one run, raw output to bench/latest.txt; then `go run ./bench/report`
# computes the figures. See bench/doc.go for what each benchmark measures.
#
# The benchmarks run in BENCH_COUNT (6) passes, each pass running every
# benchmark once in turn, so that a burst of other load on the machine
# touches a figure and its baseline alike rather than all the runs of one
# benchmark; the report takes each benchmark's median over the passes.
#
#   BENCH_COUNT=6            passes
#   BENCH_LEAN_TIMES=3       lean replays in a row a pass (their mean is its figure)
#   BENCH_OUT=bench/latest.txt
#   REPLAY_BENCH_LANEOPS=N   trace size (default bench.LaneOps, 9.6e6)
#   GO=go
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
COUNT=${BENCH_COUNT:-6}
LEAN_TIMES=${BENCH_LEAN_TIMES:-3}
OUT=${BENCH_OUT:-bench/latest.txt}
PROFILE=profiles/default.pgo

tmp=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Each trace is generated once per run and shared by the passes.
export REPLAY_BENCH_CACHE="$tmp/traces"
mkdir -p "$REPLAY_BENCH_CACHE"
start=$(date +%s)
say() { echo "bench: $*" >&2; }

say "building the test binaries"
# Everything measured without a profile (-pgo=off), except the PGO runs.
$GO test -c -pgo=off -o "$tmp/bench-off.test" ./bench
$GO test -c -pgo=off -o "$tmp/engine.test" ./engine
$GO test -c -pgo=off -o "$tmp/columnar.test" ./columnar
pgo=
if [ -f "$PROFILE" ]; then
	$GO test -c -pgo="$PWD/$PROFILE" -o "$tmp/bench-on.test" ./bench
	pgo=1
	if ! cmp -s "$PROFILE" cmd/replay/default.pgo; then
		say "warning: cmd/replay/default.pgo is not $PROFILE; make pgo copies it"
	fi
else
	say "no $PROFILE (make pgo makes it): no PGO figures"
fi
# The columnar package's DuckDB comparison, when it has one: every top-level
# benchmark whose name mentions DuckDB.
duck=$(cd columnar && "$tmp/columnar.test" -test.list '^Benchmark' | grep -i duckdb | paste -sd'|' || true)

# Runs a test binary in its package's directory, as go test does.
bin() {
	local pkg=$1
	shift
	(cd "$pkg" && "$@" -test.run '^$')
}

pass() {
	echo "run: main"
	# Baselines: the limit (zstd -d, the dense loop) and the machine's
	# scaling; short operations, so the standard 1 s of repetitions.
	bin bench "$tmp/bench-off.test" -test.bench '^Benchmark(Limit|MachineScaling)$' -test.benchmem
	# The replays take 0.04 to 30 s each: one replay a pass, but for the
	# lean ones (the targets' figures, 0.04 to 0.6 s), LEAN_TIMES in a row,
	# whose mean is the pass's figure: a burst of other load on this shared
	# machine falls on one of them rather than on the pass's only replay.
	bin bench "$tmp/bench-off.test" -test.bench '^BenchmarkReplay$/./^(lean|lean-1core)$' -test.benchtime "${LEAN_TIMES}x" -test.benchmem
	bin bench "$tmp/bench-off.test" -test.bench '^BenchmarkReplay$/./^(addresses|results|all)$' -test.benchtime 1x -test.benchmem
	bin engine "$tmp/engine.test" -test.bench '^(BenchmarkApply|BenchmarkSketchAdd)$' -test.benchmem
	# The addresses table's rows written alone, and DuckDB beside ours.
	bin columnar "$tmp/columnar.test" -test.bench "^(BenchmarkAddresses${duck:+|$duck})\$" -test.benchmem
	if [ -n "$pgo" ]; then
		# The same replays built without and with the profile, in
		# alternating order.
		local order="off on"
		if [ $(($1 % 2)) -eq 0 ]; then order="on off"; fi
		for p in $order; do
			echo "run: pgo-$p"
			bin bench "$tmp/bench-$p.test" -test.bench '^BenchmarkReplay$/^(uniform-1Mi|histogram)$/^lean$/^workers=2$' -test.benchtime "${LEAN_TIMES}x"
		done
	fi
}

# Before tee truncates $OUT: were it a tracked file (bench/latest.txt, as
# make bench has it), the tree would look modified from then on.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo '+uncommitted')"
{
	echo "commit: $commit"
	echo "date: $(date -u +%Y-%m-%d)"
	for i in $(seq 1 "$COUNT"); do
		say "pass $i of $COUNT ($(($(date +%s) - start)) s so far)"
		pass "$i"
	done
	say "TestPeakMemoryFlat"
	echo "run: main"
	# Its failure is a figure, not a failure of the run.
	$GO test -pgo=off -count 1 -run '^TestPeakMemoryFlat$' -v ./cmd/replay 2>&1 | grep -E 'peak RSS|TestPeakMemoryFlat|^(ok|FAIL)' || true
	echo "elapsed: $(($(date +%s) - start)) s"
} | tee "$OUT"
say "done in $(($(date +%s) - start)) s; raw output in $OUT"
