package split

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpureplay/replay/engine"
	"github.com/gpureplay/replay/internal/outdir"
	"github.com/gpureplay/replay/internal/writeback"
	"github.com/gpureplay/replay/shard"
	"github.com/gpureplay/replay/trace"
)

// Options are what Split does.
type Options struct {
	Parts         int    // partitions, 1..shard.MaxPartitions
	Slice, Slices int    // slice Slice of Slices
	Out           string // the split directory: DIR/part=i/slice=K.zst
	// Combine folds the accesses of commuting operations to a word within
	// the slice into one (combine.go), for partition replays that write no
	// per-lane table: no results or addresses (CombineTables).
	Combine bool
	// Workers is how many parts of a combined slice (subSlices) are
	// routed at once, on goroutines of their own; 0 is GOMAXPROCS. The
	// files do not depend on it.
	Workers int
	// Sync makes a slice durable before it appears: each file is synced
	// (fsync) before its rename, and the partitions' directories after.
	// Without it the rename alone makes the slice appear whole or not at
	// all to every reader, a killed split included; a power loss before
	// the system writes the files back can leave a slice file short or
	// empty, which a partition replay refuses, naming it (its seek table
	// and checksums), so that its split task is run again. Intermediate
	// files of the kind are not synced by map-reduce systems either
	// (Spark's spark.shuffle.sync, "Whether to force outstanding writes
	// to disk", is false by default). The syncs cost a split task 7-9 ms
	// here, most of it waiting on the file system's journal.
	Sync bool
	// Interrupted, when not nil, is polled every few thousand records,
	// from every worker at once; when it returns true the split stops and
	// removes its files.
	Interrupted func() bool
}

// Summary is what a split did.
type Summary struct {
	FirstChunk, EndChunk, Chunks int
	Instructions                 uint64   // instructions of the slice
	Directives                   uint64   // directive records of the slice
	Records                      []uint64 // per partition: records written
	LaneOps                      []uint64 // per partition: lane-elements routed there
	Hot                          []engine.HotWord
	// Map is the partition map the split derived (PartitionMap) and its
	// files carry; SampleChunks the chunks it sampled.
	Map          []shard.LineOwner
	SampleChunks int
	// With Options.Combine: the lane-ops folded, the words their folds
	// came to, and the fold records that hold them.
	Folded, FoldWords, FoldRecords uint64
	Elapsed                        time.Duration
}

// CombineTables reports whether partition replays that write tables (as
// replay -tables names them) can replay a combined split (Options.Combine):
// when every one of them is memory, instructions or ops.
func CombineTables(tables []string) bool {
	for _, t := range tables {
		switch t {
		case "memory", "instructions", "ops":
			// The words' final values, and counts over an instruction's
			// lanes, which the split gives the row's partition.
		default:
			return false
		}
	}
	return len(tables) > 0
}

// SliceRange is slice k of m of c chunks: [⌊k·c/m⌋, ⌊(k+1)·c/m⌋).
func SliceRange(c, k, m int) (from, to int) {
	return int(int64(k) * int64(c) / int64(m)), int(int64(k+1) * int64(c) / int64(m))
}

// PartDir is partition i's directory in a split directory.
func PartDir(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("part=%d", i)) }

// SliceName is the file name of slice k in a partition directory.
func SliceName(k int) string { return fmt.Sprintf("slice=%d.zst", k) }

// tmpPrefix is the start of a temporary file's name of slice k.
func tmpPrefix(k int) string { return "." + SliceName(k) + ".tmp-" }

// Identity returns the identity of the binary trace at path
// (replay.trace): "xxh64:<16 hex digits> <bytes>", the hash being
// trace.BinaryIndex.Identity's (its header frame and seek table, not its
// every byte), and whether the file is a binary trace at all. It is what
// the split header of each of its slice files records, and what a replay
// of a partition of the trace itself records.
func Identity(path string) (id string, binary bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	if !fi.Mode().IsRegular() || !trace.IsBinaryAt(f) {
		return "", false, nil
	}
	x, err := trace.OpenBinaryIndex(f, fi.Size(), trace.WithName(filepath.Base(path)))
	if err != nil {
		return "", true, err
	}
	hash, err := x.Identity(fi.Size())
	if err != nil {
		return "", true, fmt.Errorf("%s: %w", path, err)
	}
	sh := trace.SplitHeader{TraceHash: hash, TraceSize: uint64(fi.Size())}
	return sh.Trace(), true, nil
}

