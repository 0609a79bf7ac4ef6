package bench

import (
	"strconv"
	"testing"

	"github.com/gpureplay/replay/engine"
)

// BenchmarkPartition/<trace>/n=N is partition 0 of N of a replay with the
// default tables (all five) on 2 workers, measured as BenchmarkReplay
// measures a replay: the time and peak memory one process of a partitioned
// replay needs, as N grows. Every partition decodes the whole trace
// (BenchmarkLimit/<trace>/reader) and writes every instruction's row; the
// rest (pages, results, addresses) is its share. docs/PERFORMANCE.md,
// "Partitions", has the figures.
func BenchmarkPartition(b *testing.B) {
	for _, name := range []string{"uniform-64Mi", "uniform-1Mi"} {
		b.Run(name, func(b *testing.B) {
			t := getTrace(b, name)
			for _, n := range []int{1, 2, 4, 8} {
				b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
					benchReplay(b, t, nil, 2, engine.WithPartition(0, n))
				})
			}
		})
	}
}
