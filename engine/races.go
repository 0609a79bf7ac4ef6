package engine

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/gpureplay/replay/trace"
)

// The races table: pairs of accesses to one address that are not atomic
// with respect to each other, found in one pass over the trace (Races),
// beside the replay. Two rules:
//
//   - scope: PTX atomics whose scopes do not both include the other's
//     thread. "Two atomic operations (atom or red) are performed atomically
//     with respect to each other only if each operation specifies a scope
//     that includes the other. When this condition is not met, each
//     operation observes the other operation being performed as if it were
//     split into a read followed by a dependent write" (the PTX seed, atom,
//     Description; "If the .scope qualifier is absent, .gpu scope is
//     assumed"). .cta includes the threads of the executing CTA (the
//     trace's .group), .cluster those of its cluster: the cluster the
//     trace names for the group (a .cluster directive, trace.Cluster, as
//     an imported Hopper trace's cluster lines give it), or else
//     WithClusterSize's consecutive .group numbers, 1 by
//     default, so that .cluster is .cta unless told. An access's cluster
//     is the group's at the access: a .cluster applies from its place on.
//     .gpu and .sys include every thread of a trace. The SASS, vISA
//     and LSC seeds give their atomics no scope narrower than the device,
//     so they count as .gpu. As in ScoRD (Kamath et al., ISCA 2020): a
//     .cta-scoped atomic from two CTAs on one global word.
//   - atomic_plain: an atomic and a plain load or store (LSC lsc_load /
//     lsc_store and their forms) on one address from different threads
//     (lanes): plain accesses are not atomic with respect to atomics; the
//     PTX seed says so of shared memory outright ("atom operations on
//     .shared state space do not guarantee atomicity with respect to normal
//     store instructions to the same address"), and the LSC seed describes
//     its loads and stores as plain memory accesses, ordered only by fences.
//
// A third kind of race, shared-memory atomics of different groups on
// memory the trace aliases, cannot arise here: every trace's shared
// memory is its group's own (.shared::cluster included, see
// trace/parse_ptx.go), so two groups never meet in it.
//
// Each address reports at most one row per rule: the first racing pair in
// trace order (the earlier access as A). The pass keeps per address a few
// representative accesses, enough to decide for every new access whether
// some earlier one races with it (races.go's check explains why), so its
// memory is a fixed few hundred bytes per distinct address.

// RaceRow is one row of the races table.
type RaceRow struct {
	Space trace.Space
	Group int64 // the memory's group for per-group spaces; -1 otherwise
	Addr  uint64
	Rule  string // "scope" or "atomic_plain"
	A, B  RaceAccess
}

// RaceAccess is one side of a race: the access's instruction and thread.
type RaceAccess struct {
	Seq         uint64
	Dialect     string
	Text        string
	Group, Warp int64
	Lane        uint32
	Scope       string // "cta", "cluster", "gpu", "sys"
}

const (
	scopeCTA uint8 = iota
	scopeCluster
	scopeGPU
)

// scopeOf is an instruction's scope class: .sys includes everything .gpu
// does within a trace.
func scopeOf(st *trace.Static) (uint8, string) {
	switch st.Scope {
	case "cta":
		return scopeCTA, "cta"
	case "cluster":
		return scopeCluster, "cluster"
	case "sys":
		return scopeGPU, "sys"
	}
	return scopeGPU, "gpu"
}

// cluKey is a cluster: one the trace names (named), or a group's by
// WithClusterSize.
type cluKey struct {
	id    int64
	named bool
}

// raceAcc is a remembered access.
type raceAcc struct {
	set         bool
	scope       uint8
	group, warp int64
	clu         cluKey // the group's cluster at the access
	lane        uint32
	seq         uint64
	st          *trace.Static
}

func (a *raceAcc) thread() [3]int64 { return [3]int64{a.group, a.warp, int64(a.lane)} }

