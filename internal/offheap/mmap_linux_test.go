//go:build linux && !race

package offheap

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestRegionsOnHugePages: on Linux a region starts on a huge page and is
// advised into huge pages (VmFlags "hg" in /proc/self/smaps), its whole
// length is writable, and it unmaps whole, the ends mapRegion trimmed
// gone from the process's maps.
func TestRegionsOnHugePages(t *testing.T) {
	for range 3 {
		r, err := mapRegion(RegionBytes)
		if err != nil {
			t.Fatal(err)
		}
		start := uintptr(unsafe.Pointer(unsafe.SliceData(r)))
		if start%hugePage != 0 {
			t.Errorf("region at %#x, not on a %d-byte huge page", start, hugePage)
		}
		r[0], r[len(r)-1] = 1, 2
		flags, span := vmaOf(t, start)
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("region at %#x: VmFlags %q, want hg (MADV_HUGEPAGE)", start, flags)
		}
		if span != RegionBytes {
			t.Errorf("region at %#x: its mapping spans %d bytes, want %d (the ends unmapped)", start, span, RegionBytes)
		}
		if err := unmapRegion(r); err != nil {
			t.Fatal(err)
		}
		if flags, _ := vmaOf(t, start); flags != "" {
			t.Errorf("region at %#x still mapped after unmapRegion", start)
		}
	}
}

// vmaOf is the VmFlags and the size of the mapping of /proc/self/smaps
// that holds addr ("" and 0 when none does).
func vmaOf(t *testing.T, addr uintptr) (flags string, size int) {
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
			if in {
				size = int(hi - lo)
			}
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), size
		}
	}
	return "", 0
}

// TestHeapSliceOnHugePages: a large HeapSlice is advised into huge pages
// (VmFlags "hg"), so that writing it faults a page in per 2 MiB.
func TestHeapSliceOnHugePages(t *testing.T) {
	s := HeapSlice[uint64](RegionBytes / 8)
	s = s[:cap(s)]
	s[0], s[len(s)-1] = 1, 2
	at := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	if flags, _ := vmaOf(t, at); !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("HeapSlice at %#x: VmFlags %q, want hg (MADV_HUGEPAGE)", at, flags)
	}
}