// Split writes slice o.Slice of o.Slices of the binary trace at path to
// o.Out, one file per partition, whole or not at all.
func Split(path string, o Options) (*Summary, error) {
	start := time.Now()
	switch {
	case o.Parts < 1 || o.Parts > 1<<16:
		return nil, fmt.Errorf("split: %d partitions: want 1..65536", o.Parts)
	case o.Slices < 1 || o.Slice < 0 || o.Slice >= o.Slices:
		return nil, fmt.Errorf("split: slice %d of %d: want 0 <= K < M", o.Slice, o.Slices)
	case o.Out == "":
		return nil, errors.New("split: no output directory")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || !trace.IsBinaryAt(f) {
		return nil, fmt.Errorf("%s: not a binary trace file (replay asm turns a .tasm into one): split reads it through its seek table", path)
	}
	x, err := trace.OpenBinaryIndex(f, fi.Size(), trace.WithName(filepath.Base(path)))
	if err != nil {
		return nil, err
	}
	if x.Split() != nil {
		return nil, fmt.Errorf("%s: a split file already (partition %d/%d); split the trace it came from", path, x.Split().Part, x.Split().Parts)
	}
	hash, err := x.Identity(fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	from, to := SliceRange(x.NumChunks(), o.Slice, o.Slices)
	sum := &Summary{FirstChunk: from, EndChunk: to, Chunks: x.NumChunks(),
		Records: make([]uint64, o.Parts)}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	// The partitions' directories and temporary files are made while the
	// map is derived: their system calls take the time of a core that
	// the map's workers leave idle.
	var outs *outputs
	opened := make(chan error, 1)
	go func() {
		var err error
		outs, err = openOutputs(o)
		opened <- err
	}()
	pt, err := splitMap(x, o, sum)
	if oerr := <-opened; err != nil || oerr != nil {
		if oerr == nil {
			err = errors.Join(err, outs.abort())
		}
		return nil, errors.Join(err, oerr)
	}
	var lines []trace.SplitLine
	for _, l := range sum.Map {
		lines = append(lines, trace.SplitLine{Key: l.Key, Line: l.Line, Part: l.Part})
	}
	hdr := &trace.Header{AddressOnly: x.Header().AddressOnly}
	if o.Slice == 0 {
		hdr = x.Header()
	}
	sh := trace.SplitHeader{Parts: o.Parts, Slice: o.Slice, Slices: o.Slices,
		TraceHash: hash, TraceSize: uint64(fi.Size()), FirstChunk: from, EndChunk: to, Chunks: x.NumChunks(),
		Name: filepath.Base(path), Lines: lines, Combined: o.Combine}
	if err := outs.writers(hdr, sh); err != nil {
		return nil, errors.Join(err, outs.abort())
	}
	if err := routeParts(x, from, to, o, &pt, hdr, sh, outs, sum); err != nil {
		return nil, errors.Join(err, outs.abort())
	}
	if err := outs.commit(); err != nil {
		return nil, errors.Join(err, outs.abort())
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// splitMap derives the partition map of the split (sum.Map,
// sum.SampleChunks) and its Partitioner.
func splitMap(x *trace.BinaryIndex, o Options, sum *Summary) (shard.Partitioner, error) {
	var err error
	if sum.Map, sum.SampleChunks, err = PartitionMap(x, o.Parts, o.Workers); err != nil {
		return shard.Partitioner{}, err
	}
	return shard.NewPartitionerMap(o.Parts, sum.Map)
}

// subSlices is how many parts a combined slice of chunks is cut into,
// each routed as a slice of its own (its router, its combiner, a fold
// flush at its end), on a goroutine of its own when Options.Workers
// allows, and its files' records appended to the part's before it, in
// order (trace.WithHeldChunks): a combined split task on two cores
// routes the slice in less time than on one. More parts would use
// more cores, but each part's end flushes its folds: a scattered trace's
// fold words (one a word its part touched) grow with the parts. An
// uncombined slice is one part: its time is in writing its records,
// which two parts do not share, and the second part's are written twice.
const subSlices = 2

// parts is how many parts (subRange) the chunks [from, to) are cut into.
func parts(from, to int, combine bool) int {
	if !combine {
		return 1
	}
	return min(subSlices, max(to-from, 1))
}

// subRange is part j of n of the chunks [from, to): SliceRange's cut.
func subRange(from, to, j, n int) (int, int) {
	a, b := SliceRange(to-from, j, n)
	return from + a, from + b
}

// routeParts routes the chunks [from, to) to outs, as parts (subRange),
// with up to o.Workers at once: part 0 to outs, each later part to
// writers that hold its chunks until outs appends them, in order. Each
// part's router knows the regions of the header and of the directives
// of the parts before it: the files are those of parts routed one after
// another. A part routed at once with an earlier one that declares a
// region (rare) is routed again, after it.
func routeParts(x *trace.BinaryIndex, from, to int, o Options, pt *shard.Partitioner, hdr *trace.Header, sh trace.SplitHeader, outs *outputs, sum *Summary) error {
	n := parts(from, to, o.Combine)
	workers := o.Workers
	type part struct {
		outs  *outputs
		sum   Summary
		r     routed
		known int // the earlier parts' regions its router knew
		err   error
	}
	parts := make([]part, n)
	defer func() {
		for j := range parts {
			if h := parts[j].outs; j > 0 && h != nil {
				h.closeHeld()
			}
			if cb := parts[j].r.cb; cb != nil {
				cb.release()
			}
		}
	}()
	var stop atomic.Bool
	run := func(j int, known []trace.Region) {
		p := &parts[j]
		p.sum = Summary{Records: make([]uint64, o.Parts)}
		p.known = len(known)
		switch {
		case j == 0:
			p.outs = outs
		default:
			if p.outs != nil {
				p.outs.closeHeld() // routed again: a new held file
			}
			if p.outs, p.err = heldOutputs(o, hdr, sh, outs); p.err != nil {
				stop.Store(true)
				return
			}
		}
		a, b := subRange(from, to, j, n)
		if p.r, p.err = route(x, a, b, o, pt, known, p.outs, &p.sum, &stop); p.err != nil {
			stop.Store(true)
		}
	}
	// Each part at once with the others (up to workers), knowing the
	// header's regions only; then, in order, again any part that should
	// have known regions of the parts before it.
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(workers, 1))
	for j := range n {
		if workers <= 1 {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			run(j, nil)
		})
	}
	wg.Wait()
	var known []trace.Region
	for j := range parts {
		p := &parts[j]
		if p.err == nil && p.outs != nil && p.known == len(known) {
			known = append(known, p.r.regions...)
			continue
		}
		if p.err != nil {
			if errors.Is(p.err, errStopped) {
				continue // another part failed
			}
			return p.err
		}
		run(j, known)
		if p.err != nil {
			return p.err
		}
		known = append(known, p.r.regions...)
	}
	for j := range parts {
		if err := parts[j].err; err != nil {
			return err
		}
	}
	// The folds pending at each part's end: written there, or, when the
	// next part met no flush point (its records are rows of folds of the
	// same operation, and .cluster directives), taken into the next
	// part's, to be written at its end: a scattered trace's words once a
	// slice, not once a part. The last part's go to outs once every
	// part's records are there: the same place, not held.
	for j := range parts {
		// Nothing else runs now: a large window's flush takes the cores
		// (flushWindow).
		parts[j].r.cb.flushWorkers = workers
	}
	for j := range parts[:n-1] {
		p := &parts[j]
		if parts[j+1].r.cb.canTake(p.r.cb) {
			if err := parts[j+1].r.cb.take(p.r.cb, pt); err != nil {
				return err
			}
		} else if err := p.r.cb.flush(p.outs, pt, &p.sum); err != nil {
			return err
		}
	}
	for _, p := range parts[1:] {
		for i, w := range outs.w {
			if err := w.Append(p.outs.w[i]); err != nil {
				return fmt.Errorf("%s: %w", outs.tmp[i], err)
			}
		}
	}
	if last := &parts[n-1]; last.r.cb != nil {
		if err := last.r.cb.flush(outs, pt, &last.sum); err != nil {
			return err
		}
	}
	for j := range parts {
		p := &parts[j]
		cb, s := p.r.cb, &p.sum
		s.Folded, s.FoldWords, s.FoldRecords = cb.lanes, cb.words, cb.records
		s.LaneOps = p.r.rt.LaneOps()
		for i, n := range cb.laneOps {
			s.LaneOps[i] += n
		}
		s.Hot = p.r.rt.HotWords(8)
	}
	var hot []engine.HotWord
	for j := range parts {
		s := &parts[j].sum
		sum.Instructions += s.Instructions
		sum.Directives += s.Directives
		sum.Folded += s.Folded
		sum.FoldWords += s.FoldWords
		sum.FoldRecords += s.FoldRecords
		if sum.LaneOps == nil {
			sum.LaneOps = make([]uint64, o.Parts)
		}
		for i := range o.Parts {
			sum.Records[i] += s.Records[i]
			sum.LaneOps[i] += s.LaneOps[i]
		}
		hot = append(hot, s.Hot...)
	}
	sum.Hot = engine.MergeHotWords(hot, 8)
	return nil
}

// RowWindow is how many seqs a window of instructions rows holds: the
// rows of window w, seqs [w·RowWindow, (w+1)·RowWindow), are one
// partition's to write (RowPartition), whatever slices they are in. It is
// a whole replay's instructions row group (columnar.DefaultBatchRows, in
// which a partition replay of a split directory cuts its instructions
// table: cmd/replay's TestRowWindowIsRowGroup), so that every row group of
// the merged table is one partition's, which replay merge copies as it
// is, byte for byte, rather than decoding its rows and encoding them
// again.
const RowWindow = 1 << 16

// RowPartition is the partition of parts that writes the instructions row
// of the instruction seq: its window's, ⌊seq/RowWindow⌋ mod parts.
func RowPartition(seq uint64, parts int) int { return int(seq / RowWindow % uint64(parts)) }

// errStopped is a part's error when another part's stopped the split.
var errStopped = errors.New("split: stopped")

// routed is what route leaves: the regions of the directives it read,
// its router, and its combiner with the folds pending at the part's end,
// which routeParts flushes.
type routed struct {
	regions []trace.Region
	rt      *engine.Router
	cb      *combiner
}

// route reads chunks [from, to) and writes each record to the partitions
// that own it, its router knowing the header's regions and known.
func route(x *trace.BinaryIndex, from, to int, o Options, pt *shard.Partitioner, known []trace.Region, outs *outputs, sum *Summary, stop *atomic.Bool) (routed, error) {
	var nothing routed
	src, err := x.Reader(from, to)
	if err != nil {
		return nothing, err
	}
	defer src.Close()
	rt := engine.NewRouterWith(x.Header(), o.Parts, *pt)
	for _, reg := range known {
		rt.Region(reg)
	}
	rt.SetFold(o.Combine)
	cb := newCombiner(o.Parts)
	var regions []trace.Region
	var part trace.PartInfo
	var r engine.Routed
	for n := 0; ; n++ {
		if n&4095 == 4095 {
			if o.Interrupted != nil && o.Interrupted() {
				stop.Store(true)
				return nothing, errors.New("interrupted")
			}
			if stop.Load() {
				return nothing, errStopped
			}
		}
		in, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nothing, err
		}
		if in.Dir != nil {
			sum.Directives++
			if in.Dir.Cluster == nil {
				// Folds apply before it: an .init writes words, a
				// .region changes which accesses fault.
				cb.barriers++
				if err := cb.flush(outs, pt, sum); err != nil {
					return nothing, err
				}
			}
			if reg := in.Dir.Region; reg != nil {
				rt.Region(*reg)
				regions = append(regions, *reg)
			}
			for i, w := range outs.w {
				if err := w.Write(in); err != nil {
					return nothing, fmt.Errorf("%s: %w", outs.tmp[i], err)
				}
				sum.Records[i]++
			}
			continue
		}
		sum.Instructions++
		if err := rt.RouteInto(in, &r); err != nil {
			return nothing, err
		}
		// The files' records are the reader's instruction with their
		// partition's mask and part (outputs.write), its own put back
		// before the next: a copy of it a record went through the stack
		// in loads wider than the reader's stores, which the processor
		// cannot forward.
		mask, inPart := in.Mask, in.Part
		in.Part = &part
		row := RowPartition(in.Seq, o.Parts) // invariant 2: a row window's rows are one partition's
		if r.Fold.Valid() {
			// Its lanes fold; the row alone goes out now.
			if cb.pending() && !cb.op.SameOp(r.Fold) {
				cb.barriers++
				if err := cb.flush(outs, pt, sum); err != nil {
					return nothing, err
				}
			}
			addrs, vals := rt.Folds()
			if err := cb.add(in, &r.Fold, addrs, vals); err != nil {
				return nothing, err
			}
			if cb.full() {
				cb.barriers++
				if err := cb.flush(outs, pt, sum); err != nil {
					return nothing, err
				}
			}
			if err := outs.write(row, 0, row, in, &r, sum); err != nil {
				return nothing, err
			}
			in.Mask, in.Part = mask, inPart
			continue
		}
		cb.barriers++ // what is pending, or a part's before, applies first
		if cb.pending() {
			if err := cb.flush(outs, pt, sum); err != nil {
				return nothing, err
			}
		}
		hasRow := false
		for _, p := range r.Parts {
			hasRow = hasRow || p == row
			if err := outs.write(p, r.Owners[p], row, in, &r, sum); err != nil {
				return nothing, err
			}
		}
		if !hasRow {
			// The row's partition has none of its lanes: the row alone.
			if err := outs.write(row, 0, row, in, &r, sum); err != nil {
				return nothing, err
			}
		}
		in.Mask, in.Part = mask, inPart
	}
	return routed{regions, rt, cb}, nil
}

// write writes instruction in to partition p's file with the lanes of mask,
// and the row when p is the row's partition.
func (o *outputs) write(p int, mask uint32, row int, in *trace.Inst, r *engine.Routed, sum *Summary) error {
	*in.Part = trace.PartInfo{Lanes: r.Lanes, Row: p == row}
	if p == row {
		in.Part.Addresses, in.Part.MaxConflict, in.Part.Sectors = r.Addresses, r.MaxConflict, r.Sectors
	}
	in.Mask = mask
	sum.Records[p]++
	if err := o.w[p].Write(in); err != nil {
		return fmt.Errorf("%s: %w", o.tmp[p], err)
	}
	return nil
}

// outputs are the temporary files of a slice, one per partition.
type outputs struct {
	dirs, tmp, final []string
	f                []*os.File
	bw               []*bufio.Writer
	w                []*trace.BinaryWriter
	// held and heldName: a later part's file of held chunks
	// (heldOutputs), its name until it is unlinked.
	held     *os.File
	heldName string
	// sync is Options.Sync: the files synced at commit, their bytes
	// handed to the disk as they are written (writeback) meanwhile.
	sync bool
}

// openOutputs makes each partition's directory, removes the leftovers
// of an earlier split of this slice, and opens its temporary file; the
// files have no writers yet (writers).
func openOutputs(o Options) (*outputs, error) {
	outs := &outputs{sync: o.Sync}
	suffix := tmpSuffix()
	for i := range o.Parts {
		dir := PartDir(o.Out, i)
		made, err := makeDir(dir)
		if err != nil {
			return nil, errors.Join(err, outs.abort())
		}
		if !made { // a directory just made holds no leftovers
			if err := removeLeftovers(dir, o.Slice); err != nil {
				return nil, errors.Join(err, outs.abort())
			}
		}
		tmp := filepath.Join(dir, tmpPrefix(o.Slice)+suffix)
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, errors.Join(err, outs.abort())
		}
		outs.dirs = append(outs.dirs, dir)
		outs.tmp = append(outs.tmp, tmp)
		outs.final = append(outs.final, filepath.Join(dir, SliceName(o.Slice)))
		outs.f = append(outs.f, f)
	}
	return outs, nil
}

