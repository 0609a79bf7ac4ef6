package columnar

import (
	"fmt"
	"os"
	"path/filepath"
)

// Diff compares the memory and results tables of two replays' output
// directories, row by row on their keys: memory on (space, group, addr),
// results on (seq, lane, elem). The key does not name the dialect or the
// instruction's text, so the replays of one kernel in two dialects (a
// PTX trace and its SASS, instruction for instruction) compare lane by
// lane. Both tables are read once, in the order they are sorted in.

// DiffRow is one difference: a key whose row is in one directory only, or
// whose values differ.
type DiffRow struct {
	Table string // "memory" or "results"
	Key   string // "global -1 0x10000", "seq 17 lane 3 elem 0"
	A, B  string // the row's values in each, or "(none)"
}

// DiffSummary counts what Diff compared and found.
type DiffSummary struct {
	Words, Results             [2]int // rows read in A and in B
	WordsDiffer, ResultsDiffer int    // keys in both, values differ
	WordsOnlyA, WordsOnlyB     int
	ResultsOnlyA, ResultsOnlyB int
	MissingTables              []string
}

// Differ reports whether the two replays differ.
func (s *DiffSummary) Differ() bool {
	return s.WordsDiffer+s.WordsOnlyA+s.WordsOnlyB+s.ResultsDiffer+s.ResultsOnlyA+s.ResultsOnlyB > 0
}

// tableFile is dir's file of table id: Parquet, else Arrow IPC, else "".
func tableFile(dir string, id tableID) string {
	for _, ext := range []string{extParquet, extArrow} {
		p := filepath.Join(dir, specs[id].name+ext)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Diff compares directories a and b and calls each for every difference,
// in key order (memory first), until each returns false.
func Diff(a, b string, each func(DiffRow) bool) (DiffSummary, error) {
	var s DiffSummary
	for _, d := range []string{a, b} {
		if st, err := os.Stat(d); err != nil {
			return s, err
		} else if !st.IsDir() {
			return s, fmt.Errorf("%s is not a directory", d)
		}
	}
	more := true
	emit := func(r DiffRow) {
		if more {
			more = each(r)
		}
	}
	for _, t := range []struct {
		id   tableID
		make func(*tableReader) cursor
	}{{tMemory, newMemoryCursor}, {tResults, newResultCursor}} {
		fa, fb := tableFile(a, t.id), tableFile(b, t.id)
		if fa == "" || fb == "" {
			if fa != "" || fb != "" {
				return s, fmt.Errorf("only one of %s and %s has the %s table", a, b, specs[t.id].name)
			}
			s.MissingTables = append(s.MissingTables, specs[t.id].name)
			continue
		}
		if err := diffTable(fa, fb, t.id, t.make, &s, emit); err != nil {
			return s, err
		}
	}
	if len(s.MissingTables) == 2 {
		return s, fmt.Errorf("neither %s nor %s has a memory or results table", a, b)
	}
	return s, nil
}

// keyed is what Diff needs of a cursor beyond merging: its row's key and
// values as text.
type keyed interface {
	cursor
	key() string
	values() string
}

func diffTable(fa, fb string, id tableID, mk func(*tableReader) cursor, s *DiffSummary, emit func(DiffRow)) error {
	var cs [2]keyed
	var ok [2]bool
	for i, f := range []string{fa, fb} {
		t, err := openTable(f)
		if err != nil {
			return err
		}
		cs[i] = mk(t).(keyed)
		defer cs[i].close()
		if ok[i], err = cs[i].advance(); err != nil {
			return err
		}
	}
	name := specs[id].name
	count := func(side int) {
		if id == tMemory {
			s.Words[side]++
		} else {
			s.Results[side]++
		}
	}
	step := func(side int) error {
		count(side)
		var err error
		ok[side], err = cs[side].advance()
		return err
	}
	for ok[0] || ok[1] {
		switch {
		case ok[0] && (!ok[1] || cs[0].less(cs[1])):
			emit(DiffRow{Table: name, Key: cs[0].key(), A: cs[0].values(), B: "(none)"})
			if id == tMemory {
				s.WordsOnlyA++
			} else {
				s.ResultsOnlyA++
			}
			if err := step(0); err != nil {
				return err
			}
		case ok[1] && (!ok[0] || cs[1].less(cs[0])):
			emit(DiffRow{Table: name, Key: cs[1].key(), A: "(none)", B: cs[1].values()})
			if id == tMemory {
				s.WordsOnlyB++
			} else {
				s.ResultsOnlyB++
			}
			if err := step(1); err != nil {
				return err
			}
		default: // the same key in both
			if va, vb := cs[0].values(), cs[1].values(); va != vb {
				emit(DiffRow{Table: name, Key: cs[0].key(), A: va, B: vb})
				if id == tMemory {
					s.WordsDiffer++
				} else {
					s.ResultsDiffer++
				}
			}
			if err := step(0); err != nil {
				return err
			}
			if err := step(1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *memoryCursor) key() string {
	return fmt.Sprintf("%s %d 0x%x", c.space.Value(c.row), c.group.Value(c.row), c.addr.Value(c.row))
}

func (c *memoryCursor) values() string { return fmt.Sprintf("0x%08x", c.value.Value(c.row)) }

func (c *resultCursor) key() string {
	return fmt.Sprintf("seq %d lane %d elem %d", c.seq.Value(c.row), c.lane.Value(c.row), c.elem.Value(c.row))
}

func (c *resultCursor) values() string {
	r := c.row
	v := fmt.Sprintf("0x%x", c.value.Value(r))
	if hi := c.hi.Value(r); hi != 0 {
		v = fmt.Sprintf("0x%x%016x", hi, c.value.Value(r))
	}
	v += fmt.Sprintf(" @0x%x", c.addr.Value(r))
	if f := c.fault.Value(r); f != "" {
		v += " " + f
	}
	return v
}
