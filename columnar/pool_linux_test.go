//go:build linux

package columnar

import (
	"strings"
	"testing"

	"github.com/gpureplay/replay/internal/offheap"
)

// TestSlabsOnHugePages: on Linux the buffers of slabMin bytes and more
// (a table's batch columns) lie in memory advised into transparent huge
// pages (VmFlags "hg" in /proc/self/smaps), and smaller ones do not
// need to.
func TestSlabsOnHugePages(t *testing.T) {
	a := newPoolAllocator()
	// 64 KiB: a uint32 column of a batch of 16 Ki rows (a partition
	// replay's); 32 KiB, half of one.
	for _, n := range []int{32 << 10, 64 << 10, slabMin, 512 << 10, slabBytes} {
		b := a.Allocate(n)
		b[0], b[n-1] = 1, 2
		if flags := vmFlags(t, addrOf(b)); !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("Allocate(%d) at %#x: VmFlags %q, want hg (MADV_HUGEPAGE)", n, addrOf(b), flags)
		}
	}
}

// vmFlags is the VmFlags of the mapping that holds addr (offheap.Mapping);
// the test skips where /proc/self/smaps cannot be read.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	flags, _, err := offheap.Mapping(addr)
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	return flags
}
