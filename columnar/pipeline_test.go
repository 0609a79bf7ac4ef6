package columnar

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// overlapWords returns the rows of a memory table of batches batches of
// rows rows each, whose values change from batch to batch between random
// (pages zstd cannot shrink, which the column then stores raw for the
// next storedPages pages: colChunk.stored) and a short cycle (pages it
// shrinks): the state a column carries from row group to row group then
// decides how each batch's values are stored.
func overlapWords(batches, rows int) []engine.Word {
	rng := rand.New(rand.NewPCG(5, 6))
	var ws []engine.Word
	for k := range batches {
		for i := range rows {
			v := rng.Uint32()
			if k%3 != 0 {
				v = uint32(i%7) * 0x01010101
			}
			ws = append(ws, engine.Word{Space: trace.Global, Group: -1, Addr: uint64(len(ws)) * 4, Value: v})
		}
	}
	return ws
}

// TestOverlappedSameBytes: the memory table, whose pipeline encodes a
// batch while the one before is written (pipeline.runOverlapped), writes
// the same bytes on one core, where it encodes one batch at a time, as
// on two, and reads back as written. Each batch's columns carry the state
// of the batch two before (parquetWriter.stored) on both, which the
// values, alternately stored raw and compressed, would show.
func TestOverlappedSameBytes(t *testing.T) {
	const batch = parallelRows // its columns encoded on two goroutines too
	ws := overlapWords(40, batch)
	write := func(procs int) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return writeFiles(t, []Option{WithBatchRows(batch), WithTables("memory")}, func(w *Writer) {
			if err := w.Memory(ws); err != nil {
				t.Fatal(err)
			}
		}, "memory.parquet")[0]
	}
	one, two := write(1), write(2)
	if !bytes.Equal(one, two) {
		t.Fatalf("memory.parquet: %d bytes on one core, %d on two, not the same bytes", len(one), len(two))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.parquet")
	if err := os.WriteFile(path, two, 0o644); err != nil {
		t.Fatal(err)
	}
	want := make([][]any, len(ws))
	for i, w := range ws {
		want[i] = []any{"global", int64(-1), w.Addr, w.Value}
	}
	checkRows(t, "memory", readTable(t, path).rows, want)
}

// failingEncoder is a Parquet writer whose encode fails at its failAt-th
// call, and counts the calls.
type failingEncoder struct {
	*parquetWriter
	failAt int32
	calls  atomic.Int32
}

func (f *failingEncoder) encode(state, buf int, b *batch) error {
	if f.calls.Add(1) == f.failAt {
		return errInjected
	}
	return f.parquetWriter.encode(state, buf, b)
}

// TestOverlappedEncodeFails: a batch of the memory table that fails to
// be encoded, while the batch before it is written or the one after is
// encoded, fails Commit with that error, naming the file; no batch after
// it is encoded, and nothing is left behind or held, on one core and on
// two.
func TestOverlappedEncodeFails(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(map[int]string{1: "one-core", 2: "two-cores"}[procs], func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			dir := filepath.Join(t.TempDir(), "out")
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			w, err := New(dir, WithBatchRows(100), WithTables("memory"), WithAllocator(mem))
			if err != nil {
				t.Fatal(err)
			}
			o := w.tables[tMemory].outs[0]
			fe := &failingEncoder{parquetWriter: o.w.(*parquetWriter), failAt: 3}
			o.w = fe
			ws := overlapWords(20, 100)
			for i := 0; i < len(ws) && err == nil; i += 100 {
				err = w.Memory(ws[i : i+100])
			}
			if err == nil {
				err = w.Commit()
			}
			if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "memory.parquet") {
				t.Fatalf("err = %v, want the injected error naming memory.parquet", err)
			}
			// Two cores: the batches of the other chunk sets may have been
			// taken for encoding before the failure was known (seen: 5
			// with the failure at the 3rd, on a loaded machine), but no
			// more than the sets: the loop takes none while all are busy.
			if n := fe.calls.Load(); n > fe.failAt+int32(procs-1)*encodeSets {
				t.Errorf("%d batches encoded, the failure at the %dth", n, fe.failAt)
			}
			mem.AssertSize(t, 0)
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("after the failure the directory holds %v", got)
			}
		})
	}
}
