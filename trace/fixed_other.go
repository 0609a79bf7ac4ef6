//go:build !amd64

package trace

// Go's loops only (fixed_amd64.go).
func hasFixedSIMD() bool { return false }

func fixedSIMD(vs []uint64, q []byte, w int, lo uint64, sh uint8) bool { return false }
