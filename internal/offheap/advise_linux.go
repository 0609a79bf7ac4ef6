//go:build linux

package offheap

import "golang.org/x/sys/unix"

// adviseHuge advises b, huge-page aligned, into transparent huge pages
// (MADV_HUGEPAGE: where the system's THP mode is "madvise", a common
// default, only advised memory gets them). A refusal leaves 4 KiB pages.
func adviseHuge(b []byte) { adviseHugeErr(b) }

func adviseHugeErr(b []byte) error { return unix.Madvise(b, unix.MADV_HUGEPAGE) }
