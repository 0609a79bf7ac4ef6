package columnar

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	k, err := c.r.ReadAt(b, off)
	c.n.Add(int64(k))
	return k, err
}

// TestMergeDecodesPartitionsWhenDue: a split pipeline's partitions hold
// the instructions in runs (a slice's, in one partition); while the merge
// is at partition 0's first run, partitions 2 and 3, whose rows come
// later, have had no record read, only their first seq (a page header,
// pqFile.firstDelta), and partition 1, whose rows come next, at most its
// first record: the merge holds the records of the partitions whose rows
// are due, not every partition's from the start. The merged table is
// still the whole replay's, byte for byte.
func TestMergeDecodesPartitionsWhenDue(t *testing.T) {
	const rows, n = 1000, 4
	f := newMergeFixture(t, rows)
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	f.write(t, whole, 0, 0, FormatParquet, nil, nil)
	var parts []*partDir
	reads := make([]*countingReaderAt, n)
	var span []int64 // each partition's first row group's bytes
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("part=%d", i))
		f.write(t, dir, i, n, FormatParquet, func(s uint64) []int { return []int{int(s * n / rows)} }, func(l uint64) int { return int(l % n) })
		p, err := readPartDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer p.close()
		pf := p.pq[tInstructions]
		var b int64
		for _, c := range pf.rgs[0].chunks {
			b += c.size
		}
		span = append(span, b)
		reads[i] = &countingReaderAt{r: pf.f}
		pf.f = reads[i]
		parts = append(parts, p)
	}
	out := filepath.Join(root, "merged")
	w, err := New(out, WithBatchRows(64), WithTables("instructions"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	q := &writeQueue{jobs: make(chan writeJob, 1), ahead: 1, chunk: 16, stopped: new(atomic.Bool), pool: &wordPool{}}
	defer q.pool.release()
	errc := make(chan error, 1)
	go func() {
		errc <- mergeInstructions(q, parts)
		close(q.jobs)
	}()
	j := <-q.jobs                     // partition 0's first rows: the merge now waits for the writer
	time.Sleep(50 * time.Millisecond) // time for reads it must not do
	for i := 2; i < n; i++ {
		if got := reads[i].n.Load(); got >= span[i] {
			t.Errorf("partition %d: %d bytes read while partition 0's first run is merged, its first record's %d or more", i, got, span[i])
		}
	}
	if got := reads[1].n.Load(); got > span[1]+peekHeader {
		t.Errorf("partition 1: %d bytes read while partition 0's first run is merged, more than its first record's %d", got, span[1])
	}
	for ; ; j = <-q.jobs {
		if j.write == nil {
			break // closed
		}
		if err := j.write(w); err != nil {
			t.Fatal(err)
		}
		j.done()
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(whole, "instructions.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "instructions.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the merged instructions differ from the whole replay's")
	}
}
