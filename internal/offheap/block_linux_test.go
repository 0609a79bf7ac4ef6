//go:build linux && !race

package offheap

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestBlock: a Block is whole huge pages, mapped on one and advised into
// them, zero and writable; Release unmaps it (gone from the process's
// maps) and a second Release does nothing.
func TestBlock(t *testing.T) {
	for _, c := range []struct{ n, want int }{{1, RegionBytes}, {HugeMin, RegionBytes}, {RegionBytes + 1, 2 * RegionBytes}} {
		k := NewBlock(c.n)
		b := k.Bytes()
		at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if len(b) != c.want || at%hugePage != 0 {
			t.Errorf("NewBlock(%d): %d bytes at %#x, want %d on a huge page", c.n, len(b), at, c.want)
		}
		for i := 0; i < len(b); i += 4096 {
			if b[i] != 0 {
				t.Fatalf("NewBlock(%d): byte %d is %d, want 0", c.n, i, b[i])
			}
			b[i] = byte(i>>12) | 1
		}
		b[len(b)-1] = 7
		if flags, _ := vmaOf(t, at); !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("NewBlock(%d) at %#x: VmFlags %q, want hg", c.n, at, flags)
		}
		if err := k.Release(); err != nil {
			t.Fatal(err)
		}
		if flags, _ := vmaOf(t, at); flags != "" {
			t.Errorf("NewBlock(%d) at %#x still mapped after Release", c.n, at)
		}
		if err := k.Release(); err != nil || k.Bytes() != nil {
			t.Errorf("a second Release: %v, bytes %d; want nil and none", err, len(k.Bytes()))
		}
	}
}

// TestBlockDroppedIsUnmapped: a Block its owner drops without Release
// (as a sync.Pool drops its items at a collection) is unmapped once the
// collector finds it unreachable: nothing leaks.
func TestBlockDroppedIsUnmapped(t *testing.T) {
	at := func() uintptr {
		k := NewBlock(RegionBytes)
		k.Bytes()[0] = 1
		return uintptr(unsafe.Pointer(unsafe.SliceData(k.Bytes())))
	}()
	for range 100 {
		runtime.GC()
		if flags, _ := vmaOf(t, at); flags == "" {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("a dropped Block at %#x is still mapped after 100 collections", at)
}
