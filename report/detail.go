package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/gpureplay/replay/columnar"
	"github.com/gpureplay/replay/internal/fp"
)

// What the page adds to the tables' rows: the run's options, the CAS
// outcome, the order witnesses' types and the order-sensitive addresses'
// witnesses.

// CASStat is the outcome of the compare-and-swap lane-ops of one kind
// ("ptx cas.b32"): Ran lane-ops ran (lanes − faults), Failed of them found
// another value than their compare operand (instructions.cas_failed).
type CASStat struct {
	Kind         string
	Instructions uint64
	Ran, Failed  uint64
}

// Swapped is how many of the lane-ops swapped.
func (c CASStat) Swapped() uint64 { return c.Ran - min(c.Failed, c.Ran) }

// word is an aligned 4-byte word of a space (and group).
type word struct {
	space string
	group int64
	addr  uint64
}

// wordOf is the word address a lies in.
func wordOf(a Address) word { return word{a.Space, a.Group, a.Addr &^ 3} }

// loadRun reads the run's options from the first table's metadata.
func (d *Data) loadRun() error {
	for _, t := range allTables {
		if !d.Present[t] {
			continue
		}
		kv, err := columnar.FileMetadata(d.path(t))
		if err != nil {
			return err
		}
		if v, ok := kv[columnar.MetaOptions]; ok {
			r, err := columnar.ParseRunOptions(v)
			if err != nil {
				return fmt.Errorf("%s: %w", d.path(t), err)
			}
			d.Run = &r
		}
		return nil
	}
	return nil
}

// columnNames are the columns of the Parquet file at p.
func columnNames(p string) (map[string]bool, error) {
	names := map[string]bool{}
	err := scanSchema(p, func(s *arrow.Schema) {
		for _, f := range s.Fields() {
			names[f.Name] = true
		}
	})
	return names, err
}

