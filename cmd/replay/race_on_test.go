//go:build race

package main

// raceEnabled: under the race detector internal/offheap's regions come
// from the Go heap (its invariant 5) and the race runtime's own memory
// grows it, so tests of when the heap collects do not hold there.
const raceEnabled = true
