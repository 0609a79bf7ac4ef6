package writeback

import "golang.org/x/sys/unix"

// startWriteback starts writing [off, off+n) of file fd back to its
// device and returns at once (sync_file_range(2) with
// SYNC_FILE_RANGE_WRITE alone: it neither waits for the writes nor
// flushes the device's cache; the fsync does both).
func startWriteback(fd uintptr, off, n int64) {
	_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
