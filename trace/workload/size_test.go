package workload

import (
	"testing"

	"github.com/gpureplay/replay/trace"
)

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// write generates s into w (binary when bin, else text) and returns the
// lane-ops written.
func write(b *testing.B, s Spec, w *countWriter, bin bool) uint64 {
	g, err := New(s)
	if err != nil {
		b.Fatal(err)
	}
	var iw trace.InstWriter
	if bin {
		iw, err = trace.NewBinaryWriter(w, g.Header())
	} else {
		iw, err = trace.NewTextWriter(w, g.Header())
	}
	if err != nil {
		b.Fatal(err)
	}
	for {
		in, err := g.Next()
		if err != nil {
			break
		}
		if err := iw.Write(in); err != nil {
			b.Fatal(err)
		}
	}
	if err := iw.Close(); err != nil {
		b.Fatal(err)
	}
	return g.LaneOps()
}

// BenchmarkSize generates 10^6 lane-ops of every workload and dialect at
// its default sizes into the binary trace (default chunking and zstd
// level) and reports its bytes per lane-op (B/laneop), the .tasm text's
// (tasmB/laneop), and the time to generate and encode (ns/laneop):
//
//	go test ./trace/workload -run XXX -bench Size
func BenchmarkSize(b *testing.B) {
	for _, name := range Names() {
		for _, d := range dialects {
			b.Run(name+"/"+d.String(), func(b *testing.B) {
				s := Spec{Name: name, Dialect: d, Seed: 1, LaneOps: 1_000_000}
				var text countWriter
				lo := write(b, s, &text, false)
				var bin countWriter
				for b.Loop() {
					bin = 0
					write(b, s, &bin, true)
				}
				b.ReportMetric(float64(bin)/float64(lo), "B/laneop")
				b.ReportMetric(float64(text)/float64(lo), "tasmB/laneop")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lo), "ns/laneop")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
