package trace

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/gpureplay/replay/internal/offheap"
)

// TestFrameBufferOnHugePages: a frame that decompresses to HugeMin bytes
// or more lands in a buffer that starts on a huge page (offheap.Block),
// whose first writes fault a page in per 2 MiB; the bytes are the frame's,
// and a smaller frame after it reuses the buffer.
func TestFrameBufferOnHugePages(t *testing.T) {
	raw := bytes.Repeat([]byte("atom.global.add.u32 0123456789abcdef"), 2*offheap.HugeMin/36)
	z := testEncoder().EncodeAll(raw, nil)
	w := workerPool.Get().(*worker)
	defer workerPool.Put(w)
	fb := &frameBuf{zbuf: z, bound: len(raw)}
	if err := w.decompress(fb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fb.raw, raw) {
		t.Fatalf("decompressed %d bytes, not the frame's %d", len(fb.raw), len(raw))
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(fb.raw)))
	if at%offheap.RegionBytes != 0 {
		t.Errorf("a frame of %d bytes decompressed at %#x, not on a huge page", len(raw), at)
	}
	small := raw[:1000]
	fb.zbuf, fb.bound = testEncoder().EncodeAll(small, nil), len(small)
	if err := w.decompress(fb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fb.raw, small) || uintptr(unsafe.Pointer(unsafe.SliceData(fb.raw))) != at {
		t.Errorf("a smaller frame after it: %d bytes at %#x, want the frame's %d at %#x", len(fb.raw), uintptr(unsafe.Pointer(unsafe.SliceData(fb.raw))), len(small), at)
	}
}
