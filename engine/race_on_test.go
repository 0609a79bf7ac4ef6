//go:build race

package engine

// raceEnabled: the race detector multiplies time and memory, so tests that
// measure either skip under it (they run in the plain `go test` pass).
const raceEnabled = true
