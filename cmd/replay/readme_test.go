package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeUseBlock returns the first ```sh block of the README's Use section.
func readmeUseBlock(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	use := strings.Index(s, "\n## Use\n")
	if use < 0 {
		t.Fatal("README.md has no ## Use section")
	}
	s = s[use:]
	if next := strings.Index(s[1:], "\n## "); next >= 0 {
		s = s[:next+1]
	}
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatal("README.md's Use section has no ```sh block")
	}
	s = s[start+len("```sh\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatal("README.md's Use section: the ```sh block does not end")
	}
	return s[:end]
}

// TestItem46_11_ReadmeUseRunsInOrder (issue 46 item 11): the README's Use
// block, run as written, top to bottom, in an empty directory, with this
// test binary as replay on PATH: every line succeeds (bash -e, pipefail),
// and what the lines say they write is there.
func TestItem46_11_ReadmeUseRunsInOrder(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	block := readmeUseBlock(t)
	if !strings.Contains(block, "replay gen ") || !strings.Contains(block, "replay merge ") {
		t.Fatalf("the Use block lost its gen or merge line:\n%s", block)
	}
	bin := t.TempDir()
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nREPLAY_TEST_AS_MAIN=1 exec " + self + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "replay"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-euo", "pipefail", "-c", block)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's Use block failed: %v\n%s", err, out.String())
	}
	for _, f := range []string{
		"trace.zst", "trace.tasm", "again.zst", "report.html",
		"trace.tables/memory.parquet", "out/results.parquet", "both/memory.arrow", "both/memory.parquet",
		"streamed/instructions.parquet", "parts/part=0/memory.parquet", "parts/part=2/memory.parquet",
		"merged/addresses.parquet", "smerged/instructions.parquet", "random/results.parquet", "explored/orders.parquet",
	} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after the Use block: %v", err)
		}
	}
	// replay diff out/ merged/ ran under -e, so the merge equals the replay;
	// replay help printed the overview.
	if !strings.Contains(out.String(), "replay asm") {
		t.Errorf("replay help printed no overview:\n%s", out.String())
	}
}
