//go:build !amd64

package engine

import "unsafe"

// prefetch is a hint only (prefetch_amd64.go): without one, the lines come
// when they are used.
func prefetch(ptrs []unsafe.Pointer, span uintptr) {}

func prefetchRange(p unsafe.Pointer, n uintptr) {}
