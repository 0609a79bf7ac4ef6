package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/trace"
)

// TestRouterCounts: the row a split gives an instruction counts what a
// whole replay counts over all its lanes, whatever path counts them: a
// full warp in one 4 GiB span (the AVX-512 path where the machine has it),
// a full warp whose addresses differ only above bit 31 (which a count of
// the low 32 bits would take for one address each), and a partial warp.
func TestRouterCounts(t *testing.T) {
	list := func(addr func(lane int) uint64) string {
		var vs []string
		for l := range 32 {
			vs = append(vs, fmt.Sprintf("%#x", addr(l)))
		}
		return "[" + strings.Join(vs, ",") + "]"
	}
	for _, tc := range []struct {
		name, bind                  string
		lanes, addrs, maxc, sectors uint32
	}{
		// Lanes 0-15 on 16 words of 0x1000 (two sectors), lanes 16-31 on
		// the same words again: 16 addresses, 2 lanes each.
		{"one span", "a=" + list(func(l int) uint64 { return 0x1000 + uint64(l%16)*4 }), 32, 16, 2, 2},
		// Lanes 16-31 4 GiB above lanes 0-15: 32 addresses, 4 sectors.
		{"across 4 GiB", "a=" + list(func(l int) uint64 { return 0x1000 + uint64(l/16)<<32 + uint64(l%16)*4 }), 32, 32, 1, 4},
		// Scattered, a sector each, lanes 0 and 31 both on 0x8000.
		{"scattered", "a=" + list(func(l int) uint64 { return uint64((l%31)*(l%31))*64 + 0x8000 }), 32, 31, 2, 31},
		// Half the lanes: 0x100, 0x104, … 0x13c: 16 addresses, 2 sectors.
		{"partial", "a=0x100:4 mask=0xffff", 16, 16, 1, 2},
	} {
		src := "atom.global.add.u32 d, [a], 1; | " + tc.bind + "\n"
		tr, err := trace.NewTextReader(strings.NewReader(src), tc.name+".tasm")
		if err != nil {
			t.Fatal(err)
		}
		in, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, n := range []int{1, 3, 8} {
			rt, err := engine.NewRouter(tr.Header(), n)
			if err != nil {
				t.Fatal(err)
			}
			r, err := rt.Route(in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lanes != tc.lanes || r.Addresses != tc.addrs || r.MaxConflict != tc.maxc || r.Sectors != tc.sectors {
				t.Errorf("%s, %d partitions: lanes %d, addresses %d, max conflict %d, sectors %d; want %d, %d, %d, %d",
					tc.name, n, r.Lanes, r.Addresses, r.MaxConflict, r.Sectors, tc.lanes, tc.addrs, tc.maxc, tc.sectors)
			}
			var owned uint32
			for _, p := range r.Parts {
				owned |= r.Owners[p]
			}
			if owned != in.Active() {
				t.Errorf("%s, %d partitions: the partitions own lanes %#x, the active lanes are %#x", tc.name, n, owned, in.Active())
			}
		}
	}
}
