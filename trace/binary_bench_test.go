package trace_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/gpureplay/replay/bench"
	"github.com/gpureplay/replay/trace"
)

// benchTrace is a binary trace held in memory for the decoding benchmarks.
type benchTrace struct {
	name string
	data []byte
}

// benchTraces builds the reference workloads of the decoding benchmarks:
// uniform-1Mi (300K PTX instructions of per-lane lists over 4 MiB, the
// scattered case), histogram and hotcounter, each of $REPLAY_BENCH_LANEOPS
// lane-ops (default 9.6e6, as `replay gen … -lane-ops 9.6e6`). Setting
// $REPLAY_BENCH_FILES (a glob) benchmarks those files instead.
var benchTraces = sync.OnceValues(func() ([]benchTrace, error) {
	if g := os.Getenv("REPLAY_BENCH_FILES"); g != "" {
		names, err := filepath.Glob(g)
		if err != nil {
			return nil, err
		}
		var ts []benchTrace
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				return nil, err
			}
			ts = append(ts, benchTrace{name: filepath.Base(n), data: b})
		}
		return ts, nil
	}
	laneOps := 9.6e6
	if s := os.Getenv("REPLAY_BENCH_LANEOPS"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		laneOps = v
	}
	var ts []benchTrace
	for _, name := range []string{"uniform-1Mi", "histogram", "hotcounter"} {
		t, err := bench.Generate(name, uint64(laneOps))
		if err != nil {
			return nil, err
		}
		ts = append(ts, benchTrace{name: name, data: t.Data})
	}
	return ts, nil
})

// drain reads src to its end and returns the records it handed out and
// the sum of every lane's values, so nothing is optimized away.
func drain(b *testing.B, src trace.Source) (n int, sum uint64) {
	for {
		in, err := src.Next()
		if err == io.EOF {
			return n, sum
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
		for i := range in.Vals {
			v := &in.Vals[i]
			if v.Kind == trace.VecList {
				for _, x := range v.List {
					sum += x
				}
			} else {
				sum += v.Base
			}
		}
	}
}

// BenchmarkBinaryDecode measures our decoder against its baseline in the
// same run: zstd is klauspost's decoder inflating the same bytes (the
// in-process `zstd -d`); the other sub-benchmarks hand out every record,
// and a bare loop reads every lane of it. Compare them as ratios:
//
//	go test ./trace -run '^$' -bench BinaryDecode -count 10 >decode.txt
//	benchstat -col /how decode.txt
func BenchmarkBinaryDecode(b *testing.B) {
	ts, err := benchTraces()
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range ts {
		b.Run("trace="+t.name+"/how=zstd", func(b *testing.B) {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			b.SetBytes(int64(len(t.data)))
			for i := 0; i < b.N; i++ {
				if err := d.Reset(bytes.NewReader(t.data)); err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, d); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, how := range benchReaders {
			b.Run("trace="+t.name+"/how="+how.name, func(b *testing.B) {
				b.SetBytes(int64(len(t.data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					src, closeSrc := how.open(b, t.data)
					if n, _ := drain(b, src); n == 0 {
						b.Fatal("no record")
					}
					closeSrc()
				}
			})
		}
	}
}

type benchReader struct {
	name string
	open func(b *testing.B, data []byte) (trace.Source, func())
}

// benchReaders are the ways of reading a trace the benchmark compares:
// the streaming reader, and the index reader with its default and with one
// and two decompressors.
var benchReaders = []benchReader{
	{"stream", func(b *testing.B, data []byte) (trace.Source, func()) {
		r, err := trace.NewBinaryReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		return r, func() { r.Close() }
	}},
	{"index", indexReader()},
	{"index-1", indexReader(trace.WithDecoders(1))},
	{"index-2", indexReader(trace.WithDecoders(2))},
}

func indexReader(opts ...trace.ReaderOption) func(b *testing.B, data []byte) (trace.Source, func()) {
	return func(b *testing.B, data []byte) (trace.Source, func()) {
		x, err := trace.OpenBinaryIndex(bytes.NewReader(data), int64(len(data)), opts...)
		if err != nil {
			b.Fatal(err)
		}
		r, err := x.Reader(0, x.NumChunks())
		if err != nil {
			b.Fatal(err)
		}
		return r, func() { r.Close() }
	}
}
