//go:build !linux

package trace

// threadCPU is not measured off Linux (RUSAGE_THREAD is Linux's): the
// benchmarks report wall time only.
func threadCPU() (int64, bool) { return 0, false }
