package main

import (
	"math"
	"strings"
	"testing"
)

// sample is a small run of bench/e2e and of the in-process benchmarks: two
// traces, one family not supported in one dialect, and a command that
// failed.
const sample = `commit: abc1234
date: 2026-01-02
run: e2e
laneops: 9600000
runs: 5
loadavg-start: 0.50 0.40 0.30
binary-B: 63086157
skip: uniform-lsc/gen: replay: gen: workload uniform: no lsc form
trace: uniform-ptx laneops=9600000 file-B=41452303 words=1048576 mix=add
BenchmarkE2E/uniform-ptx/dense 5 40000000 ns/op 41000000 median-ns 4.167 ns/laneop
trace: histogram-ptx laneops=9600000 file-B=10000000 words=256 mix=add
BenchmarkE2E/histogram-ptx/dense 5 5000000 ns/op 5000000 median-ns 0.5 ns/laneop
trace: spinlock-visa laneops=9600000 file-B=3000000 words=4 mix=exch_3%_cas_97%
BenchmarkE2E/spinlock-visa/dense 5 10000000 ns/op 10000000 median-ns 1.04 ns/laneop
text: uniform-ptx file-B=171551011
BenchmarkE2E/machine/scaling/goroutines=1 1 120000000 ns/op
BenchmarkE2E/machine/scaling/goroutines=2 1 70000000 ns/op
BenchmarkE2E/machine/handoff 1 480.0 ns/op
BenchmarkE2E/machine/scaling/goroutines=1 1 100000000 ns/op
BenchmarkE2E/machine/scaling/goroutines=2 1 60000000 ns/op
BenchmarkE2E/machine/handoff 1 520.0 ns/op
BenchmarkE2E/machine/scaling/goroutines=1 1 110000000 ns/op
BenchmarkE2E/machine/scaling/goroutines=2 1 50000000 ns/op
BenchmarkE2E/machine/handoff 1 2000.0 ns/op
BenchmarkE2E/uniform-ptx/zstd 5 110000000 ns/op 120000000 median-ns 80000000 cpu-ns 4000000 maxrss-B
BenchmarkE2E/uniform-ptx/lean 5 300000000 ns/op 320000000 median-ns 250000000 cpu-ns 66000000 maxrss-B
BenchmarkE2E/uniform-ptx/default 5 1200000000 ns/op 1300000000 median-ns 900000000 cpu-ns 150000000 maxrss-B
BenchmarkE2E/uniform-ptx/addresses 5 540000000 ns/op 600000000 median-ns 400000000 cpu-ns 90000000 maxrss-B
BenchmarkE2E/histogram-ptx/zstd 5 25000000 ns/op 26000000 median-ns 20000000 cpu-ns 4000000 maxrss-B
BenchmarkE2E/histogram-ptx/lean 5 60000000 ns/op 70000000 median-ns 50000000 cpu-ns 50000000 maxrss-B
BenchmarkE2E/histogram-ptx/default 5 300000000 ns/op 310000000 median-ns 250000000 cpu-ns 90000000 maxrss-B
BenchmarkE2E/spinlock-visa/zstd 5 10000000 ns/op 11000000 median-ns 9000000 cpu-ns 4000000 maxrss-B
BenchmarkE2E/spinlock-visa/lean 5 144000000 ns/op 150000000 median-ns 100000000 cpu-ns 50000000 maxrss-B
skip: spinlock-visa/default: replay: trace.zst: something failed
BenchmarkE2E/uniform-ptx/workers1-1core 5 450000000 ns/op 460000000 median-ns 250000000 cpu-ns 60000000 maxrss-B
BenchmarkE2E/uniform-ptx/workers2 5 300000000 ns/op 310000000 median-ns 260000000 cpu-ns 66000000 maxrss-B
BenchmarkE2E/uniform-ptx/text-floor 5 100000000 ns/op 110000000 median-ns 95000000 cpu-ns 180000000 maxrss-B
BenchmarkE2E/uniform-ptx/text-asm 5 3500000000 ns/op 3600000000 median-ns 3400000000 cpu-ns 80000000 maxrss-B
BenchmarkE2E/uniform-ptx/text-lean 5 600000000 ns/op 700000000 median-ns 900000000 cpu-ns 80000000 maxrss-B
BenchmarkE2E/startup/hello 5 1000000 ns/op 1100000 median-ns 1000000 cpu-ns 3000000 maxrss-B
BenchmarkE2E/startup/help 5 32000000 ns/op 33000000 median-ns 36000000 cpu-ns 30000000 maxrss-B
BenchmarkE2E/startup/one-inst 5 12000000 ns/op 13000000 median-ns 12000000 cpu-ns 30000000 maxrss-B
import: traceg-1x file-B=40000000 lines=600000 atomics=180000 blocks=1000
import: traceg-2x file-B=80000000 lines=1200000 atomics=360000 blocks=2000
BenchmarkE2E/import/traceg-1x 5 800000000 ns/op 900000000 median-ns 700000000 cpu-ns 20971520 maxrss-B
BenchmarkE2E/import/traceg-2x 5 1600000000 ns/op 1700000000 median-ns 1500000000 cpu-ns 22020096 maxrss-B
BenchmarkE2E/peak/lane-ops=9600000 1 2000000000 ns/op 2000000000 median-ns 1500000000 cpu-ns 209715200 maxrss-B
BenchmarkE2E/peak/lane-ops=48000000 1 9000000000 ns/op 9000000000 median-ns 7000000000 cpu-ns 262144000 maxrss-B
loadavg-end: 0.60 0.50 0.40
e2e-maxrss-B: 12582912
run: main
pkg: github.com/gpureplay/replay/bench
BenchmarkLimit/uniform-1Mi/zstd-cli-2   	      30	  30000000 ns/op
BenchmarkLimit/uniform-1Mi/dense-2      	     100	  10000000 ns/op
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  200000000 ns/op
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  220000000 ns/op
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  210000000 ns/op	 30000000 peakRSS-B	 1048576 words
BenchmarkReplay/uniform-1Mi/addresses/workers=2-2 	 1	  400000000 ns/op	 93000000 peakRSS-B	 1048576 words
pkg: github.com/gpureplay/replay/engine
BenchmarkApply/random/engine-2 	 4000000	 64 ns/op
BenchmarkApply/random/dense-2 	 4000000	 2.56 ns/op
run: pgo-off
pkg: github.com/gpureplay/replay/bench
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  900000000 ns/op
run: pgo-on
pkg: github.com/gpureplay/replay/bench
BenchmarkReplay/uniform-1Mi/lean/workers=2-2 	 1	  750000000 ns/op
`

