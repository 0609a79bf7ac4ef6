//go:build linux && !race

package engine

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"unsafe"
)

// TestGrowWrittenTouchesRowsInUse: growWritten clears the rows in use of a
// fresh array, not grow's room past them: a default batch's statistics
// (4096 rows, room for 5120) fault in the pages of 4096 rows. Clearing
// the whole capacity faulted in 14 pages more a batch in flight, 56 of a
// hot counter replay's. It runs in a process of its own, whose heap is
// young, so that the array's pages are fresh from the system.
func TestGrowWrittenTouchesRowsInUse(t *testing.T) {
	if os.Getenv("ENGINE_TEST_GROWWRITTEN") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGrowWrittenTouchesRowsInUse$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ENGINE_TEST_GROWWRITTEN=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	const n = defaultBatchInsts
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	s := growWritten([]InstStat(nil), n)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if len(s) != n || cap(s) <= n {
		t.Fatalf("growWritten gave len %d cap %d, want len %d and room past it", len(s), cap(s), n)
	}
	for i := range s {
		if s[i] != (InstStat{}) {
			t.Fatalf("row %d not zero: %+v", i, s[i])
		}
	}
	used := (n*int(unsafe.Sizeof(InstStat{})) + 4095) / 4096
	room := (cap(s)*int(unsafe.Sizeof(InstStat{})) + 4095) / 4096
	// The runtime's own faults for a new span come on top of the
	// rows' (about 6 here): fewer than the whole room's pages, which
	// clearing it all faults in besides them.
	if faults := int(after.Minflt - before.Minflt); faults >= room {
		t.Errorf("growWritten of %d rows (room for %d) faulted %d pages, want fewer than the room's %d: the rows in use are %d",
			n, cap(s), faults, room, used)
	}
}
