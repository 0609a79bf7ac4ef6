package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileQuiet: -profile writes its profile; with -q nothing reaches
// standard error (pkg/profile's own lines included), without it the
// profile's path is named.
func TestProfileQuiet(t *testing.T) {
	dir := t.TempDir()
	for _, quiet := range []bool{true, false} {
		prof := filepath.Join(dir, map[bool]string{true: "q", false: "loud"}[quiet])
		args := []string{"-profile", "cpu", "-profile-dir", prof, "-o", filepath.Join(prof, "tables")}
		if quiet {
			args = append([]string{"-q"}, args...)
		}
		cmd := self(args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("replay %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		if fi, err := os.Stat(filepath.Join(prof, "cpu.pprof")); err != nil || fi.Size() == 0 {
			t.Errorf("replay %s: no cpu.pprof (%v)", strings.Join(args, " "), err)
		}
		switch got := stderr.String(); {
		case quiet && got != "":
			t.Errorf("replay -q -profile cpu printed %q on stderr", got)
		case !quiet && !strings.Contains(got, "cpu.pprof"):
			t.Errorf("replay -profile cpu did not name its profile on stderr: %q", got)
		}
	}
}

// TestMergeProfile: replay merge -profile cpu profiles the merge, quietly
// with -q.
func TestMergeProfile(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	tr := filepath.Join("..", "..", "testdata", "directives.tasm")
	for i := range 2 {
		if code, _, stderr := replayCmd(t, tr, "-partition", fmt.Sprintf("%d/2", i), "-o", parts, "-q"); code != 0 {
			t.Fatalf("partition %d: %s", i, stderr)
		}
	}
	prof := filepath.Join(dir, "prof")
	code, stdout, stderr := replayCmd(t, "merge", parts, "-o", filepath.Join(dir, "merged"), "-q", "-profile", "cpu", "-profile-dir", prof)
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("merge -q -profile cpu: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if fi, err := os.Stat(filepath.Join(prof, "cpu.pprof")); err != nil || fi.Size() == 0 {
		t.Errorf("merge -profile cpu: no cpu.pprof (%v)", err)
	}
}
