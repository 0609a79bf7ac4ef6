//go:build !linux

package offheap

// AdviseHeap does nothing where transparent huge pages are not Linux's:
// it reports false.
func AdviseHeap(int) bool { return false }
