//go:build !amd64

package columnar

// Go's loops only (deltas_amd64.go).
func blockDeltasSIMD[T int32 | int64](d *[deltaBlock]int64, his *[deltaMinis]int64, blk []T, prev, flip, vlo, vhi T) (lo, hi int64, _, _ T, ok bool) {
	return 0, 0, 0, 0, false
}
