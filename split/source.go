package split

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpureplay/replay/trace"
)

// IsSplitDir reports whether dir is a split directory: a directory holding
// part=* directories with slice files.
func IsSplitDir(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(dir, "part=*", "slice=*.zst"))
	return len(m) > 0
}

// Source is partition i of a split directory: its slices' records in
// slice order, as one trace (a trace.Source, with trace.CapArena so
// that a replay decodes lists into its batches). Its header is the
// trace's (slice 0's).
type Source struct {
	files  []string
	split  trace.SplitHeader // slice 0's
	hdr    *trace.Header
	k      int // the slice being read
	f      *os.File
	r      *trace.BinaryReader
	seq    uint64 // the seq after the last instruction handed out
	any    bool
	closed bool
	// combined is the first slice file whose split combined its
	// accesses (Options.Combine), "" when none did.
	combined string
	// NextBlock's units: one, decoded on the caller's goroutine; or,
	// with WithDecodeAhead (ahead), the decoding goroutine's pipeline,
	// started by the first NextBlock, which then alone reads the slices
	// (k, f, r, seq, any) until Close.
	one   unit
	ahead bool
	pipe  *ahead
}

// OpenOption configures Open.
type OpenOption func(*Source)

// WithDecodeAhead has NextBlock's blocks and fold records decoded on a
// goroutine of the source's, a few ahead of the caller (on another core,
// while the caller applies the ones before), when on and some slice is
// not combined. Default off: they are decoded on the caller's goroutine,
// in NextBlock. Either way they are the same, in the same order.
//
// When every slice is combined (Combined), its units are decoded on the
// caller's goroutine whatever the option: they are rows alone and fold
// records, each applied in about the time it takes to decode, so that a
// unit's handoff between cores costs about what the overlap gains. On a
// machine whose cross-core round trip is 450-500 ns, a partition of a
// split of uniform at 10^8 lane-ops (8 of 8) took 46-49 ms inline and
// 52-54 ms ahead (best and median of 15), one of a 4096-bin histogram
// 35 ms and 38 ms; an uncombined slice's lanes leave the caller more to
// apply a unit, and ahead was as fast or faster (109 ms against 125).
func WithDecodeAhead(on bool) OpenOption {
	return func(s *Source) { s.ahead = on }
}

// Open checks partition part of parts of the split directory dir and
// returns its records. It reads only DIR/part=i: the slice files there must
// be slices 0…M-1 of one trace split into parts partitions, each once.
func Open(dir string, part, parts int, opts ...OpenOption) (*Source, error) {
	pd := PartDir(dir, part)
	st, err := os.Stat(pd)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: no directory of partition %d (has replay split run?)", pd, part)
		}
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", pd)
	}
	ents, err := os.ReadDir(pd)
	if err != nil {
		return nil, err
	}
	type slice struct {
		path string
		h    trace.SplitHeader
		hdr  *trace.Header
	}
	var got []slice
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "slice=") || !strings.HasSuffix(name, ".zst") {
			continue
		}
		path := filepath.Join(pd, name)
		h, hdr, err := readSplitHeader(path)
		if err != nil {
			return nil, err
		}
		if h.Part != part || h.Parts != parts {
			return nil, fmt.Errorf("%s is partition %d/%d, not %d/%d", path, h.Part, h.Parts, part, parts)
		}
		if k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "slice="), ".zst")); err != nil || k != h.Slice {
			return nil, fmt.Errorf("%s holds slice %d of %d: a file renamed? (slice K is slice=K.zst)", path, h.Slice, h.Slices)
		}
		got = append(got, slice{path, *h, hdr})
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("%s: no slice files (slice=K.zst)", pd)
	}
	slices.SortFunc(got, func(a, b slice) int { return a.h.Slice - b.h.Slice })
	first := got[0]
	m := first.h.Slices
	for _, s := range got[1:] {
		switch {
		case s.h.Trace() != first.h.Trace():
			return nil, fmt.Errorf("%s is a slice of another trace (%s) than %s (%s)", s.path, s.h.Trace(), first.path, first.h.Trace())
		case s.h.Slices != m:
			return nil, fmt.Errorf("%s is slice %d of %d, but %s is one of %d", s.path, s.h.Slice, s.h.Slices, first.path, m)
		case s.h.Chunks != first.h.Chunks:
			return nil, fmt.Errorf("%s says the trace has %d chunks, %s %d", s.path, s.h.Chunks, first.path, first.h.Chunks)
		case !slices.Equal(s.h.Lines, first.h.Lines):
			return nil, fmt.Errorf("%s has another partition map (%d lines) than %s (%d lines): slices of splits by other versions of replay?", s.path, len(s.h.Lines), first.path, len(first.h.Lines))
		}
	}
	seen := make([]string, m)
	for _, s := range got {
		if seen[s.h.Slice] != "" {
			return nil, fmt.Errorf("slice %d of %d is there twice: %s and %s", s.h.Slice, m, seen[s.h.Slice], s.path)
		}
		seen[s.h.Slice] = s.path
	}
	var missing []string
	for k, p := range seen {
		if p == "" {
			missing = append(missing, strconv.Itoa(k))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: slice %s of %d missing (has %s run for it?); have %d of them", pd, strings.Join(missing, ", "), m, "replay split", len(got))
	}
	for _, s := range got {
		if lo, hi := SliceRange(s.h.Chunks, s.h.Slice, m); s.h.FirstChunk != lo || s.h.EndChunk != hi {
			return nil, fmt.Errorf("%s holds chunks [%d, %d), but slice %d of %d is [%d, %d)", s.path, s.h.FirstChunk, s.h.EndChunk, s.h.Slice, m, lo, hi)
		}
	}
	hdr := *first.hdr
	hdr.PartitionMap = first.h.Lines // the lines the split sent where the map says
	src := &Source{split: first.h, hdr: &hdr}
	for _, o := range opts {
		o(src)
	}
	allCombined := true
	for _, s := range got {
		src.files = append(src.files, s.path)
		if s.h.Combined && src.combined == "" {
			src.combined = s.path
		}
		allCombined = allCombined && s.h.Combined
	}
	src.ahead = src.ahead && !allCombined
	return src, nil
}

