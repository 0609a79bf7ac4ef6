//go:build linux && !race

// Under the race detector a Block is Go memory (no mapping to see), and
// the test polls a field the read stage writes.

package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// failAfter is a Sink whose Instructions fails from its n-th batch on.
type failAfter struct {
	batchSizes
	n int
}

func (s *failAfter) Instructions(st []InstStat) error {
	if s.batchSizes.Instructions(st); len(s.sizes) >= s.n {
		return errors.New("the sink is full")
	}
	return nil
}

// TestBatchInstsReleased: the huge page that the batches' instructions
// are carved from (replayer.instBlk, mapped outside the Go heap) is
// unmapped when a replay ends, when it succeeds and when its sink fails
// while the read stage is still filling batches.
func TestBatchInstsReleased(t *testing.T) {
	src := listAdds(4*defaultBatchInsts, false)
	for _, c := range []struct {
		name string
		sink Sink
		fail bool
	}{
		{"commit", &batchSizes{}, false},
		{"sink fails", &failAfter{n: 1}, true},
	} {
		e, err := testReplayer(textSource(t, src).Header(), WithWorkers(1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.run(context.Background(), textSource(t, src), c.sink)
		if (err != nil) != c.fail {
			t.Fatalf("%s: run: %v", c.name, err)
		}
		if e.instBlk == nil {
			t.Fatalf("%s: the batches' instructions took no Block", c.name)
		}
		// The read stage may still be filling a batch after a failure:
		// its Block goes when it returns.
		deadline := time.Now().Add(5 * time.Second)
		for e.blkLive() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if e.blkLive() {
			t.Errorf("%s: the batches' instructions are still mapped after the replay", c.name)
		}
	}
}

// blkLive reports whether e.instBlk is not yet released (Release, which
// unmaps it, leaves it no bytes).
func (e *replayer) blkLive() bool { return e.instBlk.Bytes() != nil }
