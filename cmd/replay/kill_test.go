package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// hiddenNames lists the names in dir that start with a dot.
func hiddenNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// parquetRows reads a Parquet file whole, as Arrow, and returns its rows.
func parquetRows(t *testing.T, path string) int64 {
	t.Helper()
	// Not a CheckedAllocator: arrow-go's DELTA_BINARY_PACKED decoder
	// (v18.8.0) never returns a small buffer to the allocator (the Go
	// allocator leaves it to the garbage collector).
	mem := memory.NewGoAllocator()
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer tbl.Release()
	if tbl.NumRows() != rdr.NumRows() {
		t.Errorf("%s: read %d rows, the footer says %d", path, tbl.NumRows(), rdr.NumRows())
	}
	return tbl.NumRows()
}

// TestKilledReplay kills a replay (SIGKILL) while it writes its tables,
// then replays into the same directory: that replay says in one line that
// it removed the killed one's leftovers, and leaves complete tables and
// nothing else. While the first replay runs, a second one into the same
// directory is refused and changes nothing.
func TestKilledReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL: Windows has no signals (Process.Kill is TerminateProcess there)")
	}
	tmp := t.TempDir()
	big := filepath.Join(tmp, "uniform.zst")
	if out, err := self("gen", "uniform", "-lane-ops", "2e7", "-o", big, "-q").CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "out")

	// An earlier, complete replay's tables, in both formats.
	if code, _, errOut := replayCmd(t, "-q", "-format", "both", "-o", dir); code != 0 {
		t.Fatalf("earlier replay: exit %d: %s", code, errOut)
	}
	earlier := tableDigests(t, dir)
	if len(earlier) != 10 {
		t.Fatalf("earlier replay wrote %v", earlier)
	}

	// The replay to kill, once its results file has grown past 1 MiB.
	victim := self("-q", "-o", dir, big)
	var victimErr bytes.Buffer
	victim.Stderr = &victimErr
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	reaped := false
	defer func() {
		if !reaped {
			victim.Process.Kill()
			<-exited
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ms, _ := filepath.Glob(filepath.Join(dir, ".results.parquet.tmp-*"))
		if len(ms) == 1 {
			if fi, err := os.Stat(ms[0]); err == nil && fi.Size() > 1<<20 {
				break
			}
		}
		select {
		case err := <-exited:
			reaped = true
			t.Fatalf("the replay ended (%v) before it could be killed; stderr: %s", err, victimErr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the replay's results file did not grow within 2 minutes")
		}
	}

	// Meanwhile, another replay into the same directory is refused.
	before := hiddenNames(t, dir)
	code, _, errOut := replayCmd(t, "-q", "-o", dir)
	if code != 1 || !strings.Contains(errOut, dir+" is being written by another replay") {
		t.Errorf("replay into a directory being written: exit %d, stderr %q; want exit 1 and why", code, errOut)
	}
	if got := hiddenNames(t, dir); !reflect.DeepEqual(got, before) {
		t.Errorf("the refused replay changed the directory: %v, was %v", got, before)
	}

	if err := victim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	reaped = true
	if err == nil || victim.ProcessState.Success() {
		t.Fatalf("the killed replay exited with %v", err)
	}

	// What the killed replay left: one temporary file per table, its lock
	// file, and the earlier tables as they were.
	left := hiddenNames(t, dir)
	var temps []string
	for _, n := range left {
		if strings.Contains(n, ".parquet.tmp-") {
			temps = append(temps, n)
		}
	}
	t.Logf("the killed replay left %v", left)
	if len(temps) != 5 || len(left) != 6 || !slices.Contains(left, ".replay.lock") {
		t.Fatalf("after the kill the directory holds %v, want 5 temporary files and .replay.lock", left)
	}
	got := tableDigests(t, dir)
	for n, d := range earlier {
		if got[n] != d {
			t.Errorf("the killed replay changed %s", n)
		}
	}

	// The next replay (the embedded demo) into the same directory.
	next := self("-q", "-o", dir)
	var stdout, stderr bytes.Buffer
	next.Stdout, next.Stderr = &stdout, &stderr
	if err := next.Run(); err != nil {
		t.Fatalf("replay after the kill: %v; stderr: %s", err, stderr.String())
	}
	if want := "replay: removed 5 leftover files of an interrupted replay in " + dir + "\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q with -q", stdout.String())
	}

	// Complete tables, those of this replay only: the same as a replay
	// into a fresh directory.
	fresh := filepath.Join(tmp, "fresh")
	if code, _, errOut := replayCmd(t, "-q", "-o", fresh); code != 0 {
		t.Fatalf("fresh replay: exit %d: %s", code, errOut)
	}
	want := tableDigests(t, fresh)
	got = tableDigests(t, dir)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the kill and a replay the directory holds %v,\nwant %v", got, want)
	}
	wantRows := map[string]int64{"memory": 11, "results": 180224, "instructions": 5632}
	for _, table := range []string{"memory", "results", "instructions", "ops", "addresses"} {
		n := table + ".parquet"
		rows := parquetRows(t, filepath.Join(dir, n))
		if fr := parquetRows(t, filepath.Join(fresh, n)); rows != fr || rows == 0 {
			t.Errorf("%s: %d rows, %d in a fresh replay", n, rows, fr)
		}
		if w, ok := wantRows[table]; ok && rows != w {
			t.Errorf("%s: %d rows, want %d", n, rows, w)
		}
	}
}
