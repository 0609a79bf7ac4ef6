package split

import "testing"

// TestPartsCombinedOnly: a combined slice of two or more chunks is routed
// in two parts, one of a chunk or none in one; an uncombined slice in one
// part whatever its length (its time is in writing its records, which
// parts do not share). subRange cuts the chunks in order, without gaps.
func TestPartsCombinedOnly(t *testing.T) {
	for _, c := range []struct {
		from, to int
		combine  bool
		want     int
	}{
		{0, 0, true, 1}, {3, 4, true, 1}, {3, 5, true, 2}, {0, 100, true, 2},
		{0, 0, false, 1}, {3, 5, false, 1}, {0, 100, false, 1},
	} {
		n := parts(c.from, c.to, c.combine)
		if n != c.want {
			t.Errorf("parts(%d, %d, combine %v) = %d, want %d", c.from, c.to, c.combine, n, c.want)
			continue
		}
		at := c.from
		for j := range n {
			a, b := subRange(c.from, c.to, j, n)
			if a != at || b < a {
				t.Errorf("[%d, %d) part %d of %d: [%d, %d), want from %d", c.from, c.to, j, n, a, b, at)
			}
			at = b
		}
		if at != c.to {
			t.Errorf("[%d, %d) in %d parts ends at %d", c.from, c.to, n, at)
		}
	}
}
