//go:build !linux

package columnar

// adviseHuge does nothing where transparent huge pages are not Linux's.
func adviseHuge([]byte) {}
