#!/usr/bin/env bash
# bench/old.sh [COMMIT]: remakes bench/old.txt, the old figures of
# docs/PERFORMANCE.md: this harness (bench/ and the Makefile) copied into a
# temporary worktree of COMMIT (default c1edf01, the code before the
# redesign), its own PGO profile made there (make pgo), then bench/run.sh,
# keeping only the lines the report reads. It takes as long as make bench
# on the old code (about 20 minutes); run it when the machine is quiet, as
# make bench. It changes nothing in this checkout but bench/old.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:-c1edf01}
GO=${GO:-go}
wt=$(mktemp -d "${TMPDIR:-/tmp}/replay-old.XXXXXX")
cleanup() {
	if ! git worktree remove --force "$wt" >/dev/null 2>&1; then
		rm -rf "$wt"
		git worktree prune
	fi
}
trap cleanup EXIT
rmdir "$wt"
git worktree add --detach "$wt" "$commit" >&2
cp -r bench Makefile "$wt/"
rm -f "$wt/bench/latest.txt"
# What the harness needs that the old code has not: partitions (no
# BenchmarkPartition there) and trace.Copy (added here as it is now).
rm -f "$wt/bench/partition_test.go"
if ! grep -q '^func Copy(' "$wt"/trace/*.go; then
	{
		echo 'package trace'
		echo
		echo 'import "io"'
		echo
		sed -n '/^func Copy(/,/^}/p' trace/source.go
	} >"$wt/trace/copy_old.go"
fi
# The DuckDB reader of the tests, when installed here, rather than npm ci.
if [ -d tools/duckdb/node_modules ]; then cp -r tools/duckdb/node_modules "$wt/tools/duckdb/"; fi
raw="$wt/bench/raw.txt"
(cd "$wt" && make GO="$GO" pgo >&2 && GO="$GO" BENCH_OUT="$raw" bash bench/run.sh >&2)
grep -E '^(Benchmark|run:|goos:|goarch:|pkg:|laneops:|date:|cpu:|elapsed:)|peak RSS|--- (PASS|FAIL): TestPeakMemoryFlat' "$raw" |
	sed "1i commit: $(git rev-parse --short "$commit") with this harness" >bench/old.txt
echo "bench/old.sh: wrote bench/old.txt ($(wc -l <bench/old.txt) lines)" >&2