// readSplitHeader reads a slice file's headers.
func readSplitHeader(path string) (*trace.SplitHeader, *trace.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	x, err := trace.OpenBinaryIndex(f, fi.Size(), trace.WithName(path))
	if err != nil {
		return nil, nil, err
	}
	if x.Split() == nil {
		return nil, nil, fmt.Errorf("%s is not a slice file of replay split (no split header)", path)
	}
	return x.Split(), x.Header(), nil
}

// Trace is the identity of the trace split (replay.trace).
func (s *Source) Trace() string { return s.split.Trace() }

// Name is the trace's file name, without its directory (replay.options).
func (s *Source) Name() string { return s.split.Name }

// DecodesAhead reports whether NextBlock's units are decoded on a
// goroutine of the source's (WithDecodeAhead, and some slice not
// combined).
func (s *Source) DecodesAhead() bool { return s.ahead }

// Combined returns the first slice file whose split combined its
// accesses (replay split -tables without a per-lane table), "" when none
// did: such a partition replays only on the block path, writing no
// per-lane table (CombineTables).
func (s *Source) Combined() string { return s.combined }

// Slices is how many slices the partition's records come in.
func (s *Source) Slices() int { return len(s.files) }

// Header is the trace's header, with the split's partition map
// (trace.Header.PartitionMap).
func (s *Source) Header() *trace.Header { return s.hdr }

// Next returns the next record.
func (s *Source) Next() (*trace.Inst, error) {
	in, _, err := s.next(nil, false)
	return in, err
}

// Caps is trace.CapArena|trace.CapBlock: the slices' readers decode lists
// into the caller's arena, and hand over their instructions a block at a
// time. A split file's records are not repeats of one another
// (docs/FORMAT.md, "Split files"), so it has no CapRepeat.
func (s *Source) Caps() trace.SourceCaps { return trace.CapArena | trace.CapBlock }

// NextBlock returns the next block of instructions, or the next directive,
// or io.EOF after the last slice's last record (trace.CapBlock). With
// WithDecodeAhead, the blocks and fold records are decoded on a goroutine
// of the source's, a few ahead of the caller.
func (s *Source) NextBlock() (*trace.Block, *trace.Inst, error) {
	if s.closed {
		return nil, nil, errors.New("split: source closed")
	}
	if !s.ahead {
		u := &s.one
		if err := s.decode(u); err != nil {
			return nil, nil, err
		}
		return u.blk, u.dir, nil
	}
	a := s.pipe
	if a == nil {
		a = s.startAhead()
	}
	if a.cur != nil {
		a.free <- a.cur // (free holds every unit: this never waits)
		a.cur = nil
	}
	if a.err != nil {
		return nil, nil, a.err
	}
	u := <-a.full
	if u.err != nil {
		a.err = u.err
		a.free <- u
		return nil, nil, u.err
	}
	a.cur = u
	return u.blk, u.dir, nil
}

// unit is what NextBlock hands over: a block (blk), or a directive (dir),
// or the error that ends the records (err, io.EOF after the last), in
// storage of its own, so that the goroutine of WithDecodeAhead decodes the
// next units while the caller applies this one.
type unit struct {
	blk  *trace.Block
	dir  *trace.Inst
	err  error
	b    trace.Block
	fold trace.Fold
	in   trace.Inst
	d    trace.Directive
	init trace.Init
	reg  trace.Region
	clu  trace.Cluster
}

