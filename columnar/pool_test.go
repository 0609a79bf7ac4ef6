package columnar

import (
	"sync"
	"testing"
)

// TestPoolAllocator: buffers come back zeroed, aligned, of the asked length
// and their class's capacity; a freed buffer is reused for the next request
// of its class; Reallocate keeps the contents; foreign buffers are not
// pooled; and the free lists hold at most maxHeld bytes.
func TestPoolAllocator(t *testing.T) {
	a := newPoolAllocator()
	b := a.Allocate(100)
	if len(b) != 100 || cap(b) != 128 || addrOf(b)%poolAlign != 0 {
		t.Fatalf("Allocate(100): len %d cap %d addr %% 64 = %d; want 100, 128, 0", len(b), cap(b), addrOf(b)%poolAlign)
	}
	for i := range b {
		b[i] = 0xff
	}
	a.Free(b)
	c := a.Allocate(120)
	if addrOf(c) != addrOf(b) {
		t.Errorf("a freed 128-byte buffer was not reused for Allocate(120)")
	}
	for i, x := range c {
		if x != 0 {
			t.Fatalf("reused buffer byte %d = %#x, want 0", i, x)
		}
	}
	c[0], c[119] = 1, 2
	d := a.Reallocate(1000, c)
	if len(d) != 1000 || cap(d) != 1024 || d[0] != 1 || d[119] != 2 || d[120] != 0 {
		t.Errorf("Reallocate(1000): len %d cap %d, d[0]=%d d[119]=%d d[120]=%d", len(d), cap(d), d[0], d[119], d[120])
	}
	if e := a.Allocate(128); addrOf(e) != addrOf(c) {
		t.Errorf("Reallocate did not free the old buffer to the pool")
	}
	if got := a.Reallocate(10, d); addrOf(got) != addrOf(d) || len(got) != 10 {
		t.Errorf("shrinking Reallocate moved the buffer or has length %d", len(got))
	}
	// A buffer not of a class (capacity not a power of two) is left alone.
	a.Free(make([]byte, 100))
	if a.held != 0 {
		t.Errorf("held %d bytes after freeing a foreign buffer, want 0", a.held)
	}
	if z := a.Allocate(0); len(z) != 0 {
		t.Errorf("Allocate(0) has length %d", len(z))
	}
	// The free lists stop growing at maxHeld.
	big := make([][]byte, 0, 40)
	for range 40 {
		big = append(big, a.Allocate(4<<20))
	}
	for _, x := range big {
		a.Free(x)
	}
	if a.held > maxHeld || a.held < maxHeld-4<<20 {
		t.Errorf("held %d bytes after freeing 160 MiB, want at most %d and near it", a.held, maxHeld)
	}
}

// TestPoolAllocatorConcurrent runs allocations from several goroutines
// (under -race in make test), each checking its buffers stay its own.
func TestPoolAllocatorConcurrent(t *testing.T) {
	a := newPoolAllocator()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				b := a.Allocate(64 + (i*37)%5000)
				for k := range b {
					b[k] = byte(g)
				}
				for k := range b {
					if b[k] != byte(g) {
						t.Errorf("goroutine %d: byte %d changed under it", g, k)
						return
					}
				}
				a.Free(b)
			}
		}()
	}
	wg.Wait()
}

// TestReserveGrowth: a batch's columns start at minBatchCap rows, double
// while they are at most a jumpFraction of the limit, then go to the
// limit at once; the rows already in keep their values through each
// growth.
func TestReserveGrowth(t *testing.T) {
	const limit = 1 << 16
	b := newBatch(&specs[tMemory], newPoolAllocator())
	var caps []int
	for b.rows < limit {
		b.reserve(1, limit)
		if len(caps) == 0 || caps[len(caps)-1] != b.cap {
			caps = append(caps, b.cap)
		}
		b.cols[3].u32()[b.rows] = uint32(b.rows) * 7
		b.rows++
	}
	want := []int{1 << 10, 1 << 11, 1 << 12, 1 << 13, limit}
	if len(caps) != len(want) {
		t.Fatalf("capacities %v, want %v", caps, want)
	}
	for i := range want {
		if caps[i] != want[i] {
			t.Fatalf("capacities %v, want %v", caps, want)
		}
	}
	for i, v := range b.cols[3].u32()[:b.rows] {
		if v != uint32(i)*7 {
			t.Fatalf("row %d holds %d after the growths, want %d", i, v, i*7)
		}
	}
	b.release()
}

// TestSlabBuffers: buffers of slabMin to slabBytes bytes, carved from
// slabs (newSlab), come zeroed, 64-byte aligned, of the asked length and
// their class's capacity, each its own memory (filling one leaves the
// others as they were), and are pooled and reused as the others are.
func TestSlabBuffers(t *testing.T) {
	a := newPoolAllocator()
	sizes := []int{slabMin, slabMin + 1, 300 << 10, 1 << 20, slabMin, 3 << 20, slabBytes, 700 << 10}
	var bufs [][]byte
	for k, n := range sizes {
		b := a.Allocate(n)
		c := 1 << (poolClass(n) + poolMinShift)
		if len(b) != n || cap(b) != c || addrOf(b)%poolAlign != 0 {
			t.Fatalf("Allocate(%d): len %d cap %d addr %% 64 = %d; want %d, %d, 0", n, len(b), cap(b), addrOf(b)%poolAlign, n, c)
		}
		for i, x := range b[:cap(b)] {
			if x != 0 {
				t.Fatalf("Allocate(%d): byte %d = %#x, want 0", n, i, x)
			}
		}
		b = b[:cap(b)]
		for i := range b {
			b[i] = byte(k + 1)
		}
		bufs = append(bufs, b)
	}
	for k, b := range bufs {
		for i, x := range b {
			if x != byte(k+1) {
				t.Fatalf("buffer %d (%d bytes): byte %d = %d, want %d: another buffer overlaps it", k, sizes[k], i, x, k+1)
			}
		}
	}
	a.Free(bufs[2])
	if b := a.Allocate(260 << 10); addrOf(b) != addrOf(bufs[2]) || b[0] != 0 || b[len(b)-1] != 0 {
		t.Errorf("a freed slab buffer was not reused, zeroed, for the next request of its class")
	}
}
