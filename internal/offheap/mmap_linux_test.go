//go:build linux && !race

package offheap

import (
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

// vmaOf is Mapping(addr); a test skips where /proc/self/smaps cannot be
// read.
func vmaOf(t *testing.T, addr uintptr) (flags string, size int) {
	t.Helper()
	flags, size, err := Mapping(addr)
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	return flags, size
}
