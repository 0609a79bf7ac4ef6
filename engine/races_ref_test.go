package engine

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpureplay/replay/trace"
)

// The races table's own reference: a brute-force reading of the scope
// rules, written from the ISA documents and not from races.go, which the
// golden files under testdata/races and the engine's Races are compared
// with.
//
// The rules, and where they come from:
//
//   - PTX ISA, atom, Description (the seed /work/shared/seeds/ptx-atom.md):
//     "Two atomic operations (atom or red) are performed atomically with
//     respect to each other only if each operation specifies a scope that
//     includes the other"; "If the .scope qualifier is absent, .gpu scope is
//     assumed"; .cta is the threads of the executing CTA, .cluster those of
//     its cluster, .gpu those of the device, .sys the whole system.
//   - PTX ISA, Memory Consistency Model (chapter 8 of the PTX ISA,
//     docs.nvidia.com/cuda/parallel-thread-execution, "Morally strong
//     operations" and "Data races"; formalised in Lustig, Sahasrabuddhe and
//     Giroux, "A Formal Analysis of the NVIDIA PTX Memory Consistency
//     Model", ASPLOS 2019): two operations are morally strong relative to
//     each other when they are related in program order (one thread), or
//     when each is strong and specifies a scope that includes the thread
//     executing the other (and both use one proxy and overlap completely).
//     Two conflicting operations (one of them writes) that are not morally
//     strong and not ordered otherwise are in a data race.
//
// So, for two accesses to one location (space, the group for per-group
// spaces, address) by two different threads (group, warp, lane), every
// atomic being a write:
//
//   - rule "scope": both are atomics (strong) and the scope of one of them
//     does not include the other's thread;
//   - rule "atomic_plain": one is an atomic and the other a plain load or
//     store (not strong, so never morally strong with anything but its own
//     thread).
//
// Two plain accesses are no row of either rule. A thread's scope: .cta
// includes the threads of its group, .cluster those whose group / cluster
// size is its own, .gpu and .sys every thread of a trace. A SASS atomic's
// .STRONG.CTA, .STRONG.GPU or .STRONG.SYS (the CUDA binary utilities'
// qualifier, parse_sass.go) is the scope of PTX's .cta, .gpu and .sys, and
// .gpu without one; the vISA and LSC documents give their accesses no scope
// narrower than the device: .gpu.
//
// The row of a rule at a location is its first racing pair in trace order
// (seq, lane, element): the pair whose later access B comes first, and of
// the accesses before B that race with it, the first as A. Rows are sorted
// by (space, group, addr) as the memory table is, then by the rule's name.
//
// The reference takes every active lane's every element at the address
// trace.Static documents (AddrScale*base + AddrImm + lane*LanePitch +
// element offset, wrapped at AddrBits); it models no fault, so the traces
// it is compared on access aligned words inside their regions.

// The rules, by name.
var refRaceRules = []string{"scope", "atomic_plain"}

// refAccess is one lane-element's access, in trace order.
type refAccess struct {
	seq         uint64
	lane        uint32
	group, warp int64
	dialect     string
	text        string
	scope       string // cta, cluster, gpu or sys
	atomic      bool
	// cluster is the group's at the access: {1, ID} when a .cluster
	// named it, else {0, group / cluster size}.
	cluster [2]int64
}

type refLoc struct {
	space trace.Space
	group int64
	addr  uint64
}

// refIncludes reports whether the scope of a includes b's thread.
func refIncludes(a, b *refAccess) bool {
	switch a.scope {
	case "cta":
		return a.group == b.group
	case "cluster":
		return a.cluster == b.cluster
	case "gpu", "sys":
		return true
	}
	panic("scope " + a.scope)
}

// refRaces reports whether a and b, two accesses to one location, race
// under rule.
func refRaces(rule string, a, b *refAccess) bool {
	sameThread := a.group == b.group && a.warp == b.warp && a.lane == b.lane
	if sameThread {
		return false // program order: morally strong
	}
	switch rule {
	case "scope":
		return a.atomic && b.atomic && !(refIncludes(a, b) && refIncludes(b, a))
	case "atomic_plain":
		return a.atomic != b.atomic
	}
	panic("rule " + rule)
}

