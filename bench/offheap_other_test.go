//go:build !unix

package bench

// outsideHeap keeps data in the Go heap where there is no mmap.
func outsideHeap(data []byte) []byte { return data }
