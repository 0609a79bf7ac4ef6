package engine

import (
	"errors"
	"math/bits"
)

// Collector is a Sink that keeps everything in memory: for tests and for
// Go programs that replay small traces and look at the results directly.
// It declares every optional part, so that a sink that embeds it and
// overrides a method gets what it overrides (and one that wants less
// overrides Caps).
type Collector struct {
	Res       []Result
	Stats     []InstStat
	Words     []Word
	Addrs     []AddressStat
	Committed bool
	Aborted   bool
}

func (c *Collector) Results(rs []Result) error {
	if c.Committed || c.Aborted {
		return errors.New("collector: closed")
	}
	c.Res = append(c.Res, rs...)
	return nil
}

// ResultColumns keeps the rows as Results would. Collector's Caps do
// not declare CapResultColumns, so that a sink that embeds it and
// overrides Results gets the rows there; one that declares it gets them
// here.
func (c *Collector) ResultColumns(rc *ResultColumns) error {
	if c.Committed || c.Aborted {
		return errors.New("collector: closed")
	}
	c.Res = rc.AppendRows(c.Res)
	return nil
}

func (c *Collector) Instructions(st []InstStat) error {
	if c.Committed || c.Aborted {
		return errors.New("collector: closed")
	}
	c.Stats = append(c.Stats, st...)
	return nil
}

func (c *Collector) Memory(ws []Word) error {
	if c.Committed || c.Aborted {
		return errors.New("collector: closed")
	}
	c.Words = append(c.Words, ws...)
	return nil
}

// Caps is every optional part: results (as Results, not columns: see
// ResultColumns), the addresses table, and the memory table by pages
// (kept as Words, as Memory keeps them).
func (c *Collector) Caps() SinkCaps { return CapResults | CapAddresses | CapMemoryPages }

// MemoryPage keeps a page's words as Memory would.
func (c *Collector) MemoryPage(p *WordPage) error {
	if c.Committed || c.Aborted {
		return errors.New("collector: closed")
	}
	for g, m := range p.Written {
		for ; m != 0; m &= m - 1 {
			i := uint64(g*64 + bits.TrailingZeros64(m))
			c.Words = append(c.Words, Word{Space: p.Space, Group: p.Group, Addr: p.Base + 4*i, Value: p.Words[i]})
		}
	}
	return nil
}

func (c *Collector) Addresses(rows []AddressStat) error {
	if c.Committed || c.Aborted {
		return errors.New("collector: closed")
	}
	c.Addrs = append(c.Addrs, rows...)
	return nil
}

func (c *Collector) Commit() error {
	if c.Aborted {
		return errors.New("collector: commit after abort")
	}
	c.Committed = true
	return nil
}

// Abort drops everything collected.
func (c *Collector) Abort() error {
	c.Res, c.Stats, c.Words, c.Addrs = nil, nil, nil, nil
	c.Aborted = true
	return nil
}

// Word returns the final value of the word at (space, group, addr) and
// whether the trace touched it.
func (c *Collector) Word(space string, group int64, addr uint64) (uint32, bool) {
	for _, w := range c.Words {
		if w.Space.String() == space && w.Group == group && w.Addr == addr {
			return w.Value, true
		}
	}
	return 0, false
}