// racesReference reads src to its end and returns the races table the
// rules above give.
func racesReference(src trace.Source, clusterSize int64) ([]RaceRow, error) {
	clusterSize = max(clusterSize, 1)
	accs := map[refLoc][]refAccess{}
	named := map[int64]int64{}
	for {
		in, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		st := in.Static
		if st == nil {
			if c := in.Dir.Cluster; c != nil {
				named[c.Group] = c.ID
			}
			continue // a directive
		}
		cluster := [2]int64{0, in.Group / clusterSize}
		if id, ok := named[in.Group]; ok {
			cluster = [2]int64{1, id}
		}
		scope := "gpu"
		if (st.Dialect == trace.DialectPTX || st.Dialect == trace.DialectSASS) && st.Scope != "" {
			scope = st.Scope
		}
		atomic := st.Op != trace.OpLoad && st.Op != trace.OpStore
		group := int64(-1)
		if st.Space.PerGroup() {
			group = in.Group
		}
		active := in.Active()
		for n := 0; n < st.ExecSize; n++ {
			if active&(1<<n) == 0 {
				continue
			}
			var base uint64
			if st.Addr >= 0 {
				lane := n
				if st.AddrUniform {
					lane = 0
				}
				base = in.Vals[st.Addr].Lo(lane)
			}
			for e := 0; e < max(st.Elems, 1); e++ {
				off := int64(e * st.Type.Size())
				if st.ElemOffsets != nil {
					off = st.ElemOffsets[e]
				}
				addr := uint64(st.AddrScale)*base + uint64(st.AddrImm) + uint64(n)*uint64(st.LanePitch) + uint64(off)
				if st.AddrBits < 64 {
					addr &= 1<<st.AddrBits - 1
				}
				k := refLoc{st.Space, group, addr}
				accs[k] = append(accs[k], refAccess{seq: in.Seq, lane: uint32(n), group: in.Group, warp: in.Warp,
					dialect: st.Dialect.String(), text: st.Text, scope: scope, atomic: atomic, cluster: cluster})
			}
		}
	}
	side := func(a *refAccess) RaceAccess {
		return RaceAccess{Seq: a.seq, Dialect: a.dialect, Text: a.text, Group: a.group, Warp: a.warp, Lane: a.lane, Scope: a.scope}
	}
	var rows []RaceRow
	for k, as := range accs {
		for _, rule := range refRaceRules {
		pairs:
			for j := range as {
				for i := 0; i < j; i++ {
					if refRaces(rule, &as[i], &as[j]) {
						rows = append(rows, RaceRow{Space: k.space, Group: k.group, Addr: k.addr, Rule: rule, A: side(&as[i]), B: side(&as[j])})
						break pairs
					}
				}
			}
		}
	}
	slices.SortFunc(rows, func(a, b RaceRow) int {
		return cmp.Or(cmp.Compare(a.Space.Kind, b.Space.Kind), cmp.Compare(a.Space.Surface, b.Space.Surface),
			cmp.Compare(a.Group, b.Group), cmp.Compare(a.Addr, b.Addr),
			strings.Compare(a.Rule, b.Rule))
	})
	return rows, nil
}

// racesOf runs the engine's races pass on a text trace.
func racesOf(t *testing.T, src string, clusterSize int64) []RaceRow {
	t.Helper()
	rows, err := Races(t.Context(), textSource(t, src), WithClusterSize(clusterSize))
	if err != nil {
		t.Fatalf("Races: %v\n%s", err, src)
	}
	return rows
}

// refRacesOf runs the reference on a text trace.
func refRacesOf(t *testing.T, src string, clusterSize int64) []RaceRow {
	t.Helper()
	rows, err := racesReference(textSource(t, src), clusterSize)
	if err != nil {
		t.Fatalf("reference: %v\n%s", err, src)
	}
	return rows
}

func rowLines(rows []RaceRow) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// TestRacesGoldenEqualReference: every golden file under testdata/races
// holds exactly the rows the reference gives for its fixture (TestRaces
// compares the engine with the same files).
func TestRacesGoldenEqualReference(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "races", "*.tasm"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		golden, err := os.ReadFile(strings.TrimSuffix(f, ".tasm") + ".races")
		if err != nil {
			t.Fatal(err)
		}
		if got := rowLines(refRacesOf(t, string(src), racesFixtureClusterSize)); got != string(golden) {
			t.Errorf("%s: the reference gives\n%s\nthe golden file holds\n%s", f, got, golden)
		}
	}
}

