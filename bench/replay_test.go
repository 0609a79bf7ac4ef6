package bench

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// statsSink keeps nothing: the statistics and memory pass through it and
// are dropped, and it asks for no per-lane rows.
type statsSink struct{ insts, words int }

func (s *statsSink) Results([]engine.Result) error           { return nil }
func (s *statsSink) Instructions(st []engine.InstStat) error { s.insts += len(st); return nil }
func (s *statsSink) Memory(ws []engine.Word) error           { s.words += len(ws); return nil }
func (s *statsSink) Commit() error                           { return nil }
func (s *statsSink) Abort() error                            { return nil }
func (s *statsSink) WantsResults() bool                      { return false }

const (
	benchInsts = 1 << 17 // 4 Mi lane-ops
	benchWords = 1 << 20
)

func buildAll(b *testing.B) []*Trace {
	var ts []*Trace
	for _, name := range []string{"coalesced", "scattered", "histogram", "hotcounter"} {
		t, err := Build(name, benchInsts, benchWords)
		if err != nil {
			b.Fatal(err)
		}
		ts = append(ts, t)
	}
	return ts
}

func replayOnce(b *testing.B, t *Trace, workers int) {
	src, err := trace.NewBinaryReader(bytes.NewReader(t.Data))
	if err != nil {
		b.Fatal(err)
	}
	var s statsSink
	if _, err := engine.Replay(src, &s, engine.WithWorkers(workers)); err != nil {
		b.Fatal(err)
	}
	if s.insts == 0 {
		b.Fatal("no instruction replayed")
	}
}

// BenchmarkReplay replays each trace whole. SetBytes is the trace file's
// size, so MB/s compares with BenchmarkDecode's.
func BenchmarkReplay(b *testing.B) {
	for _, t := range buildAll(b) {
		for _, workers := range []int{1, 2} {
			b.Run(t.Name+"/workers="+string(rune('0'+workers)), func(b *testing.B) {
				b.SetBytes(int64(len(t.Data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					replayOnce(b, t, workers)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(t.LaneOps), "ns/laneop")
			})
		}
	}
}

// BenchmarkDecode is the baseline: inflating the same file, with
// klauspost's decoder in-process and with the zstd command.
func BenchmarkDecode(b *testing.B) {
	for _, t := range buildAll(b) {
		b.Run(t.Name+"/zstd", func(b *testing.B) {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			b.SetBytes(int64(len(t.Data)))
			for i := 0; i < b.N; i++ {
				d.Reset(bytes.NewReader(t.Data))
				if _, err := io.Copy(io.Discard, d); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(t.Name+"/reader", func(b *testing.B) {
			// Our decoder: zstd plus the record decoding, every instruction
			// and operand vector, as a replay reads it.
			b.SetBytes(int64(len(t.Data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := trace.NewBinaryReader(bytes.NewReader(t.Data))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					if _, err := r.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n == 0 {
					b.Fatal("no instruction")
				}
			}
		})
		b.Run(t.Name+"/zstd-cli", func(b *testing.B) {
			if _, err := exec.LookPath("zstd"); err != nil {
				b.Skip("zstd command not in PATH")
			}
			b.SetBytes(int64(len(t.Data)))
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("zstd", "-d", "-c", "-q")
				cmd.Stdin = bytes.NewReader(t.Data)
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTracesReplay checks the benchmark traces themselves: every lane-op
// lands, and the two worker counts agree.
func TestTracesReplay(t *testing.T) {
	for _, name := range []string{"coalesced", "scattered"} {
		tr, err := Build(name, 64, 1<<10)
		if err != nil {
			t.Fatal(err)
		}
		var sums [2]uint64
		for i, workers := range []int{1, 2} {
			src, err := trace.NewBinaryReader(bytes.NewReader(tr.Data))
			if err != nil {
				t.Fatal(err)
			}
			var c engine.Collector
			if _, err := engine.Replay(src, &c, engine.WithWorkers(workers)); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.Words {
				sums[i] += uint64(w.Value)
			}
		}
		if sums[0] != 64*32 || sums[1] != sums[0] {
			t.Errorf("%s: memory sums %v, want %d (one per lane-op)", name, sums, 64*32)
		}
	}
}

// BenchmarkMachineScaling is the baseline for the worker speed-up: the
// same total work (a multiply-add and a write into a table) split over one
// or two goroutines that share nothing. Its two-to-one ratio is what two
// cores of this machine give independent work at all, the ceiling for
// BenchmarkReplay's workers=2 over workers=1.
func BenchmarkMachineScaling(b *testing.B) {
	const n = 1 << 24
	for _, words := range []int{1 << 12, 1 << 20} {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("words=%d/goroutines=%d", words, g), func(b *testing.B) {
				mems := make([][]uint32, g)
				for i := range mems {
					mems[i] = make([]uint32, words)
				}
				for i := 0; i < b.N; i++ {
					var wg sync.WaitGroup
					for j := 0; j < g; j++ {
						wg.Add(1)
						go func(mem []uint32) {
							defer wg.Done()
							x := uint32(1)
							for k := 0; k < n/g; k++ {
								x = x*1664525 + 1013904223
								mem[x&uint32(len(mem)-1)] += x
							}
						}(mems[j])
					}
					wg.Wait()
				}
			})
		}
	}
}
