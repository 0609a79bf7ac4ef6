package trace

import (
	"strings"
	"testing"
)

// TestOpAndTypeNames: every Op and Type has a name of its own, the one the
// tables and messages print: an Op added to model.go without its entry in
// opNames would print as "Op(15)" and pass every other test.
func TestOpAndTypeNames(t *testing.T) {
	seen := map[string]bool{}
	for o := OpInvalid + 1; o < numOps; o++ {
		n := o.String()
		if strings.HasPrefix(n, "Op(") || n == "" || n == "invalid" || seen[n] {
			t.Errorf("Op %d is named %q: give it a name of its own in opNames", o, n)
		}
		seen[n] = true
	}
	if len(opNames) != int(numOps) {
		t.Errorf("%d names in opNames for %d ops", len(opNames), numOps)
	}
	clear(seen)
	for ty := TypeInvalid + 1; ty < numTypes; ty++ {
		n := ty.String()
		if strings.HasPrefix(n, "Type(") || n == "" || n == "invalid" || seen[n] || ty.Size() == 0 {
			t.Errorf("Type %d is named %q, size %d: give it a name and size in typeNames and typeSizes", ty, n, ty.Size())
		}
		seen[n] = true
		if back, ok := ParseType(n); !ok || back != ty {
			t.Errorf("ParseType(%q) = %v, %v", n, back, ok)
		}
	}
	if len(typeNames) != int(numTypes) || len(typeSizes) != int(numTypes) {
		t.Errorf("%d type names and %d sizes for %d types", len(typeNames), len(typeSizes), numTypes)
	}
}
