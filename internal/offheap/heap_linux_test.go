//go:build linux && !race

package offheap

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseHeap: after AdviseHeap, the heap's next allocations lie on
// pages advised into huge pages (VmFlags hg), and neither the collector's
// heap goal nor the runtime's free pages not given back (which a memory
// limit counts: cmd/replay's heap floor) are raised by the object it grew
// the heap with.
func TestAdviseHeap(t *testing.T) {
	const n = 32 << 20
	if !AdviseHeap(n) {
		t.Skip("the system refused MADV_HUGEPAGE")
	}
	goal := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(goal)
	if g := goal[0].Value.Uint64(); g >= n/2 {
		t.Errorf("heap goal %d bytes after AdviseHeap(%d), want the goal of a heap without it (< %d)", g, n, n/2)
	}
	if f := goal[1].Value.Uint64(); f >= n/2 {
		t.Errorf("%d bytes of free heap kept from the system after AdviseHeap(%d), want them given back (< %d)", f, n, n/2)
	}
	b := make([]byte, 4<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b))) + 3<<20
	if flags, _ := vmaOf(t, at); !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("a fresh heap allocation at %#x after AdviseHeap: VmFlags %q, want hg", at, flags)
	}
	runtime.KeepAlive(b)
}