// loadWitnessDetail reads, after the tables, the witnesses of the top
// order-sensitive addresses (OrderJoin, a second pass over orders) and
// the type of every witness shown (from results and instructions).
func (d *Data) loadWitnessDetail() error {
	if d.Present["orders"] && d.OrderWitnessed > 0 && len(d.OrderSensitive) > 0 {
		if err := d.loadOrderJoin(); err != nil {
			return err
		}
	}
	var ws []*Witness
	for i := range d.Witnesses {
		ws = append(ws, &d.Witnesses[i])
	}
	for _, w := range d.OrderJoin {
		if w != nil {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 || !d.Present["results"] || !d.Present["instructions"] {
		return nil
	}
	return typeWitnesses(d.path("results"), d.path("instructions"), ws)
}

// loadOrderJoin finds the orders rows of OrderSensitive's words.
func (d *Data) loadOrderJoin() error {
	want := map[word][]int{}
	for i, a := range d.OrderSensitive {
		w := wordOf(a)
		want[w] = append(want[w], i)
	}
	d.OrderJoin = make([]*Witness, len(d.OrderSensitive))
	index := map[string]int{}
	for k, o := range d.OrderNames {
		index[o] = k
	}
	err := scan(d.path("orders"), ordersColumns(), func(cs []arrow.Array) error {
		sp, grp, addr, ord, val, err := orderCols(cs)
		if err != nil {
			return err
		}
		for i := range sp.Len() {
			is, ok := want[word{sp.Value(i), grp.Value(i), addr.Value(i)}]
			if !ok {
				continue
			}
			for _, j := range is {
				w := d.OrderJoin[j]
				if w == nil {
					w = &Witness{Address: Address{Space: strings.Clone(sp.Value(i)), Group: grp.Value(i), Addr: addr.Value(i)},
						Values: make([]uint32, len(d.OrderNames)), Has: make([]bool, len(d.OrderNames))}
					d.OrderJoin[j] = w
				}
				if k, ok := index[ord.Value(i)]; ok {
					w.Values[k], w.Has[k] = val.Value(i), true
				}
			}
		}
		return nil
	})
	return err
}

// maxTypeSamples is how many accesses to a witness's word are looked up
// for its type.
const maxTypeSamples = 16

// typeWitnesses sets each witness's Type: that of the first accesses to
// its word (up to maxTypeSamples lane-ops of the results table that did
// not fault, their instructions' type, space and group), when they agree;
// "" when they do not or there is none. Halves notes which 16-bit halves
// of the word they accessed.
func typeWitnesses(results, instructions string, ws []*Witness) error {
	byAddr := map[uint64][]*Witness{}
	for _, w := range ws {
		byAddr[w.Addr] = append(byAddr[w.Addr], w)
	}
	type sample struct {
		w    *Witness
		half uint8
	}
	samples := map[uint64][]sample{} // by seq
	taken := map[*Witness]int{}
	err := scan(results, []string{"seq", "addr", "fault"}, func(cs []arrow.Array) error {
		seq, err := col[*array.Uint64](cs[0], "seq")
		if err != nil {
			return err
		}
		addr, err := col[*array.Uint64](cs[1], "addr")
		if err != nil {
			return err
		}
		fault, ok := cs[2].(strs)
		if !ok {
			return errors.New("fault must be strings")
		}
		for i := range seq.Len() {
			a := addr.Value(i)
			for _, w := range byAddr[a&^3] {
				if taken[w] >= maxTypeSamples || fault.Value(i) != "" {
					continue
				}
				taken[w]++
				samples[seq.Value(i)] = append(samples[seq.Value(i)], sample{w, uint8(1) << ((a & 2) >> 1)})
			}
		}
		return nil
	})
	if err != nil || len(samples) == 0 {
		return err
	}
	mixed := map[*Witness]bool{}
	err = scan(instructions, []string{"seq", "type", "space", "group"}, func(cs []arrow.Array) error {
		seq, err := col[*array.Uint64](cs[0], "seq")
		if err != nil {
			return err
		}
		typ, ok1 := cs[1].(strs)
		sp, ok2 := cs[2].(strs)
		if !ok1 || !ok2 {
			return errors.New("type and space must be strings")
		}
		grp, err := col[*array.Int64](cs[3], "group")
		if err != nil {
			return err
		}
		for i := range seq.Len() {
			for _, s := range samples[seq.Value(i)] {
				w := s.w
				g := grp.Value(i)
				if sp.Value(i) != "shared" {
					g = -1
				}
				if sp.Value(i) != w.Space || g != w.Group {
					continue // another space's word at the same address
				}
				switch t := typ.Value(i); {
				case w.Type == "" && !mixed[w]:
					w.Type = strings.Clone(t)
				case w.Type != t:
					mixed[w], w.Type = true, ""
				}
				w.Halves |= s.half
			}
		}
		return nil
	})
	return err
}

// ordered maps a float's bits (of a format whose sign is bit sign) to an
// integer whose order is the values' order, so that two values' distance
// in it is their distance in ULPs.
func ordered(x, sign uint64) int64 {
	if x&sign != 0 {
		return -int64(x &^ sign)
	}
	return int64(x)
}

// shortestFloat is the shortest decimal that reads back as v, a float of
// the given bits (32 or 64): without an exponent from 1e-4 to 1e21, as
// JavaScript writes numbers.
func shortestFloat(v float64, bits int) string {
	if a := math.Abs(v); a == 0 || a >= 1e-4 && a < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, bits)
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}

// shortest16 is the shortest decimal that reads back as the 16-bit float
// x, by toF64 and fromF64 (f16 or bf16).
func shortest16(x uint16, toF64 func(uint16) float64, fromF64 func(float64) uint16) string {
	v := toF64(x)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for p := 1; p < 12; p++ {
		s := strconv.FormatFloat(v, 'g', p, 64)
		if f, err := strconv.ParseFloat(s, 64); err == nil && fromF64(f) == x {
			return shortestFloat(f, 64)
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// typedValue writes a witness's word value v as its type reads it, and
// the positions in the ordered integers of its float elements (nil for
// an integer type).
func (w *Witness) typedValue(v uint32) (string, []int64) {
	f16 := func(x uint16) string { return shortest16(x, fp.F16ToF64, fp.F64ToF16) }
	bf16 := func(x uint16) string { return shortest16(x, fp.BF16ToF64, fp.F64ToBF16) }
	halves := func(f func(uint16) string, both bool) (string, []int64) {
		lo, hi := uint16(v), uint16(v>>16)
		switch {
		case both || w.Halves == 3:
			return f(lo) + ", " + f(hi), []int64{ordered(uint64(lo), 0x8000), ordered(uint64(hi), 0x8000)}
		case w.Halves == 2:
			return f(hi), []int64{ordered(uint64(hi), 0x8000)}
		}
		return f(lo), []int64{ordered(uint64(lo), 0x8000)}
	}
	switch w.Type {
	case "f32":
		return shortestFloat(float64(math.Float32frombits(v)), 32), []int64{ordered(uint64(v), 1<<31)}
	case "f16":
		return halves(f16, false)
	case "bf16":
		return halves(bf16, false)
	case "f16x2":
		return halves(f16, true)
	case "bf16x2":
		return halves(bf16, true)
	case "s32":
		return strconv.FormatInt(int64(int32(v)), 10), nil
	case "f64", "u64", "s64", "b64", "b128":
		return fmt.Sprintf("0x%08x", v), nil // a part of a wider value
	}
	return strconv.FormatUint(uint64(v), 10), nil
}

// spread is how far apart the witness's values lie: in ULPs for a float
// type (the largest over its elements), "" for other types.
func (w *Witness) spread() string {
	var lo, hi []int64
	for k, v := range w.Values {
		if !w.Has[k] {
			continue
		}
		_, o := w.typedValue(v)
		if o == nil {
			return ""
		}
		if lo == nil {
			lo, hi = append([]int64(nil), o...), append([]int64(nil), o...)
			continue
		}
		for j := range o {
			lo[j], hi[j] = min(lo[j], o[j]), max(hi[j], o[j])
		}
	}
	var d int64
	for j := range lo {
		d = max(d, hi[j]-lo[j])
	}
	if lo == nil {
		return ""
	}
	if d == 1 {
		return "1 ULP"
	}
	return commas(uint64(d)) + " ULPs"
}
