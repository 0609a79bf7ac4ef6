package main

import (
	"math"
	"strings"
	"testing"
)

const sample = `commit: abc1234
laneops: 9600000
run: main
goos: linux
pkg: github.com/gpureplay/replay/bench
BenchmarkLimit/uniform-1Mi/zstd-cli-2   	      30	  30000000 ns/op	 1470 MB/s
BenchmarkLimit/uniform-1Mi/zstd-cli-2   	      30	  36000000 ns/op	 1470 MB/s
BenchmarkLimit/uniform-1Mi/zstd-cli-2   	      30	  34000000 ns/op	 1470 MB/s
BenchmarkLimit/uniform-1Mi/dense-2      	     100	  10000000 ns/op
BenchmarkLimit/uniform-1Mi/addr-floor-2 	      20	  60000000 ns/op
BenchmarkLimit/uniform-1Mi/addr-floor-16-2 	      90	  12000000 ns/op
BenchmarkReplay/uniform-1Mi/lean/workers=1-2 	 1	 1000000000 ns/op	 300000000 peakRSS-B	 1048476 words
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  800000000 ns/op	 300000000 peakRSS-B	 1048476 words
BenchmarkReplay/uniform-1Mi/lean-1core/workers=1-2 	 1	 1400000000 ns/op	 300000000 peakRSS-B	 1048476 words
BenchmarkReplay/uniform-1Mi/addresses/workers=2-2 	 1	 1000000000 ns/op	 367108864 peakRSS-B	 1048476 words
BenchmarkMachineScaling/words=1048576/goroutines=1-2 	 10	 40000000 ns/op
BenchmarkMachineScaling/words=1048576/goroutines=2-2 	 20	 25000000 ns/op
pkg: github.com/gpureplay/replay/engine
BenchmarkApply/random/engine-2 	 4000000	 64 ns/op
BenchmarkApply/random/dense-2 	 4000000	 2.56 ns/op
BenchmarkSketchAdd-2 	 2500	 480000 ns/op	 13.0 ns/access
pkg: github.com/gpureplay/replay/columnar
BenchmarkResultsVsDuckDB-2 	 5	 100 ns/op	 90 ns/row	 120 cpu-ns/row	 80 duckdb-cpu-ns/row	 70 duckdb-ns/row
BenchmarkAddresses-2 	 100	 12000000 ns/op	 11.5 ns/row	 16 cpu-ns/row
run: pgo-off
pkg: github.com/gpureplay/replay/bench
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  900000000 ns/op
run: pgo-on
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  750000000 ns/op
    memory_test.go:63: peak RSS: 197 MiB at 2e7 lane-ops, 253 MiB at 1e8
--- PASS: TestPeakMemoryFlat (20.1s)
`

