//go:build !linux

package offheap

// adviseHuge does nothing where transparent huge pages are not Linux's.
func adviseHuge([]byte) {}
