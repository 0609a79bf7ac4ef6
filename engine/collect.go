package engine

import "errors"

// Collector is a Sink that keeps everything in memory: for tests and for
// Go programs that replay small traces and look at the results directly.
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

// WantsAddresses is true: a Collector keeps the addresses table.
func (c *Collector) WantsAddresses() bool { return true }

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
