package shard

import (
	"testing"
)

// TestPartitionLines: a partition owns 128-byte lines. Every byte of a line
// has the line's partition; the 32 lines of a page go round-robin from a
// rotation that depends on the page and the instance key; Partitioner.Of
// is Partition.
func TestPartitionLines(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 16, 33, 1000} {
		p, err := NewPartitioner(n)
		if err != nil {
			t.Fatal(err)
		}
		rots := map[int]bool{}
		for _, key := range []uint64{0, 1, 0xdeadbeef} {
			for page := uint64(0); page < 64; page++ {
				base := page << PageShift
				first := p.Of(key, base)
				rots[first] = true
				for line := uint64(0); line < PageLines; line++ {
					want := (first + int(line)) % n
					a := base + line*LineBytes
					for _, off := range []uint64{0, 4, 64, LineBytes - 1} {
						if got := p.Of(key, a+off); got != want {
							t.Fatalf("n=%d key %#x: Of(%#x) = %d, want %d (line %d of a page starting at partition %d)", n, key, a+off, got, want, line, first)
						}
						if got := Partition(key, a+off, n); got != want {
							t.Fatalf("n=%d: Partition(%#x) = %d, want %d", n, a+off, got, want)
						}
					}
				}
			}
		}
		// 192 pages rotate to more than one start (all of them for small n).
		if want := min(n, 16); len(rots) < want {
			t.Errorf("n=%d: the pages start at %d distinct partitions, want at least %d", n, len(rots), want)
		}
	}
}

// TestPartitionSpreadsHotArrays: a 4096-bin histogram (16 KiB, 128 lines)
// spreads over n partitions evenly: exactly when n divides 32, within a
// line a page otherwise; arrays at a page stride do not all start in one
// partition.
func TestPartitionSpreadsHotArrays(t *testing.T) {
	for _, n := range []int{2, 3, 4, 8, 16} {
		p, _ := NewPartitioner(n)
		count := make([]int, n)
		for a := uint64(0x10000); a < 0x10000+16<<10; a += 4 {
			count[p.Of(7, a)]++
		}
		lo, hi := count[0], count[0]
		for _, c := range count {
			lo, hi = min(lo, c), max(hi, c)
		}
		if 32%n == 0 && lo != hi {
			t.Errorf("n=%d: a 4096-bin array's words per partition %v, want equal", n, count)
		}
		if hi-lo > 4*32 { // a line a page, 4 pages
			t.Errorf("n=%d: a 4096-bin array's words per partition %v differ by more than a line a page", n, count)
		}
		strided := make([]int, n)
		for i := uint64(0); i < 4096; i++ {
			strided[p.Of(7, i<<PageShift)]++
		}
		for i, c := range strided {
			if c < 4096/n/2 || c > 4096/n*3/2 {
				t.Errorf("n=%d: first words of 4096 pages: partition %d has %d, want about %d", n, i, c, 4096/n)
			}
		}
	}
	if _, err := NewPartitioner(0); err == nil {
		t.Error("NewPartitioner(0) succeeded")
	}
	if _, err := NewPartitioner(MaxPartitions + 1); err == nil {
		t.Error("NewPartitioner(MaxPartitions+1) succeeded")
	}
}
