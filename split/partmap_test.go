package split

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// TestSampleChunkPrefix: a chunk's sample read from a prefix of it too
// short for the sample (read again from four times as many bytes, and
// again, its routing undone each time) has the lines and the lane-ops a
// partition of the sample read from the whole chunk.
func TestSampleChunkPrefix(t *testing.T) {
	x := addTraceIndex(t, 2000, 16000, rand.New(rand.NewPCG(3, 4)), func(r *rand.Rand) (addr, val uint64) {
		return 0x10000000 + r.Uint64N(1<<16)*4, r.Uint64N(9)
	})
	if x.NumChunks() != mapSampleChunks {
		t.Fatalf("%d chunks, want %d", x.NumChunks(), mapSampleChunks)
	}
	for k := range x.NumChunks() {
		whole, err := engine.NewRouter(x.Header(), 4)
		if err != nil {
			t.Fatal(err)
		}
		prefix, err := engine.NewRouter(x.Header(), 4)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sampleChunkFrom(x, k, whole, 1<<30, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sampleChunkFrom(x, k, prefix, 512, nil) // too few: read again, from 2 KiB to 128 KiB
		if err != nil {
			t.Fatal(err)
		}
		if len(want) < mapSampleLaneOps/mapSampleChunks || !slices.Equal(got, want) {
			t.Errorf("chunk %d: %d lines from a prefix, %d from the whole, not the same", k, len(got), len(want))
		}
		if !slices.Equal(prefix.LaneOps(), whole.LaneOps()) {
			t.Errorf("chunk %d: lane-ops a partition %v from a prefix, %v from the whole", k, prefix.LaneOps(), whole.LaneOps())
		}
	}
}

// TestPartitionMapWorkers: the partition map of a trace whose load is on
// a few lines (half of its accesses on 16 of them) is not empty, and is
// the same whatever the workers that sample and count it.
func TestPartitionMapWorkers(t *testing.T) {
	x := addTraceIndex(t, 500, 8000, rand.New(rand.NewPCG(5, 6)), func(r *rand.Rand) (addr, val uint64) {
		if r.IntN(2) == 0 {
			return 0x20000000 + r.Uint64N(16)*128, 1
		}
		return 0x10000000 + r.Uint64N(1<<16)*4, 1
	})
	want, s, err := PartitionMap(x, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s != mapSampleChunks || len(want) < 16 {
		t.Fatalf("a map of %d lines from %d chunks, want at least the 16 hot lines from %d", len(want), s, mapSampleChunks)
	}
	for _, workers := range []int{2, 3, 8} {
		got, _, err := PartitionMap(x, 4, workers)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d workers: a map of %d lines, one worker's %d, not the same", workers, len(got), len(want))
		}
	}
}

// addTraceIndex writes n full warps of atom.global.add.u32 in chunks of
// chunkInsts instructions, each lane's address and addend drawn by lane
// from r, and opens the trace's index.
func addTraceIndex(t *testing.T, chunkInsts, n int, r *rand.Rand, lane func(*rand.Rand) (addr, val uint64)) *trace.BinaryIndex {
	t.Helper()
	st, err := trace.ParseStatic("atom.global.add.u32 d, [a], b")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := trace.NewBinaryWriter(&buf, &trace.Header{}, trace.WithChunkInsts(chunkInsts))
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		addrs, vals := make([]uint64, 32), make([]uint64, 32)
		for i := range addrs {
			addrs[i], vals[i] = lane(r)
		}
		in := &trace.Inst{Static: st, Mask: ^uint32(0), Vals: []trace.Vector{{Kind: trace.VecList, List: addrs}, {Kind: trace.VecList, List: vals}}}
		if err := w.Write(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := trace.OpenBinaryIndex(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return x
}
