// Package testenv says what a test does when a program it runs is missing.
//
// A test that runs a program beside Go (zstd, node with DuckDB's reader,
// Chromium) skips when the program is missing, naming it and how to
// install it, so that `go test` works on a bare machine; but under
// `make test`, which installs those programs first (tools/test-prereqs.sh),
// and in CI, a missing program fails the test, so that no skipped test is
// counted as a pass. `make test` sets REPLAY_TEST_REQUIRE=1; CI=true (set by
// most CI services, and by .ci/run) means the same.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// Required reports whether a missing program fails a test rather than
// skipping it: REPLAY_TEST_REQUIRE=1 or CI=true.
func Required() bool {
	return os.Getenv("REPLAY_TEST_REQUIRE") == "1" || os.Getenv("CI") == "true"
}

// Missing skips t, or fails it when Required, saying what is missing.
func Missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (required: REPLAY_TEST_REQUIRE=1 or CI=true; make test installs it)", what)
	}
	t.Skipf("skipping: %s", what)
}

// LookPath is exec.LookPath(name), or Missing with install as the hint.
func LookPath(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" not in PATH ("+install+")")
	}
	return p
}
