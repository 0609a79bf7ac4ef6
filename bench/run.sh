#!/usr/bin/env bash
# bench/run.sh (make bench): every figure of docs/PERFORMANCE.md in one run,
# raw output to bench/latest.txt; then `go run ./bench/report` computes the
# figures. See bench/doc.go for what each figure measures.
#
# First the end-to-end figures, on which the targets are judged: bench/e2e
# times the built command (bin/replay, built as go build builds it, with
# cmd/replay/default.pgo) as a process, best of BENCH_RUNS, beside the
# machine's own ceiling and cross-core round trip. Then the in-process
# benchmarks, which say where the time goes, in BENCH_COUNT passes.
#
#   BENCH_RUNS=5             runs of each end-to-end command (a figure is the best)
#   BENCH_COUNT=1            passes of the in-process benchmarks (0: none)
#   BENCH_OUT=bench/latest.txt
#   REPLAY_BENCH_LANEOPS=N   trace size (default bench.LaneOps, 9.6e6)
#   BENCH_E2E_FLAGS=…        more flags for bench/e2e (-families, -dialects, -default-on …)
#   GO=go
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
RUNS=${BENCH_RUNS:-5}
COUNT=${BENCH_COUNT:-1}
OUT=${BENCH_OUT:-bench/latest.txt}
LANEOPS=${REPLAY_BENCH_LANEOPS:-9.6e6}
PROFILE=profiles/default.pgo

start=$(date +%s)
say() { echo "bench: $*" >&2; }

# What the harness runs besides Go: zstd (the limit's decompression) and
# taskset (util-linux; the one-core replay). Installed through apt-get when
# missing and root, as make test-cluster installs Slurm.
for tool in zstd taskset; do
	if ! command -v "$tool" >/dev/null; then
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			pkg=$tool
			[ "$tool" = taskset ] && pkg=util-linux
			say "installing $pkg"
			apt-get install -y -q "$pkg" >&2 || { apt-get update -q >&2 && apt-get install -y -q "$pkg" >&2; }
		else
			say "warning: no $tool command: its figures will be n/a"
		fi
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

say "building bin/replay (as go build does, with cmd/replay/default.pgo), bin/hello, bin/textfloor, bin/e2e"
mkdir -p bin
$GO build -o bin/replay ./cmd/replay
$GO build -o bin/hello ./bench/hello
$GO build -o bin/textfloor ./bench/textfloor
$GO build -o bin/e2e ./bench/e2e

say "building the in-process test binaries"
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
fi
# The columnar package's DuckDB comparison, when it has one.
duck=$(cd columnar && "$tmp/columnar.test" -test.list '^Benchmark' | grep -i duckdb | paste -sd'|' || true)

# Runs a test binary in its package's directory, as go test does.
bin() {
	local pkg=$1
	shift
	(cd "$pkg" && "$@" -test.run '^$')
}

# One pass of the in-process benchmarks: each replay once, the short
# baselines for the standard second.
pass() {
	echo "run: main"
	bin bench "$tmp/bench-off.test" -test.bench '^Benchmark(Limit|MachineScaling)$' -test.benchmem
	bin bench "$tmp/bench-off.test" -test.bench '^BenchmarkReplay$/^(uniform-1Mi|histogram|hotcounter)$/' -test.benchtime 1x -test.benchmem
	bin engine "$tmp/engine.test" -test.bench '^(BenchmarkApply|BenchmarkSketchAdd)$' -test.benchmem
	bin columnar "$tmp/columnar.test" -test.bench "^(BenchmarkAddresses|BenchmarkResults${duck:+|$duck})\$" -test.benchmem
	if [ -n "$pgo" ]; then
		local order="off on"
		if [ $(($1 % 2)) -eq 0 ]; then order="on off"; fi
		for p in $order; do
			echo "run: pgo-$p"
			bin bench "$tmp/bench-$p.test" -test.bench '^BenchmarkReplay$/^(uniform-1Mi|histogram)$/^lean$/^workers=2$' -test.benchtime 3x
		done
	fi
}

# Before tee truncates $OUT: were it a tracked file (bench/latest.txt, as
# make bench has it), the tree would look modified from then on.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo '+uncommitted')"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
{
	echo "commit: $commit"
	echo "date: $(date -u +%Y-%m-%d)"
	[ -n "$cpu" ] && echo "cpu: $cpu"
	say "end to end: bin/e2e, best of $RUNS"
	# shellcheck disable=SC2086
	bin/e2e -replay bin/replay -hello bin/hello -textfloor bin/textfloor -dir "$tmp" \
		-lane-ops "$LANEOPS" -runs "$RUNS" ${BENCH_E2E_FLAGS:-}
	export REPLAY_BENCH_LANEOPS=$LANEOPS
	export REPLAY_BENCH_CACHE="$tmp/traces"
	mkdir -p "$REPLAY_BENCH_CACHE"
	for i in $(seq 1 "$COUNT"); do
		say "in-process pass $i of $COUNT ($(($(date +%s) - start)) s so far)"
		pass "$i"
	done
	echo "run: end"
	echo "elapsed: $(($(date +%s) - start)) s"
} | tee "$OUT"
say "done in $(($(date +%s) - start)) s; raw output in $OUT"
