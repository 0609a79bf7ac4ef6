//go:build linux && !race

package trace

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
)

// TestFrameBufferReleasedOnGrow: a large frame's buffer is mapped
// outside the Go heap (offheap.Block); when a larger frame needs a larger
// buffer, the smaller one is unmapped at once, not left to the collector,
// and the larger frame's bytes are right.
func TestFrameBufferReleasedOnGrow(t *testing.T) {
	unit := []byte("atom.global.add.u32 0123456789abcdef")
	small := bytes.Repeat(unit, 2*offheap.HugeMin/len(unit))
	large := bytes.Repeat(unit, 3*offheap.RegionBytes/len(unit))
	w := workerPool.Get().(*worker)
	defer workerPool.Put(w)
	fb := &frameBuf{zbuf: testEncoder().EncodeAll(small, nil), bound: len(small)}
	if err := w.decompress(fb); err != nil {
		t.Fatal(err)
	}
	first := uintptr(unsafe.Pointer(unsafe.SliceData(fb.raw)))
	if flags, _, err := offheap.Mapping(first); err != nil || flags == "" {
		t.Fatalf("the first frame's buffer at %#x: not mapped (%v)", first, err)
	}
	fb.zbuf, fb.bound = testEncoder().EncodeAll(large, nil), len(large)
	if err := w.decompress(fb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fb.raw, large) {
		t.Fatalf("the larger frame: %d bytes, not its %d", len(fb.raw), len(large))
	}
	if flags, _, _ := offheap.Mapping(first); flags != "" {
		t.Errorf("the first frame's buffer at %#x is still mapped after the buffer grew", first)
	}
	if err := fb.blk.Release(); err != nil {
		t.Fatal(err)
	}
}
