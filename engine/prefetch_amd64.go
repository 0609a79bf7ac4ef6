package engine

import "unsafe"

// prefetch asks the CPU for the cache lines at p and p+span of each p in
// ptrs (PREFETCHT0), without waiting for them: a load that missed would
// hold its place in the core's reorder buffer until memory answered, and
// a loop of them stalls once the buffer is full; a prefetch retires at
// once, so the misses of a short list overlap the work before their use.
// A long list asks too early: its first lines are gone again by their use
// (countChunk). Go has no prefetch intrinsic for user code, hence the
// assembly (prefetch_amd64.s).
//
//go:noescape
func prefetch(ptrs []unsafe.Pointer, span uintptr)

// prefetchRange asks for the cache lines of the n bytes at p, in address
// order.
//
//go:noescape
func prefetchRange(p unsafe.Pointer, n uintptr)
