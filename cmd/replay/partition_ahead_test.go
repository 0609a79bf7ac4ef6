package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpureplay/replay/split"
	"github.com/gpureplay/replay/trace"
)

// blockRecords returns, in order, every record that src's NextBlock hands
// out (each block's instructions with their split fields and values, each
// directive with its fold, init, region or cluster), one line each, and
// how many blocks and folds there were. It reads each before the next
// NextBlock, as long as NextBlock promises them.
func blockRecords(t *testing.T, src *split.Source) (string, int, int) {
	t.Helper()
	var b strings.Builder
	blocks, folds := 0, 0
	for {
		blk, d, err := src.NextBlock()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if blk != nil {
			blocks++
			for i := range blk.Insts {
				in := &blk.Insts[i]
				fmt.Fprintf(&b, "inst %d %q g%d w%d m%x %+v", in.Seq, in.Static.Text, in.Group, in.Warp, in.Mask, *in.Part)
				for _, v := range in.Vals {
					fmt.Fprintf(&b, " [%d %x %x %x %x %x]", v.Kind, v.Base, v.Stride, v.BaseHi, v.List, v.ListHi)
				}
				b.WriteByte('\n')
			}
			continue
		}
		fmt.Fprintf(&b, "dir %d", d.Seq)
		switch x := d.Dir; {
		case x.Fold != nil:
			folds++
			fmt.Fprintf(&b, " fold %q g%d %x %x", x.Fold.Static.Text, x.Fold.Group, x.Fold.Addrs, x.Fold.Vals)
		case x.Init != nil:
			fmt.Fprintf(&b, " init %+v", *x.Init)
		case x.Region != nil:
			fmt.Fprintf(&b, " region %+v", *x.Region)
		case x.Cluster != nil:
			fmt.Fprintf(&b, " cluster %+v", *x.Cluster)
		}
		b.WriteByte('\n')
	}
	return b.String(), blocks, folds
}

// TestSplitDecodeAheadSameRecords: a partition's slices read with
// split.WithDecodeAhead (its blocks and folds decoded on a goroutine of
// their own, a few ahead, as replay -partition with more than one worker
// reads them) hand out the same records, in the same order, with the
// same values, as read on the caller's goroutine; for plain, combined
// and mixed splits (fold records in slice 0 only) of scattered adds and a
// histogram, 3 partitions of 3 slices. A source whose slices are all
// combined decodes on the caller's goroutine, whatever the option.
func TestSplitDecodeAheadSameRecords(t *testing.T) {
	root := t.TempDir()
	lean := []string{"-tables", "memory,instructions,ops"}
	for _, c := range []struct {
		workload string
		tables   []string
		mixed    bool // slice 0 combined (tables), slices 1 and 2 not
	}{
		{"uniform", nil, false},
		{"uniform", lean, false},
		{"histogram", lean, false},
		{"uniform", lean, true},
	} {
		name := fmt.Sprintf("%s-%d-%v", c.workload, len(c.tables), c.mixed)
		tr := filepath.Join(root, name+".zst")
		if code, _, stderr := replayCmd(t, "gen", c.workload, "-lane-ops", "2e5", "-chunk", "200", "-o", tr, "-q"); code != 0 {
			t.Fatalf("gen: %s", stderr)
		}
		dir := filepath.Join(root, name)
		for k := range 3 {
			args := []string{"split", tr, "-partitions", "3", "-slice", fmt.Sprintf("%d/3", k), "-o", dir, "-q"}
			if k == 0 || !c.mixed {
				args = append(args, c.tables...)
			}
			if code, _, stderr := replayCmd(t, args...); code != 0 {
				t.Fatalf("split: %s", stderr)
			}
		}
		for i := range 3 {
			var got [2]string
			var blocks, folds [2]int
			for j, ahead := range []bool{false, true} {
				src, err := split.Open(dir, i, 3, split.WithDecodeAhead(ahead))
				if err != nil {
					t.Fatal(err)
				}
				if want := ahead && (c.tables == nil || c.mixed); src.DecodesAhead() != want {
					t.Errorf("%s partition %d: WithDecodeAhead(%v): decodes ahead %v, want %v", name, i, ahead, src.DecodesAhead(), want)
				}
				got[j], blocks[j], folds[j] = blockRecords(t, src)
				src.Close()
			}
			// Every row is partition 0's (one window of seqs): the
			// others of a combined split hold folds alone.
			if i == 0 && blocks[0] < 2 || blocks[0]+folds[0] < 2 || c.tables != nil && folds[0] == 0 {
				t.Fatalf("%s partition %d: %d blocks and %d folds: too few to tell", name, i, blocks[0], folds[0])
			}
			if got[0] != got[1] {
				a, b := strings.Split(got[0], "\n"), strings.Split(got[1], "\n")
				for l := range min(len(a), len(b)) {
					if a[l] != b[l] {
						t.Fatalf("%s partition %d: record %d read ahead is\n%s\nnot\n%s", name, i, l, b[l], a[l])
					}
				}
				t.Fatalf("%s partition %d: %d records read ahead, not %d", name, i, len(b), len(a))
			}
		}
	}
}

// TestSplitDecodeAheadStops: a source that decodes ahead stops its
// goroutine at Close in the middle of its slices, without waiting for the
// rest, and then refuses NextBlock; Next after NextBlock is refused, not
// read from under the goroutine.
func TestSplitDecodeAheadStops(t *testing.T) {
	root := t.TempDir()
	tr := filepath.Join(root, "u.zst")
	if code, _, stderr := replayCmd(t, "gen", "uniform", "-lane-ops", "1e5", "-chunk", "100", "-o", tr, "-q"); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	dir := filepath.Join(root, "s")
	if code, _, stderr := replayCmd(t, "split", tr, "-partitions", "2", "-slice", "0/1", "-o", dir, "-q"); code != 0 {
		t.Fatalf("split: %s", stderr)
	}
	src, err := split.Open(dir, 0, 2, split.WithDecodeAhead(true))
	if err != nil {
		t.Fatal(err)
	}
	if blk, _, err := src.NextBlock(); err != nil || blk == nil {
		t.Fatalf("first record: %v, %v", blk, err)
	}
	if _, err := src.Next(); err == nil || !strings.Contains(err.Error(), "Next after NextBlock") {
		t.Errorf("Next after NextBlock: %v", err)
	}
	done := make(chan struct{})
	go func() { src.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return in 10 s")
	}
	if _, _, err := src.NextBlock(); err == nil || err == io.EOF {
		t.Errorf("NextBlock after Close: %v", err)
	}
	var _ trace.Source = src
}
