//go:build linux

package columnar

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestSlabsOnHugePages: on Linux the buffers of slabMin bytes and more
// (a table's batch columns) lie in memory advised into transparent huge
// pages (VmFlags "hg" in /proc/self/smaps), and smaller ones do not
// need to.
func TestSlabsOnHugePages(t *testing.T) {
	a := newPoolAllocator()
	for _, n := range []int{slabMin, 512 << 10, slabBytes} {
		b := a.Allocate(n)
		b[0], b[n-1] = 1, 2
		if flags := vmFlags(t, addrOf(b)); !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("Allocate(%d) at %#x: VmFlags %q, want hg (MADV_HUGEPAGE)", n, addrOf(b), flags)
		}
	}
}

// vmFlags is the VmFlags of the mapping of /proc/self/smaps that holds
// addr ("" when none does).
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	return ""
}
