package split

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRefusesVersion2Slices: a slice file that replay split wrote
// before blocks (split format version 2: testdata/v2, partition 0 of 2 of
// a histogram, written by replay at d2ea71e) is refused, naming the file
// and the version and saying to split again, rather than read.
func TestOpenRefusesVersion2Slices(t *testing.T) {
	_, err := Open(filepath.Join("testdata", "v2"), 0, 2)
	if err == nil {
		t.Fatal("a version 2 slice file opened")
	}
	for _, want := range []string{filepath.Join("testdata", "v2", "part=0", "slice=0.zst"), "format version 2", "run replay split again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