// raceState is an address's representatives: the first atomic, and the
// first from another group and another cluster than it; the first two
// .cta-scoped atomics of different groups, the first two .cluster-scoped
// of different clusters; the first plain access and the first atomic, each
// with the first of its kind from another thread.
type raceState struct {
	found                        [2]bool
	first, otherGroup, otherClu  raceAcc
	cta1, cta2, clu1, clu2       raceAcc
	atom1, atom2, plain1, plain2 raceAcc
}

type raceKey struct {
	space trace.Space
	group int64
	addr  uint64
}

// Races reads src to its end and returns the races table's rows, sorted
// by (space, group, addr) like the memory table, then rule. Of the options
// it reads WithClusterSize. It stops, with an error wrapping ctx.Err(),
// when ctx is done.
func Races(ctx context.Context, src trace.Source, opts ...Option) ([]RaceRow, error) {
	o, err := buildOptions("Races", racesReads, opts)
	if err != nil {
		return nil, err
	}
	cs := o.clusterSize
	named := map[int64]int64{} // group -> the cluster the trace names
	cluster := func(g int64) cluKey {
		if id, ok := named[g]; ok {
			return cluKey{id, true}
		}
		if g < 0 {
			return cluKey{-((-g - 1) / cs) - 1, false}
		}
		return cluKey{g / cs, false}
	}
	h := src.Header()
	regions := map[trace.Space][]trace.Region{}
	for _, r := range h.Regions {
		regions[r.Space] = append(regions[r.Space], r)
	}
	plans := map[*trace.Static]*plan{}
	states := map[raceKey]*raceState{}
	var rows []RaceRow
	report := func(k raceKey, rule int, a, b *raceAcc) {
		side := func(x *raceAcc) RaceAccess {
			_, name := scopeOf(x.st)
			return RaceAccess{Seq: x.seq, Dialect: x.st.Dialect.String(), Text: x.st.Text, Group: x.group, Warp: x.warp, Lane: x.lane, Scope: name}
		}
		rows = append(rows, RaceRow{Space: k.space, Group: k.group, Addr: k.addr, Rule: [...]string{"scope", "atomic_plain"}[rule], A: side(a), B: side(b)})
	}
	// One instruction at a time, as the engine's expand reads it.
	var (
		one batch
		x   xinst // outside the loop: it escapes (plan hooks), once
	)
	for n := uint(0); ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("races stopped: %w", err)
			}
		}
		in, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if d := in.Dir; d != nil {
			if c := d.Cluster; c != nil {
				named[c.Group] = c.ID
			}
			if r := d.Region; r != nil {
				regions[r.Space] = append(regions[r.Space][:len(regions[r.Space]):len(regions[r.Space])], *r)
				clear(plans)
			}
			continue
		}
		st := in.Static
		p := plans[st]
		if p == nil {
			if p, err = newPlan(st, h, regions); err != nil {
				return nil, &InstError{Seq: in.Seq, Line: in.Line, Text: st.Text, Err: err}
			}
			plans[st] = p
		}
		if p.status {
			continue // lsc_load_status reads no memory
		}
		g := in.Group
		if !st.Space.PerGroup() {
			g = -1
		}
		scope, _ := scopeOf(st)
		clu := cluster(in.Group)
		x = one.alone(in, p)
		bi := &x
		for m := in.Active(); m != 0; m &= m - 1 {
			lane := bits.TrailingZeros32(m)
			for e := 0; e < st.Elems; e++ {
				addr := p.addr(bi, lane, e)
				if p.checkElem(bi, lane, e, addr) != FaultNone {
					continue // no access
				}
				k := raceKey{st.Space, g, addr}
				s := states[k]
				if s == nil {
					s = &raceState{}
					states[k] = s
				}
				x := raceAcc{set: true, scope: scope, group: in.Group, warp: in.Warp, clu: clu, lane: uint32(lane), seq: in.Seq, st: st}
				if p.plain {
					s.plainAccess(k, &x, report)
				} else {
					s.atomicAccess(k, &x, report)
				}
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b RaceRow) int {
		return cmp.Or(cmp.Compare(a.Space.String(), b.Space.String()), cmp.Compare(a.Group, b.Group),
			cmp.Compare(a.Addr, b.Addr), cmp.Compare(a.Rule, b.Rule))
	})
	return rows, nil
}

