//go:build unix

package bench

import "syscall"

// outsideHeap returns a copy of data in memory mapped from the system,
// which the Go collector neither counts nor scans; data itself is left to
// the collector. A replay reads its trace from a file, outside its heap:
// with the benchmark traces (100 MB) in the heap, the collector's goal
// would be above what any replay allocates and a benchmarked replay would
// never collect, as the command does several times. Where the system
// refuses the mapping, data stays where it is.
func outsideHeap(data []byte) []byte {
	if len(data) == 0 {
		return data
	}
	m, err := syscall.Mmap(-1, 0, len(data), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return data
	}
	copy(m, data)
	return m
}
