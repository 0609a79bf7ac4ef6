package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedExampleFixtures replays testdata/seeds/*.tasm, the example
// instructions of the four ISA documents with bindings (LSC's are in
// TestLSCSeedExamples), with the engine under every option set and with the
// reference interpreter, which must agree; every example line must replay.
func TestSeedExampleFixtures(t *testing.T) {
	files, err := filepath.Glob("../testdata/seeds/*.tasm")
	if err != nil || len(files) < 3 {
		t.Fatalf("seed fixtures: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, l := range strings.Split(string(src), "\n") {
				l = strings.TrimSpace(l)
				if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, ".") {
					want++
				}
			}
			equalToReference(t, string(src), engineOptSets...)
			var c Collector
			sum, err := Replay(t.Context(), textSource(t, string(src)), &c)
			if err != nil {
				t.Fatal(err)
			}
			if int(sum.Instructions) != want || want == 0 {
				t.Errorf("%d instructions replayed, the file has %d", sum.Instructions, want)
			}
			if sum.LaneOps == 0 {
				t.Errorf("no lane ran")
			}
		})
	}
}
