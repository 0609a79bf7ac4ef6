package main

import (
	"bytes"
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