func TestFigures(t *testing.T) {
	d, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Median("main", "bench", "BenchmarkLimit/uniform-1Mi/zstd-cli", "ns/op"); !ok || v != 34e6 {
		t.Errorf("median zstd-cli %v %v, want 34e6 (the -2 suffix gone)", v, ok)
	}
	near := func(name string, got Figure, want float64) {
		t.Helper()
		if !got.OK || math.Abs(got.Value-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: %v (%s), want %v", name, got.Value, got.Detail, want)
		}
	}
	near("lean/limit", leanOverLimit("uniform-1Mi")(d), 0.8e9/44e6)
	near("addresses time", addressesTime(d), 0.25)
	near("addresses floor", addressesFloor("addr-floor")(d), 60e6/800e6)
	near("addresses floor, 16-byte records", addressesFloor("addr-floor-16")(d), 12e6/800e6)
	near("addresses written alone", addressesWrite(d), 11.5*1048476/800e6)
	near("sketches in cache", sketchesInCache(d), 13.0*9600000/2/800e6)
	near("B/addr", bytesPerAddress("uniform-1Mi")(d), 64*1048576.0/1048476)
	near("speedup", speedup(d), 1.75)
	near("of ceiling", speedupOfCeiling(d), 1.75/1.6)
	near("workers on two cores", workersOnTwoCores(d), 1.25)
	near("apply scattered", apply("scattered", "random")(d), 2.56/64)
	near("results vs DuckDB", resultsVsDuckDB(d), 120.0/80)
	near("pgo", pgoGain("uniform-1Mi")(d), 0.9/0.75)
	near("peak flat", peakFlat(d), 1)
	// A later run of the one-core replay and its own two-worker one (as
	// bench/old.txt has) is used for both, not mixed with the main run's.
	d2, err := Parse(strings.NewReader(sample + "run: onecore\npkg: github.com/gpureplay/replay/bench\n" +
		"BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  500000000 ns/op\n" +
		"BenchmarkReplay/uniform-1Mi/lean-1core/workers=1-2 	 1	  600000000 ns/op\n" +
		"BenchmarkMachineScaling/words=1048576/goroutines=1-2 	 10	 30000000 ns/op\n" +
		"BenchmarkMachineScaling/words=1048576/goroutines=2-2 	 20	 20000000 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	near("speedup from the onecore run", speedup(d2), 1.2)
	near("workers on two cores, main run", workersOnTwoCores(d2), 1.25)
	near("of the onecore run's ceiling", speedupOfCeiling(d2), 1.2/1.5)
	if f := leanOverLimit("histogram")(d); f.OK {
		t.Errorf("histogram measured from nothing: %+v", f)
	}
	// An empty old file gives "not measured" everywhere, never a panic.
	out := Render(d, &Data{}, "new.txt", "old.txt")
	if !strings.Contains(out, "not measured") || !strings.Contains(out, "commit abc1234") {
		t.Errorf("render:\n%s", out)
	}
}

// TestSpells: the two-worker replays whose cross-core round trip
// (handoff-ns) was over spellFactor times the run's fastest are left out
// of the information row, and counted in the header; the target's figure
// keeps them.
func TestSpells(t *testing.T) {
	const spells = `run: main
pkg: github.com/gpureplay/replay/bench
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 3	  600000000 ns/op	 90 handoff-ns
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 3	 1000000000 ns/op	 400 handoff-ns
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 3	  640000000 ns/op	 170 handoff-ns
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 3	 1100000000 ns/op	 390 handoff-ns
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 3	 1050000000 ns/op	 175 handoff-ns
BenchmarkReplay/uniform-1Mi/lean-1core/workers=1-2 	 3	 1400000000 ns/op
BenchmarkReplay/histogram/lean/workers=2-2 	 3	  300000000 ns/op	 95 handoff-ns
BenchmarkMachineScaling/words=1048576/goroutines=1-2 	 10	 40000000 ns/op
BenchmarkMachineScaling/words=1048576/goroutines=2-2 	 20	 20000000 ns/op
`
	d, err := Parse(strings.NewReader(spells))
	if err != nil {
		t.Fatal(err)
	}
	// 90 ns at best: 175 and 170 are within twice it, 390 and 400 not.
	f := speedupOutsideSpells(d)
	if want := 1400.0 / 640 / 2; !f.OK || math.Abs(f.Value-want) > 1e-9 || !strings.Contains(f.Detail, "2 of 5") {
		t.Errorf("outside spells: %v (%s), want %v with 2 of 5 left out", f.Value, f.Detail, want)
	}
	if f := speedup(d); !f.OK || math.Abs(f.Value-1400.0/1000) > 1e-9 {
		t.Errorf("speedup: %v (%s), want every run's median, 1.4", f.Value, f.Detail)
	}
	out := Render(d, &Data{}, "new.txt", "old.txt")
	if !strings.Contains(out, "2 of this run's 6 replays ran in one of the machine's slow spells") || !strings.Contains(out, "up to 400 ns, against 90 ns") {
		t.Errorf("render does not count the spells:\n%s", out)
	}
	if !strings.Contains(out, "| 640 ms (3 of 5) |") {
		t.Errorf("render has no lean replay outside spells (640 ms, 3 runs of 5) for uniform-1Mi:\n%s", out)
	}
	// Without handoff-ns (the old runs), nothing is said.
	d2, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if f := speedupOutsideSpells(d2); f.OK {
		t.Errorf("outside spells measured without handoff-ns: %+v", f)
	}
	if out := Render(d2, &Data{}, "new.txt", "old.txt"); strings.Contains(out, "slow spells⁴**") {
		t.Errorf("render counts spells without handoff-ns:\n%s", out)
	}
}

func TestSplice(t *testing.T) {
	page := "# P\n\nprose before\n\n" + beginMarker + " -->\nold figures\n" + endMarker + "\n\nprose after\n"
	out, err := Splice([]byte(page), beginMarker+" x -->\nnew\n"+endMarker+"\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# P\n\nprose before\n\n" + beginMarker + " x -->\nnew\n" + endMarker + "\n\nprose after\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := Splice([]byte("no markers"), "x"); err == nil {
		t.Error("a page without markers spliced")
	}
}
