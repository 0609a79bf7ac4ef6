package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestOwnedPipeline: with two or three workers and no addresses table, a
// replay runs the owned pipeline (ownedRun: each worker reads and expands
// batches of its own, worker 0 applies every batch), with or without the
// results table, and its tables equal the reference's; with the addresses
// table, or four workers, it runs the stage pipeline instead.
func TestOwnedPipeline(t *testing.T) {
	cases := []struct {
		workers       int
		lean, addrs   bool
		owned         bool
		batch, shards int
	}{
		{workers: 2, lean: true, owned: true, batch: 16, shards: 64},
		{workers: 2, lean: false, owned: true, batch: 5, shards: 3},
		{workers: 3, lean: true, owned: true, batch: 7, shards: 7},
		{workers: 3, lean: false, owned: true, batch: 64, shards: 5},
		{workers: 2, lean: true, addrs: true, batch: 16, shards: 64},
		{workers: 4, lean: true, batch: 16, shards: 64},
	}
	for seed := uint64(1); seed <= 4; seed++ {
		src := randomAdds(rand.New(rand.NewPCG(seed, 23)), 400, "d")
		want := referenceOutcome(t, src)
		for _, c := range cases {
			what := fmt.Sprintf("seed %d, %d workers, lean %v, addresses %v, batches of %d", seed, c.workers, c.lean, c.addrs, c.batch)
			sink, col := sinkFor(c.lean, c.addrs)
			e := runEngine(t, src, sink, WithWorkers(c.workers), WithBatchInsts(c.batch), WithShards(c.shards))
			// 400 instructions in batches of c.batch: every batch but
			// none is applied by the owned pipeline, or none.
			if batches := (400 + c.batch - 1) / c.batch; c.owned && e.ownedBatches < batches || !c.owned && e.ownedBatches != 0 {
				t.Errorf("%s: the owned pipeline applied %d batches, want %v", what, e.ownedBatches, map[bool]string{true: fmt.Sprint("at least ", batches), false: "none"}[c.owned])
			}
			sameAsReference(t, col, want, c.lean, c.addrs, what)
		}
	}
}
