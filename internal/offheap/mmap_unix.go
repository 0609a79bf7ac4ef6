//go:build unix && !linux && !race

package offheap

import "syscall"

// mapRegion maps n bytes of private anonymous memory: zero, page-aligned,
// and resident only once written.
func mapRegion(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
}

func unmapRegion(b []byte) error { return syscall.Munmap(b) }
