package main

import "testing"

// TestParseBindings: every integer bound after the `|` is counted and
// summed, in lists, alone, hexadecimal and decimal, and nothing of the
// binding names (the digits of %rd1, V12) is.
func TestParseBindings(t *testing.T) {
	for _, c := range []struct {
		in     string
		n, sum uint64
	}{
		{" %rd1=[0x10,0x20,0x1] %r2=7", 4, 0x31 + 7},
		{" V12=0xFF V14=3:4 mask=0x8f", 4, 255 + 3 + 4 + 0x8f},
		{" %r2=12\r", 1, 12},
		{"", 0, 0},
	} {
		if n, sum := parseBindings([]byte(c.in)); n != c.n || sum != c.sum {
			t.Errorf("parseBindings(%q) = %d, %d; want %d, %d", c.in, n, sum, c.n, c.sum)
		}
	}
}