// TestRacesRules: one case per scope rule and per side of the
// atomic_plain rule, each with the rows it must give, checked on the
// reference (so that a wrong reference cannot pass the comparisons below)
// and on the engine. A mutation of any one rule in races.go (a scope that
// includes more or fewer threads, .cluster read as .cta or as .gpu, a
// missing default scope, a rule that ignores the thread) fails a case.
func TestRacesRules(t *testing.T) {
	const mem = ".region global 0x1000 0x100\n.region shared 0x0 0x100\n"
	at := func(group, warp int, text string) string {
		return fmt.Sprintf(".group %d\n.warp %d\n%s\n", group, warp, text)
	}
	ptx := func(scope, space string, addr, mask uint32) string {
		return fmt.Sprintf("atom%s.%s.add.u32 d, [a], 1; | a=0x%x mask=0x%x", scope, space, addr, mask)
	}
	const (
		store   = "lsc_store.ugm (M1,1) flat[V12]:a64 V13:d32 | V12=0x1000 V13=5"
		load    = "lsc_load.ugm (M1,1) V13:d32 flat[V12]:a64 | V12=0x1000"
		lscAdd  = "lsc_atomic_iadd.ugm (M1,1) V13:d32 flat[V12]:a64 V14 | V12=0x1000 V14=1"
		sassAdd = "ATOM.ADD.U32 R0, [R2], R3 | R2=0x1000 R3=1 mask=0x1"
		sassCTA = "ATOMG.E.ADD.STRONG.CTA R0, [R2], R4 | R2=0x1000 R4=1 mask=0x1"
		sassGPU = "ATOMG.E.ADD.STRONG.GPU R0, [R2], R4 | R2=0x1000 R4=1 mask=0x1"
	)
	cases := []struct {
		name        string
		src         string
		clusterSize int64
		rule        string // the one row's rule; "" for none
	}{
		{"cta_same_group", at(0, 0, ptx(".cta", "global", 0x1000, 1)) + at(0, 1, ptx(".cta", "global", 0x1000, 1)), 1, ""},
		{"cta_two_groups", at(0, 0, ptx(".cta", "global", 0x1000, 1)) + at(1, 0, ptx(".cta", "global", 0x1000, 1)), 1, "scope"},
		{"cta_two_lanes", at(0, 0, ptx(".cta", "global", 0x1000, 0xff)), 1, ""},
		{"cluster_same_cluster", at(2, 0, ptx(".cluster", "global", 0x1000, 1)) + at(3, 0, ptx(".cluster", "global", 0x1000, 1)), 2, ""},
		{"cluster_two_clusters", at(1, 0, ptx(".cluster", "global", 0x1000, 1)) + at(2, 0, ptx(".cluster", "global", 0x1000, 1)), 2, "scope"},
		{"cluster_size_one", at(2, 0, ptx(".cluster", "global", 0x1000, 1)) + at(3, 0, ptx(".cluster", "global", 0x1000, 1)), 1, "scope"},
		{"cluster_then_cta", at(2, 0, ptx(".cluster", "global", 0x1000, 1)) + at(3, 0, ptx(".cta", "global", 0x1000, 1)), 2, "scope"},
		{"gpu_two_groups", at(0, 0, ptx(".gpu", "global", 0x1000, 1)) + at(7, 0, ptx(".gpu", "global", 0x1000, 1)), 1, ""},
		{"sys_and_gpu", at(0, 0, ptx(".sys", "global", 0x1000, 1)) + at(7, 0, ptx(".gpu", "global", 0x1000, 1)), 1, ""},
		{"default_is_gpu", at(0, 0, ptx("", "global", 0x1000, 1)) + at(7, 0, ptx(".gpu", "global", 0x1000, 1)), 1, ""},
		{"default_then_cta", at(0, 0, ptx("", "global", 0x1000, 1)) + at(7, 0, ptx(".cta", "global", 0x1000, 1)), 1, "scope"},
		{"cta_then_sys", at(0, 0, ptx(".cta", "global", 0x1000, 1)) + at(7, 0, ptx(".sys", "global", 0x1000, 1)), 1, "scope"},
		{"cta_other_word", at(0, 0, ptx(".cta", "global", 0x1000, 1)) + at(1, 0, ptx(".cta", "global", 0x1004, 1)), 1, ""},
		{"cta_shared_is_per_group", at(0, 0, ptx(".cta", "shared", 0x10, 1)) + at(1, 0, ptx(".cta", "shared", 0x10, 1)), 1, ""},
		{"lsc_atomic_is_gpu", at(0, 0, lscAdd) + at(5, 0, ptx(".gpu", "global", 0x1000, 1)), 1, ""},
		{"lsc_atomic_vs_cta", at(5, 0, lscAdd) + at(0, 0, ptx(".cta", "global", 0x1000, 1)), 1, "scope"},
		{"sass_atomic_vs_cta", at(0, 0, ptx(".cta", "global", 0x1000, 1)) + at(3, 0, sassAdd), 1, "scope"},
		{"sass_strong_cta_two_groups", at(0, 0, sassCTA) + at(3, 0, sassCTA), 1, "scope"},
		{"sass_strong_cta_one_group", at(3, 0, sassCTA) + at(3, 1, sassCTA), 1, ""},
		{"sass_strong_gpu_two_groups", at(0, 0, sassGPU) + at(3, 0, sassGPU), 1, ""},
		{"store_then_atomic_two_threads", at(0, 0, store) + at(0, 1, lscAdd), 1, "atomic_plain"},
		{"atomic_then_load_two_groups", at(0, 0, ptx(".gpu", "global", 0x1000, 1)) + at(1, 0, load), 1, "atomic_plain"},
		{"store_then_atomic_one_thread", at(0, 0, store) + at(0, 0, lscAdd), 1, ""},
		{"two_plain_accesses", at(0, 0, store) + at(1, 0, store) + at(2, 0, load), 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := mem + c.src
			ref := refRacesOf(t, src, c.clusterSize)
			var rules []string
			for _, r := range ref {
				rules = append(rules, r.Rule)
			}
			want := []string{}
			if c.rule != "" {
				want = []string{c.rule}
			}
			if !slices.Equal(rules, want) {
				t.Fatalf("the reference gives rules %q, want %q:\n%s", rules, want, src)
			}
			if got := racesOf(t, src, c.clusterSize); !reflect.DeepEqual(got, ref) {
				t.Errorf("engine\n%swant (reference)\n%s", rowLines(got), rowLines(ref))
			}
		})
	}
}

