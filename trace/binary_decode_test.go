package trace

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// decodeTrace is a trace like those of `replay gen`: n PTX atom.add
// instructions. scattered: each with a list of 32 random word addresses in
// 4 MiB and a list of 32 values in 1..256 (uniform); otherwise a broadcast
// address and value (hotcounter).
func decodeTrace(tb testing.TB, n int, scattered bool, opts ...WriterOption) []byte {
	st, err := ParseStatic("atom.global.add.u32 %r1, [%rd1], %r2")
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	w, err := NewBinaryWriter(&buf, &Header{Regions: []Region{{Space: Global, Base: 0x10000000, Size: 4 << 20}}}, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	in := &Inst{Static: st, Mask: ^uint32(0), Vals: []Vector{{Kind: VecList, List: make([]uint64, 32)}, {Kind: VecList, List: make([]uint64, 32)}}}
	if !scattered {
		in.Vals = []Vector{{Kind: VecBroadcast, Base: 0x10000000}, {Kind: VecBroadcast, Base: 1}}
	}
	for i := range n {
		in.Group, in.Warp = int64(i/8), int64(i%8)
		if scattered {
			for l := range 32 {
				in.Vals[0].List[l] = 0x10000000 + 4*rng.Uint64N(1<<20)
				in.Vals[1].List[l] = 1 + rng.Uint64N(256)
			}
		}
		if err := w.Write(in); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkDecodeRecords measures the consumer's side alone: records of
// decompressed, checked chunks into Inst, without zstd, and a bare loop
// over the lanes. cpu-ns/inst (Linux only) is the thread's CPU time, which
// other load on the machine does not inflate as it does wall time.
func BenchmarkDecodeRecords(b *testing.B) {
	for _, scattered := range []bool{true, false} {
		name := "broadcast"
		if scattered {
			name = "scattered"
		}
		b.Run(name, func(b *testing.B) {
			const n = 100_000
			data := decodeTrace(b, n, scattered)
			fs := splitFrames(b, data)
			w := workerPool.Get().(*worker)
			var chunks []*frameBuf
			for i, f := range fs[1 : len(fs)-1] {
				fb := &frameBuf{chunk: i, raw: f.raw}
				if err := w.checkChunk(fb); err != nil {
					b.Fatal(err)
				}
				chunks = append(chunks, fb)
			}
			r, err := NewBinaryReader(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			c0, cpuOK := threadCPU()
			var sum uint64
			for range b.N {
				r.seq, r.first = 0, true
				for _, fb := range chunks {
					if err := r.beginChunk(fb); err != nil {
						b.Fatal(err)
					}
					for r.left > 0 {
						in, err := r.Next()
						if err != nil {
							b.Fatal(err)
						}
						for i := range in.Vals {
							v := &in.Vals[i]
							if v.Kind == VecList {
								for _, x := range v.List {
									sum += x
								}
							} else {
								sum += v.Base
							}
						}
					}
					if err := r.endChunk(); err != nil {
						b.Fatal(err)
					}
				}
			}
			if c1, ok := threadCPU(); cpuOK && ok {
				b.ReportMetric(float64(c1-c0)/float64(b.N)/n, "cpu-ns/inst")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/inst")
			_ = sum
		})
	}
}

// TestUvarint checks uvarint against encoding/binary on every length and
// on bad forms, with and without bytes after the varint.
func TestUvarint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(p []byte) {
		t.Helper()
		wx, wn := binary.Uvarint(p)
		if wn < 0 {
			wn = -1
		}
		x, n := uvarint(p)
		if n < 0 {
			n = -1
		}
		if wn <= 0 && n <= 0 {
			return
		}
		if x != wx || n != wn {
			t.Fatalf("uvarint(% x) = %d, %d; encoding/binary says %d, %d", p, x, n, wx, wn)
		}
	}
	for bitsLen := 0; bitsLen <= 64; bitsLen++ {
		for range 50 {
			x := rng.Uint64() >> (64 - bitsLen) >> 0
			if bitsLen == 0 {
				x = 0
			}
			b := binary.AppendUvarint(nil, x)
			for tail := 0; tail < 12; tail++ {
				p := append(slices.Clone(b), make([]byte, tail)...)
				for i := len(b); i < len(p); i++ {
					p[i] = byte(rng.Uint32())
				}
				check(p)
				check(p[:len(b)-1]) // truncated
			}
		}
	}
	// Overlong and overflowing forms.
	for _, p := range [][]byte{
		bytes.Repeat([]byte{0xff}, 11),
		append(bytes.Repeat([]byte{0xff}, 9), 2),
		append(bytes.Repeat([]byte{0x80}, 9), 1, 0),
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 5},
	} {
		check(p)
		if _, n := uvarint(p); (n > 0) != func() bool { _, m := binary.Uvarint(p); return m > 0 }() {
			t.Errorf("uvarint(% x): n %d", p, n)
		}
	}
}