// writers gives each file of openOutputs its writer, whose header it
// writes (its split header sh, of partition i).
func (o *outputs) writers(hdr *trace.Header, sh trace.SplitHeader) error {
	for i, f := range o.f {
		var fw io.Writer = f
		if o.sync { // written back early, so that the fsync finds little left
			fw = writeback.New(f, 1<<20)
		}
		bw := bufio.NewWriterSize(fw, 256<<10)
		o.bw = append(o.bw, bw)
		sh.Part = i
		w, err := trace.NewBinaryWriter(bw, hdr, trace.WithSplit(sh), trace.WithUncompressed())
		if err != nil {
			return err
		}
		o.w = append(o.w, w)
	}
	return nil
}

// heldOutputs are writers of a later part of the slice than outs's
// (routeParts): one a partition, holding its chunks for outs's
// (trace.WithHeldChunks) in one temporary file, its errors naming outs's
// files. The file is named as outs's are, in partition 0's directory,
// and unlinked at once where an open file can be (so that a killed split
// leaves nothing of it), else removed by closeHeld, or by a rerun's
// removeLeftovers.
func heldOutputs(o Options, hdr *trace.Header, sh trace.SplitHeader, outs *outputs) (*outputs, error) {
	h := &outputs{tmp: outs.tmp}
	name := filepath.Join(PartDir(o.Out, 0), tmpPrefix(o.Slice)+tmpSuffix())
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	h.held, h.heldName = f, name
	if unlinkOpen {
		if err := os.Remove(name); err != nil {
			h.closeHeld()
			return nil, err
		}
		h.heldName = ""
	}
	hf := trace.NewHeldFile(f)
	for i := range o.Parts {
		sh.Part = i
		w, err := trace.NewBinaryWriter(nil, hdr, trace.WithSplit(sh), trace.WithUncompressed(), trace.WithHeldChunks(hf))
		if err != nil {
			h.closeHeld()
			return nil, err
		}
		h.w = append(h.w, w)
	}
	return h, nil
}

