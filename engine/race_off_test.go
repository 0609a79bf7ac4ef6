//go:build !race

package engine

// raceEnabled: see race_on_test.go.
const raceEnabled = false
