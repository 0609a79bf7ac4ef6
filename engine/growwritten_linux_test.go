//go:build linux && !race

package engine

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestGrowWrittenTouchesRowsInUse: growWritten clears the rows in use of a
// fresh array, not grow's room past them: a default batch's statistics
// (4096 rows, room for 5120) fault in the pages of 4096 rows. Clearing
// the whole capacity faulted in 14 pages more a batch in flight, 56 of a
// hot counter replay's. It asks the kernel which of the array's pages are
// resident (mincore), so that faults elsewhere in the process (the
// runtime's, the test framework's) do not count. It runs in a process of
// its own, whose heap is young, so that the array's pages are fresh from
// the system.
func TestGrowWrittenTouchesRowsInUse(t *testing.T) {
	if os.Getenv("ENGINE_TEST_GROWWRITTEN") != "1" {
		if thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil && strings.Contains(string(thp), "[always]") {
			// One fault then maps 2 MiB: every page of the room is
			// resident whatever growWritten clears.
			t.Skip("transparent huge pages are always on: residency is per 2 MiB, not per page")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestGrowWrittenTouchesRowsInUse$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ENGINE_TEST_GROWWRITTEN=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	const n = defaultBatchInsts
	s := growWritten([]InstStat(nil), n)
	if len(s) != n || cap(s) <= n {
		t.Fatalf("growWritten gave len %d cap %d, want len %d and room past it", len(s), cap(s), n)
	}
	for i := range s {
		if s[i] != (InstStat{}) {
			t.Fatalf("row %d not zero: %+v", i, s[i])
		}
	}
	page := uintptr(os.Getpagesize())
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	size := unsafe.Sizeof(InstStat{})
	usedEnd := (base + uintptr(n)*size + page - 1) &^ (page - 1) // past the last page the rows touch
	roomEnd := (base + uintptr(cap(s))*size) &^ (page - 1)       // the room's last whole page
	if roomEnd <= usedEnd {
		t.Fatalf("room of %d rows past %d has no whole page: the test measures nothing", cap(s), n)
	}
	first := base &^ (page - 1)
	vec := make([]byte, (roomEnd-first)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, first, roomEnd-first, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	usedPages := int((usedEnd - first) / page)
	resident := 0
	for _, v := range vec[:usedPages] {
		resident += int(v & 1)
	}
	if resident != usedPages {
		t.Errorf("%d of the %d pages of the rows in use are resident after growWritten, want all: it clears them", resident, usedPages)
	}
	var roomResident int
	for _, v := range vec[usedPages:] {
		roomResident += int(v & 1)
	}
	if roomResident != 0 {
		t.Errorf("growWritten of %d rows (room for %d) left %d of the room's %d pages past them resident, want 0: it clears only the rows in use",
			n, cap(s), roomResident, len(vec)-usedPages)
	}
}