// randomRaceTrace writes a trace for the races pass: PTX atomics of every
// scope (and none), LSC atomics, stores and loads, on a few global and
// shared words, from groups 0..5, two warps and the first four lanes; every
// access aligned and inside a region.
func randomRaceTrace(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(".region global 0x1000 0x40\n.region shared 0x0 0x40\n")
	scopes := []string{"", ".cta", ".cta", ".cluster", ".gpu", ".sys"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, ".group %d\n.warp %d\n", r.IntN(6), r.IntN(2))
		global := r.IntN(4) != 0
		word := uint64(4 * r.IntN(3))
		space, lscSpace, base, bits := "global", "ugm", uint64(0x1000), "a64"
		if !global {
			space, lscSpace, base, bits = "shared", "slm", 0, "a32"
		}
		addr := base + word
		switch k := r.IntN(10); {
		case k < 6:
			a := fmt.Sprintf("0x%x", addr)
			if r.IntN(3) == 0 {
				a = fmt.Sprintf("0x%x:4", base) // lane i at word i
			}
			op := []string{"add.u32", "exch.b32", "min.u32"}[r.IntN(3)]
			fmt.Fprintf(&b, "atom%s.%s.%s d, [a], 1; | a=%s mask=0x%x\n", scopes[r.IntN(len(scopes))], space, op, a, 1+r.IntN(15))
		case k < 8:
			fmt.Fprintf(&b, "lsc_store.%s (M1,1) flat[V12]:%s V13:d32 | V12=0x%x V13=%d\n", lscSpace, bits, addr, r.IntN(9))
		case k < 9:
			fmt.Fprintf(&b, "lsc_load.%s (M1,1) V13:d32 flat[V12]:%s | V12=0x%x\n", lscSpace, bits, addr)
		default:
			fmt.Fprintf(&b, "lsc_atomic_iadd.%s (M1,1) V13:d32 flat[V12]:%s V14 | V12=0x%x V14=1\n", lscSpace, bits, addr)
		}
	}
	return b.String()
}

// TestRacesEqualReferenceOnRandom: the engine's races pass gives the
// reference's rows on random traces, with clusters of 1, 2 and 3 groups.
func TestRacesEqualReferenceOnRandom(t *testing.T) {
	rows := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 51))
		src := randomRaceTrace(r, 4+r.IntN(20))
		cs := int64(1 + seed%3)
		want := refRacesOf(t, src, cs)
		for _, r := range want {
			rows[r.Rule]++
		}
		if got := racesOf(t, src, cs); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d, cluster size %d: engine\n%swant (reference)\n%s\ntrace:\n%s", seed, cs, rowLines(got), rowLines(want), src)
		}
	}
	for _, rule := range refRaceRules {
		if rows[rule] < 100 {
			t.Errorf("the random traces gave %v rows by rule: too few %s rows to test it", rows, rule)
		}
	}
	t.Logf("rows by rule: %v", rows)
}
