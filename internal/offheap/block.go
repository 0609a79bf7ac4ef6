package offheap

import (
	"runtime"
	"unsafe"
)

// HugeMin is the least a Block is worth: below it, a buffer is an
// ordinary make, since a huge page would clear and hold more memory than
// the 4 KiB pages it saves faulting.
const HugeMin = 256 << 10

// Block is a buffer of one owner, mapped outside the Go heap as an
// arena's region is (huge pages where granted), so that it neither
// raises the collector's heap goal nor is cleared by make. Its owner
// releases it once done (Release); a Block its owner drops unreleased
// (a sync.Pool's, at a collection) is unmapped once the collector finds
// it unreachable, so nothing leaks. Nothing may keep a slice of its bytes
// past either: they are unmapped.
type Block struct {
	b       []byte
	mapped  bool
	cleanup runtime.Cleanup
}

// NewBlock returns a Block of at least n zero bytes (n >= 1), whole huge
// pages, starting on one. Where mapping is refused (or under the race
// detector), its bytes come from the Go heap, laid out the same, and the
// collector frees them.
func NewBlock(n int) *Block {
	c := (n + RegionBytes - 1) &^ (RegionBytes - 1)
	if r, err := mapRegion(c); err == nil {
		k := &Block{b: r, mapped: true}
		k.cleanup = runtime.AddCleanup(k, func(b []byte) { unmapRegion(b) }, r)
		return k
	}
	// Go memory laid out as a region: on a huge page, whole ones,
	// advised before anything writes them.
	buf := make([]byte, c+RegionBytes)
	off := (RegionBytes - int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))%RegionBytes) % RegionBytes
	b := buf[off : off+c : off+c]
	adviseHuge(b)
	return &Block{b: b}
}

// Bytes returns the Block's bytes: nil once released.
func (k *Block) Bytes() []byte { return k.b }

// Release unmaps the Block's bytes now. It is idempotent; nothing may
// touch the bytes after.
func (k *Block) Release() error {
	if k == nil || k.b == nil {
		return nil
	}
	b := k.b
	k.b = nil
	if !k.mapped {
		return nil
	}
	k.cleanup.Stop()
	return unmapRegion(b)
}

// SliceOf returns k's bytes as a slice of length 0 and the capacity of
// T they hold. T must hold no pointers.
func SliceOf[T any](k *Block) []T {
	var zero T
	b := k.Bytes()
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b))/unsafe.Sizeof(zero))[:0]
}