func TestFigures(t *testing.T) {
	d, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got Figure, want float64) {
		t.Helper()
		if !got.OK || math.Abs(got.Value-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: %v (%s, measured %v), want %v", name, got.Value, got.Detail, got.OK, want)
		}
	}
	near("lean/limit uniform-ptx", d.overLimit("uniform-ptx", "lean"), 300e6/150e6)
	near("default/limit histogram-ptx", d.overLimit("histogram-ptx", "default"), 300e6/30e6)
	// The worst lean replay of every family and dialect: spinlock-visa,
	// 144 ms against 10 + 10 ms; uniform-lsc is n/a, not a failure.
	f := Targets[0].Compute(d)
	near("worst lean", f, 7.2)
	for _, want := range []string{"worst spinlock-visa", "2 of 3 within", "n/a: uniform-lsc"} {
		if !strings.Contains(f.Detail, want) {
			t.Errorf("worst lean detail %q lacks %q", f.Detail, want)
		}
	}
	// Traces not measured without a why (not asked for) are not listed.
	if strings.Contains(f.Detail, "hotcounter-ptx") {
		t.Errorf("worst lean detail %q lists a trace that was not measured and has no why", f.Detail)
	}
	near("addresses over lean", addressesOver(d, "uniform-ptx"), 540.0/300-1)
	near("asm over floor", asmOverFloor(d), 35)
	near("text replay in floors", textReplay(d), (600e6-300e6)/100e6)
	near("help over hello", startup("help")(d), 31e6)
	near("one instruction over hello", startup("one-inst")(d), 11e6)
	near("workers", workers(d), 1.5)
	near("peak growth", peakGrowth(d), 262144000-209715200)
	// The ceiling is the best one goroutine over the best two.
	if c, ok := d.ceiling(); !ok || math.Abs(c-2) > 1e-9 {
		t.Errorf("ceiling %v %v, want 100/50 = 2", c, ok)
	}
	if b, m, w, ok := d.handoff(); !ok || b != 480 || m != 520 || w != 2000 {
		t.Errorf("handoff %v %v %v %v, want 480 520 2000", b, m, w, ok)
	}
	near("in-process lean over limit", inLeanOverLimit("uniform-1Mi")(d), 210e6/40e6)
	near("process cost", processCost(d), 300e6-210e6)
	near("apply", apply("random")(d), 2.56/64)
	near("bytes per address", bytesPerAddress(d), 63e6/1048576)
	near("pgo", pgoGain("uniform-1Mi")(d), 0.9/0.75)
	if f := d.overLimit("spinlock-visa", "default"); f.OK || !strings.Contains(f.Detail, "something failed") {
		t.Errorf("a failed default replay: %+v, want n/a with its why", f)
	}
	if f := d.overLimit("uniform-lsc", "lean"); f.OK || !strings.Contains(f.Detail, "no lsc form") {
		t.Errorf("a trace gen does not have: %+v, want n/a with its why", f)
	}
	if !Targets[8].Met(startup("one-inst")(d).Value) || !Targets[6].Met(textReplay(d).Value) {
		t.Error("one instruction 11 ms over hello meets ≤ 15 ms; the text replay at 3 floors over the binary meets ≤ 3")
	}
}

