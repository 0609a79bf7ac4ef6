package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// racesFixtureClusterSize is the cluster size the fixtures under
// testdata/races are read with: two groups a cluster.
const racesFixtureClusterSize = 2

// TestRaces: the fixtures under testdata/races, each with the rows it must
// give (golden files, one RaceRow.String a line; go test -update rewrites
// them from the reference of races_ref_test.go, never from the engine, and
// TestRacesGoldenEqualReference checks them against it), and the cases in
// between spelled out here so that a wrong golden file cannot hide a wrong
// rule: .cta atomics of two CTAs on one word race,
// of one CTA do not; .gpu atomics of two CTAs do not; a .cta and a .gpu
// atomic of two CTAs do, whichever comes first; .cluster atomics race across
// clusters only (two CTAs a cluster here, unless a .cluster directive
// names a group's cluster: cluster_named.tasm); an atomic and a plain store race
// from two threads, not from one.
func TestRaces(t *testing.T) {
	want := map[string]int{ // fixture: rows
		"cta_two_ctas.tasm":     1,
		"cta_one_cta.tasm":      0,
		"gpu_two_ctas.tasm":     0,
		"cta_then_gpu.tasm":     1,
		"gpu_then_cta.tasm":     1,
		"cluster.tasm":          1,
		"cluster_named.tasm":    2,
		"atomic_plain.tasm":     1,
		"atomic_plain_one.tasm": 0,
	}
	files, err := filepath.Glob(filepath.Join("testdata", "races", "*.tasm"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("%d fixtures (%v), want %d", len(files), err, len(want))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rows := racesOf(t, string(src), racesFixtureClusterSize)
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(r.String() + "\n")
		}
		golden := strings.TrimSuffix(f, ".tasm") + ".races"
		if *update {
			if err := os.WriteFile(golden, []byte(rowLines(refRacesOf(t, string(src), racesFixtureClusterSize))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(g) {
			t.Errorf("%s: rows\n%s\nwant (%s)\n%s", f, b.String(), golden, g)
		}
		if n := want[filepath.Base(f)]; len(rows) != n {
			t.Errorf("%s: %d rows, want %d", f, len(rows), n)
		}
	}
}

// TestRacesRows spells out two rows field by field.
func TestRacesRows(t *testing.T) {
	src := ".region global 0x1000 0x100\n.group 0\natom.cta.global.add.u32 d, [a], 1; | a=0x1000 mask=0x1\n" +
		".group 1\natom.global.add.u32 d, [a], 1; | a=0x1000 mask=0x4\n"
	rows, err := Races(t.Context(), textSource(t, src))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1: %v", len(rows), rows)
	}
	r := rows[0]
	if r.Rule != "scope" || r.Addr != 0x1000 || r.Group != -1 || r.A.Seq != 0 || r.A.Group != 0 || r.A.Lane != 0 || r.A.Scope != "cta" ||
		r.B.Seq != 1 || r.B.Group != 1 || r.B.Lane != 2 || r.B.Scope != "gpu" || r.A.Dialect != "ptx" || !strings.HasPrefix(r.B.Text, "atom.global.add.u32") {
		t.Errorf("row %s", r)
	}
}
