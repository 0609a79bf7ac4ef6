//go:build !unix || race

package offheap

import "errors"

// mapRegion does not map here: where there is no mmap, and under the race
// detector, which sees only the Go heap's memory (a race on a mapped
// region would pass unreported), Alloc takes its regions from the Go heap.
func mapRegion(int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapRegion([]byte) error { return nil }
