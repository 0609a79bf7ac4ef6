package offheap

import (
	"fmt"
	"unsafe"
)

// RegionBytes is the size of the regions an Arena maps, and the most one
// Alloc gives: 2 MiB, a huge page (on Linux a region is one: mmap_linux.go),
// so that the arena maps a region per 2 MiB used and wastes at most the
// tail of its last region.
const RegionBytes = 2 << 20

// Align is the alignment of every piece Alloc returns: a cache line.
const Align = 64

// Arena hands out pieces of regions mapped outside the Go heap. Its zero
// value is ready to use.
type Arena struct {
	regions []region
	rest    []byte // the unused tail of the last region
}

type region struct {
	b      []byte
	mapped bool // from mapRegion; false: from the Go heap
}

// Alloc returns n zeroed bytes, aligned to Align; n must be in
// [1, RegionBytes]. When the system refuses a mapping, the region comes
// from the Go heap: an allocation fails only as the Go heap's would.
func (a *Arena) Alloc(n int) unsafe.Pointer {
	if n <= 0 || n > RegionBytes {
		panic(fmt.Sprintf("offheap: allocation of %d bytes (want 1 to %d)", n, RegionBytes))
	}
	size := (n + Align - 1) &^ (Align - 1)
	if len(a.rest) < size {
		r, err := mapRegion(RegionBytes)
		mapped := err == nil
		if !mapped {
			r = make([]byte, RegionBytes+Align)
			r = r[(Align-int(uintptr(unsafe.Pointer(unsafe.SliceData(r)))%Align))%Align:][:RegionBytes]
		}
		a.regions = append(a.regions, region{b: r, mapped: mapped})
		a.rest = r
	}
	p := unsafe.Pointer(unsafe.SliceData(a.rest))
	a.rest = a.rest[size:]
	return p
}

// Release returns every region to the system. Memory from Alloc must not
// be touched after. It reports the first region the system would not
// unmap; the arena forgets every region either way.
func (a *Arena) Release() error {
	var first error
	for _, r := range a.regions {
		if !r.mapped {
			continue
		}
		if err := unmapRegion(r.b); err != nil && first == nil {
			first = fmt.Errorf("offheap: unmapping %d bytes: %w", len(r.b), err)
		}
	}
	a.regions, a.rest = nil, nil
	return first
}