// includes reports whether access a's scope includes b's thread.
func includes(a, b *raceAcc) bool {
	switch a.scope {
	case scopeCTA:
		return a.group == b.group
	case scopeCluster:
		return a.clu == b.clu
	}
	return true
}

// atomicAccess checks atomic x against the address's earlier atomics and
// plain accesses, then remembers it. Why the representatives suffice for
// the scope rule: x races with an earlier y when x's or y's scope does not
// include the other's thread. If x is .cta, any y of another group races:
// first is one unless it is of x's group, and then otherGroup is (of a
// group other than first's, so than x's). If x is .cluster, any y of
// another cluster (first or otherClu, likewise), or a .cta y of another
// group (cta1 or cta2). If x is .gpu or .sys, a .cta y of another group
// (cta1, cta2) or a .cluster y of another cluster (clu1, clu2).
func (s *raceState) atomicAccess(k raceKey, x *raceAcc, report func(raceKey, int, *raceAcc, *raceAcc)) {
	if !s.found[0] {
		for _, y := range []*raceAcc{&s.first, &s.otherGroup, &s.otherClu, &s.cta1, &s.cta2, &s.clu1, &s.clu2} {
			if y.set && !(includes(x, y) && includes(y, x)) {
				report(k, 0, y, x)
				s.found[0] = true
				break
			}
		}
		switch {
		case !s.first.set:
			s.first = *x
		case !s.otherGroup.set && x.group != s.first.group:
			s.otherGroup = *x
		}
		if !s.otherClu.set && x.clu != s.first.clu {
			s.otherClu = *x
		}
		switch x.scope {
		case scopeCTA:
			if !s.cta1.set {
				s.cta1 = *x
			} else if !s.cta2.set && x.group != s.cta1.group {
				s.cta2 = *x
			}
		case scopeCluster:
			if !s.clu1.set {
				s.clu1 = *x
			} else if !s.clu2.set && x.clu != s.clu1.clu {
				s.clu2 = *x
			}
		}
	}
	if !s.found[1] {
		if y := other(&s.plain1, &s.plain2, x); y != nil {
			report(k, 1, y, x)
			s.found[1] = true
		}
		remember(&s.atom1, &s.atom2, x)
	}
}

// plainAccess checks plain x against the address's earlier atomics.
func (s *raceState) plainAccess(k raceKey, x *raceAcc, report func(raceKey, int, *raceAcc, *raceAcc)) {
	if s.found[1] {
		return
	}
	if y := other(&s.atom1, &s.atom2, x); y != nil {
		report(k, 1, y, x)
		s.found[1] = true
	}
	remember(&s.plain1, &s.plain2, x)
}

// other returns a remembered access (r1, else r2) of another thread than
// x's, or nil: r2 is of another thread than r1, so if any remembered
// access of the kind is of another thread than x, one of the two is.
func other(r1, r2, x *raceAcc) *raceAcc {
	if r1.set && r1.thread() != x.thread() {
		return r1
	}
	if r2.set && r2.thread() != x.thread() {
		return r2
	}
	return nil
}

func remember(r1, r2, x *raceAcc) {
	if !r1.set {
		*r1 = *x
	} else if !r2.set && r1.thread() != x.thread() {
		*r2 = *x
	}
}

// String describes a row for messages and tests.
func (r RaceRow) String() string {
	return fmt.Sprintf("%s %s %d 0x%x: %d %s (group %d warp %d lane %d, %s) / %d %s (group %d warp %d lane %d, %s)",
		r.Rule, r.Space, r.Group, r.Addr, r.A.Seq, r.A.Text, r.A.Group, r.A.Warp, r.A.Lane, r.A.Scope,
		r.B.Seq, r.B.Text, r.B.Group, r.B.Warp, r.B.Lane, r.B.Scope)
}