// TestRender: the page's section carries the machine's ceiling and
// handoff, every target, every trace of the matrix (n/a where gen has no
// such trace), and survives a run that measured nothing.
func TestRender(t *testing.T) {
	d, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	out := Render(d, "new.txt")
	for _, want := range []string{
		"two-goroutine ceiling **2.00×**", "cross-core handoff **520 ns**",
		"0.50 0.40 0.30 at the start",
		"| uniform-lsc | n/a: gen: replay: gen: workload uniform: no lsc form |",
		"| spinlock-visa | 9.60 M | exch 3% cas 97% |",
		"7.20×: worst spinlock-visa", "| not met |",
		"| `replay help` | 32.0 ms |",
		"commit abc1234",
		// 40 MB in 800 ms; 171.55 MB of .tasm in the floor's 100 ms.
		"| `traceg-1x.traceg` | 40.0 MB, 180 K atomics | 800 ms | 700 ms | **50 MB/s** | 20.0 MiB |",
		"| `traceg-2x.traceg` | 80.0 MB, 360 K atomics | 1.60 s | 1.50 s | **50 MB/s** | 21.0 MiB |",
		"| text floor (`bench/textfloor`), uniform-ptx `.tasm` | 172 MB | 100 ms | | **1716 MB/s** | |",
		beginMarker, endMarker,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "was busy") {
		t.Errorf("a run with a 2× ceiling called busy:\n%s", out)
	}
	busy, err := Parse(strings.NewReader(strings.NewReplacer(
		"goroutines=2 1 70000000", "goroutines=2 1 95000000",
		"goroutines=2 1 60000000", "goroutines=2 1 92000000",
		"goroutines=2 1 50000000", "goroutines=2 1 90000000").Replace(sample)))
	if err != nil {
		t.Fatal(err)
	}
	if out := Render(busy, "busy.txt"); !strings.Contains(out, "**The machine was busy during this run**: two goroutines gained 1.11×") {
		t.Errorf("a run with a 1.11× ceiling not called busy:\n%s", out)
	}
	if n := strings.Count(out, "\n| "); n < 28 {
		t.Errorf("render has %d table rows, want every trace of the matrix", n)
	}
	empty := Render(&Data{Vals: map[Key][]float64{}, Config: map[string]string{}, Traces: map[string]map[string]string{}, Skips: map[string]string{}}, "none.txt")
	if !strings.Contains(empty, "two-goroutine ceiling n/a") || !strings.Contains(empty, "| uniform-ptx | n/a |") {
		t.Errorf("render of an empty run:\n%s", empty)
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