// unlinkOpen: the system removes an open file's name and keeps its data
// until its last descriptor closes (not Windows).
const unlinkOpen = runtime.GOOS != "windows"

// closeHeld closes and removes the held file of heldOutputs.
func (o *outputs) closeHeld() {
	if o.held != nil {
		o.held.Close()
		o.held = nil
	}
	if o.heldName != "" {
		os.Remove(o.heldName)
		o.heldName = ""
	}
}

// tmpSuffix is the end of a temporary file's name: 16 random hex
// digits, which O_EXCL keeps from being another's (math/rand/v2's
// generator, seeded by the runtime: crypto/rand's first read took
// 0.5 ms of a split task's CPU).
func tmpSuffix() string {
	var rnd [8]byte
	binary.LittleEndian.PutUint64(rnd[:], rand.Uint64())
	return hex.EncodeToString(rnd[:])
}

// makeDir makes directory dir and the directories above it that are
// missing, and reports whether it made dir: one mkdir where only dir is
// missing, not MkdirAll's stat of each.
func makeDir(dir string) (made bool, err error) {
	err = os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return false, err
		}
		if err = os.Mkdir(dir, 0o755); err == nil {
			return true, nil
		}
	}
	if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
		return false, nil // there already
	}
	return false, err
}

// removeLeftovers removes the temporary files an earlier split of slice k
// left in dir (it was killed): only names of that form.
func removeLeftovers(dir string, k int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	prefix := tmpPrefix(k)
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok && len(rest) == 16 && isHex(rest) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// commit closes every temporary file and renames each to its slice's
// name. With sync (Options.Sync) it syncs the files first, syncFiles at
// once (their syncs wait for the disk together), and the directories
// after the renames, syncFiles at once too.
func (o *outputs) commit() error {
	if o.sync {
		defer outdir.SyncThreads(min(syncFiles, len(o.w)))()
	}
	errs := make([]error, len(o.w))
	each(len(o.w), func(i int) { errs[i] = o.close(i) })
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", o.tmp[i], err)
		}
	}
	for i := range o.tmp {
		if err := os.Rename(o.tmp[i], o.final[i]); err != nil {
			return err
		}
		o.tmp[i] = ""
	}
	if o.sync {
		each(len(o.dirs), func(i int) { outdir.Sync(o.dirs[i]) })
	}
	return nil
}

// syncFiles is how many files or directories commit syncs at once: each
// sync holds a thread.
const syncFiles = 16

// each calls f(i) for every i < n, on syncFiles goroutines at most.
func each(n int, f func(int)) {
	var wg sync.WaitGroup
	for g := range min(syncFiles, n) {
		wg.Go(func() {
			for i := g; i < n; i += syncFiles {
				f(i)
			}
		})
	}
	wg.Wait()
}

// close closes temporary file i's writer, flushes it, syncs it (with
// Options.Sync) and closes the file.
func (o *outputs) close(i int) error {
	if err := o.w[i].Close(); err != nil {
		return err
	}
	if err := o.bw[i].Flush(); err != nil {
		return err
	}
	if o.sync {
		if err := o.f[i].Sync(); err != nil {
			return err
		}
	}
	err := o.f[i].Close()
	o.f[i] = nil
	return err
}

// abort closes and removes the temporary files still there.
func (o *outputs) abort() error {
	var errs []error
	for i, f := range o.f {
		if f != nil {
			f.Close()
		}
		if i < len(o.tmp) && o.tmp[i] != "" {
			if err := os.Remove(o.tmp[i]); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
