package split

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRefusesOldVersionSlices: a slice file that an older replay split
// wrote is refused, naming the file and the version and saying to split
// again, rather than read: version 2, before blocks (testdata/v2, partition
// 0 of 2 of a histogram, written by replay at d2ea71e), and version 3,
// whose rows alone carried vectors (testdata/v3, likewise, by replay at
// a2d7949).
func TestOpenRefusesOldVersionSlices(t *testing.T) {
	for _, dir := range []string{"v2", "v3"} {
		t.Run(dir, func(t *testing.T) {
			_, err := Open(filepath.Join("testdata", dir), 0, 2)
			if err == nil {
				t.Fatalf("a %s slice file opened", dir)
			}
			for _, want := range []string{filepath.Join("testdata", dir, "part=0", "slice=0.zst"), "format version " + dir[1:] + ",", "run replay split again"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}
