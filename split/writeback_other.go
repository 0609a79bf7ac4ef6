//go:build !linux

package split

// startWriteback does nothing where the system has no way to start
// writeback of a range without waiting for it: the fsync before the
// rename writes the whole file.
func startWriteback(fd uintptr, off, n int64) {}
