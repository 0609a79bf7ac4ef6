//go:build !unix

package columnar

import "time"

// processCPU is not measured on this platform: the benchmarks report
// wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