// decode reads the next block or directive into u, from the current
// slice or the ones after it.
func (s *Source) decode(u *unit) error {
	u.blk, u.dir = nil, nil
	for {
		if err := s.reader(); err != nil {
			return err
		}
		b, in, err := s.r.NextBlockInto(&u.b, &u.fold)
		if err == io.EOF {
			s.nextSlice()
			continue
		}
		if err != nil {
			return err
		}
		if b != nil {
			if first := b.Insts[0].Seq; s.any && first < s.seq {
				return fmt.Errorf("%s: instruction %d after instruction %d of an earlier slice", s.files[s.k], first, s.seq-1)
			}
			s.seq, s.any = b.Insts[len(b.Insts)-1].Seq+1, true
			u.blk = b
			return nil
		}
		// A directive: the reader's but for its fold, copied.
		u.in, u.d = *in, trace.Directive{}
		if d := in.Dir; d != nil {
			switch {
			case d.Fold != nil:
				u.d.Fold = d.Fold // u.fold
			case d.Init != nil:
				data := append(u.init.Data[:0], d.Init.Data...)
				u.init = *d.Init
				u.init.Data = data
				u.d.Init = &u.init
			case d.Region != nil:
				u.reg = *d.Region
				u.d.Region = &u.reg
			case d.Cluster != nil:
				u.clu = *d.Cluster
				u.d.Cluster = &u.clu
			}
			u.in.Dir = &u.d
		}
		u.dir = &u.in
		return nil
	}
}

// aheadUnits is how many units WithDecodeAhead's goroutine may have
// decoded that the caller has not taken, a block of up to 1024
// instructions or a fold record of up to 65536 words each: enough to ride
// out the caller's slower stretches, few enough to stay in the caches.
const aheadUnits = 2

// ahead is the pipeline of WithDecodeAhead: its goroutine takes a unit
// from free, decodes into it and sends it on full, in trace order, until
// an error or io.EOF, which it sends too.
type ahead struct {
	full chan *unit
	free chan *unit
	done chan struct{}
	wg   sync.WaitGroup
	cur  *unit // the unit the caller holds
	err  error // sticky, once the caller took it
}

// startAhead starts the decoding goroutine: from then on it alone reads
// the slices, until it ends (at an error, io.EOF or Close).
func (s *Source) startAhead() *ahead {
	a := &ahead{full: make(chan *unit, aheadUnits), free: make(chan *unit, aheadUnits+1), done: make(chan struct{})}
	for range aheadUnits + 1 {
		a.free <- &unit{}
	}
	s.pipe = a
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			var u *unit
			select {
			case u = <-a.free:
			case <-a.done:
				return
			}
			u.err = s.decode(u)
			select {
			case a.full <- u:
			case <-a.done:
				return
			}
			if u.err != nil {
				return
			}
		}
	}()
	return a
}

// Repeats consumes none: Caps has no CapRepeat.
func (s *Source) Repeats(int) (int, int64, int64) { return 0, 0, 0 }

// NextInto is Next with the lists decoded into arena (trace.CapArena).
func (s *Source) NextInto(arena []uint64) (*trace.Inst, []uint64, error) {
	return s.next(arena, true)
}

func (s *Source) next(arena []uint64, into bool) (*trace.Inst, []uint64, error) {
	if s.pipe != nil {
		return nil, arena, errors.New("split: Next after NextBlock with WithDecodeAhead")
	}
	for {
		if err := s.reader(); err != nil {
			return nil, arena, err
		}
		var in *trace.Inst
		var err error
		if into {
			in, arena, err = s.r.NextInto(arena)
		} else {
			in, err = s.r.Next()
		}
		if err == io.EOF {
			s.nextSlice()
			continue
		}
		if err != nil {
			return nil, arena, err
		}
		if in.Dir == nil {
			if s.any && in.Seq < s.seq {
				return nil, arena, fmt.Errorf("%s: instruction %d after instruction %d of an earlier slice", s.files[s.k], in.Seq, s.seq-1)
			}
			if in.Part == nil {
				return nil, arena, fmt.Errorf("%s: instruction %d has no split fields", s.files[s.k], in.Seq)
			}
			s.seq, s.any = in.Seq+1, true
		}
		return in, arena, nil
	}
}

// reader makes s.r the reader of the current slice, opening its file
// if it is not open: io.EOF after the last slice.
func (s *Source) reader() error {
	switch {
	case s.closed:
		return errors.New("split: source closed")
	case s.r != nil:
		return nil
	case s.k == len(s.files):
		return io.EOF
	}
	return s.open()
}

// nextSlice closes the current slice's file, at its end, for the next.
func (s *Source) nextSlice() {
	s.r.Close()
	s.f.Close()
	s.r, s.f = nil, nil
	s.k++
}

// open opens slice s.k.
func (s *Source) open() error {
	path := s.files[s.k]
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	x, err := trace.OpenBinaryIndex(f, fi.Size(), trace.WithName(path))
	if err != nil {
		f.Close()
		return err
	}
	r, err := x.Reader(0, x.NumChunks())
	if err != nil {
		f.Close()
		return err
	}
	s.f, s.r = f, r
	return nil
}

// Close stops the reading and closes the file being read.
func (s *Source) Close() error {
	if a := s.pipe; a != nil && !s.closed {
		close(a.done)
		a.wg.Wait()
	}
	if s.r != nil {
		s.r.Close()
		s.f.Close()
		s.r, s.f = nil, nil
	}
	s.closed = true
	return nil
}
