package testenv

import "testing"

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		require, ci string
		want        bool
	}{
		{"", "", false},
		{"1", "", true},
		{"", "true", true},
		{"0", "false", false},
	} {
		t.Setenv("REPLAY_TEST_REQUIRE", c.require)
		t.Setenv("CI", c.ci)
		if got := Required(); got != c.want {
			t.Errorf("REPLAY_TEST_REQUIRE=%q CI=%q: Required() = %v, want %v", c.require, c.ci, got, c.want)
		}
	}
}
