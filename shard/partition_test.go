package shard

import (
	"strings"
	"testing"
)

// TestPartitionLines: a partition owns 128-byte lines. Every byte of a line
// has the line's partition; the 32 lines of a page go round-robin over the
// partitions in an order the page picks (each partition gets 32/n of them,
// rounded down or up, every one when n >= 32), from a start that depends on
// the page and the instance key; the order is a bijection and not always
// the lines' own; Partitioner.Of is Partition.
func TestPartitionLines(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 16, 33, 1000} {
		p, err := NewPartitioner(n)
		if err != nil {
			t.Fatal(err)
		}
		rots, shuffled := map[int]bool{}, 0
		for _, key := range []uint64{0, 1, 0xdeadbeef} {
			for page := uint64(0); page < 64; page++ {
				base := page << PageShift
				count := make([]int, n)
				prev, inOrder := -1, true
				for line := uint64(0); line < PageLines; line++ {
					a := base + line*LineBytes
					want := p.Of(key, a)
					count[want]++
					if prev >= 0 && want != (prev+1)%n {
						inOrder = false
					}
					prev = want
					for _, off := range []uint64{0, 4, 64, LineBytes - 1} {
						if got := p.Of(key, a+off); got != want {
							t.Fatalf("n=%d key %#x: byte %d of line %d of page %d: partition %d, the line's %d", n, key, off, line, page, got, want)
						}
						if got := Partition(key, a+off, n); got != want {
							t.Fatalf("n=%d: Partition(%#x) = %d, want %d", n, a+off, got, want)
						}
					}
				}
				if !inOrder {
					shuffled++
				}
				for i, c := range count {
					if c < PageLines/n || c > (PageLines+n-1)/n {
						t.Fatalf("n=%d key %#x page %d: partition %d has %d of its 32 lines, want %d or %d", n, key, page, i, c, PageLines/n, (PageLines+n-1)/n)
					}
				}
				rots[p.Of(key, base)] = true
			}
		}
		// 192 pages start at more than one partition (all of them for small n).
		if want := min(n, 16); len(rots) < want {
			t.Errorf("n=%d: the pages start at %d distinct partitions, want at least %d", n, len(rots), want)
		}
		if n > 2 && shuffled < 100 {
			t.Errorf("n=%d: %d of 192 pages take their lines in another order than their own", n, shuffled)
		}
	}
	for _, h := range []uint64{0, 1, 0x123456789abcdef, ^uint64(0)} {
		seen := map[uint32]bool{}
		for u := range uint32(PageLines) {
			seen[lineOrder(u, h)] = true
		}
		if len(seen) != PageLines {
			t.Errorf("lineOrder(·, %#x) takes %d values on 32 lines: not a bijection", h, len(seen))
		}
	}
}

// TestPartitionSpreadsHotArrays: a 4096-bin histogram (16 KiB, 128 lines)
// spreads over n partitions evenly: exactly when n divides 32, within a
// line a page otherwise; arrays at a page stride do not all start in one
// partition; and the lines of a page hot for the low bits of their index
// (lines 0, 8, 16 and 24, as an R-MAT graph's hot vertices) rarely come
// round to one partition (plain round-robin gives them all to one for n =
// 2, 4, 8 and 16).
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
		together := 0 // pages whose lines 0, 8, 16 and 24 are one partition's
		for page := uint64(0); page < 64; page++ {
			first := p.Of(7, page<<PageShift)
			same := true
			for line := uint64(8); line < PageLines; line += 8 {
				same = same && p.Of(7, page<<PageShift+line*LineBytes) == first
			}
			if same {
				together++
			}
		}
		if together > 16 {
			t.Errorf("n=%d: %d of 64 pages give their lines 0, 8, 16 and 24 to one partition", n, together)
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

// TestPartitionerMap: a partition map's lines go to the partition it
// gives them, whatever their hash says; every other line, of the same
// pages too, to Partition's; a map that names a line twice or a partition
// past n is refused.
func TestPartitionerMap(t *testing.T) {
	const n = 8
	var lines []LineOwner
	for i := range 300 {
		key := uint64(i%3) * 0x1234567
		line := uint64(0x4000+i*5) + uint64(i%3)<<20
		lines = append(lines, LineOwner{Key: key, Line: line, Part: (Partition(key, line<<LineShift, n) + 1 + i%(n-1)) % n})
	}
	p, err := NewPartitionerMap(n, lines)
	if err != nil {
		t.Fatal(err)
	}
	mapped := map[[2]uint64]int{}
	for _, l := range lines {
		mapped[[2]uint64{l.Key, l.Line}] = l.Part
		for _, off := range []uint64{0, 4, 124} {
			if got := p.Of(l.Key, l.Line<<LineShift+off); got != l.Part {
				t.Fatalf("line %#x of memory %#x (+%d): partition %d, the map says %d", l.Line, l.Key, off, got, l.Part)
			}
		}
	}
	for key := uint64(0); key < 3*0x1234567; key += 0x1234567 {
		for line := uint64(0x3f00); line < 0x4600; line++ {
			if _, ok := mapped[[2]uint64{key, line}]; ok {
				continue
			}
			if got, want := p.Of(key, line<<LineShift), Partition(key, line<<LineShift, n); got != want {
				t.Fatalf("line %#x of memory %#x, not in the map: partition %d, want Partition's %d", line, key, got, want)
			}
		}
	}
	if _, err := NewPartitionerMap(n, []LineOwner{{Key: 1, Line: 2, Part: 3}, {Key: 1, Line: 2, Part: 4}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a line twice: %v", err)
	}
	if _, err := NewPartitionerMap(n, []LineOwner{{Key: 1, Line: 2, Part: n}}); err == nil || !strings.Contains(err.Error(), "partition 8 of 8") {
		t.Errorf("a partition past n: %v", err)
	}
}
