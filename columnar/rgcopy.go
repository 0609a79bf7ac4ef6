package columnar

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpureplay/replay/trace"
)

// Row groups a merge copies. A partition of a split trace owns whole
// slices' instructions rows (split/doc.go): with M = n slices, one range
// of seqs. Written with WithSeqRowGroups(DefaultBatchRows), its
// instructions file's row groups are the merged file's windows of seqs,
// [k·64 Ki, (k+1)·64 Ki), and a window whose rows one partition alone
// has is, byte for byte, the merged file's row group: the same rows,
// encoded by the same encoders (a page's bytes are a function of its
// rows, and of the column's state of pages stored raw, which a copy
// requires to be none: copyRowGroup). Merge then copies the row group's
// column chunks and their footer entries (offsets moved) rather than
// decoding its rows and encoding them again, and adds the ops totals
// the partition recorded for it (MetaRowGroups): a sum of
// per-instruction maxima does not combine across partitions, but a row
// group's totals are its rows', whoever wrote them.

// MetaRowGroups is the key under which a Parquet instructions file
// written with [WithSeqRowGroups] records its row groups' layout and
// each one's ops totals (JSON: rowGroupsMeta), for replay merge.
const MetaRowGroups = "replay.row_groups"

// rowGroupsMeta is MetaRowGroups' value.
type rowGroupsMeta struct {
	SeqRows     int `json:"seq_rows"`     // WithSeqRowGroups' n
	StoredBelow int `json:"stored_below"` // the writer's storedPageBytes
	// Ops is each row group's ops totals, in row group order; nil when
	// the ops table was not written.
	Ops [][]rowGroupOp `json:"ops"`
}

// rowGroupOp is one ops row of a row group's rows, as the ops table
// has it.
type rowGroupOp struct {
	Dialect      string `json:"dialect"`
	Op           string `json:"op"`
	Type         string `json:"type"`
	Space        string `json:"space"`
	Instructions uint64 `json:"instructions"`
	Lanes        uint64 `json:"lanes"`
	Faults       uint64 `json:"faults"`
	MaxConflict  uint32 `json:"max_conflict"`
	ConflictSum  uint64 `json:"conflict_sum"`
	Sectors      uint64 `json:"sectors"`
}

// add adds b's totals to a.
func (a *opAgg) add(b *opAgg) {
	a.instructions += b.instructions
	a.lanes += b.lanes
	a.faults += b.faults
	a.conflictSum += b.conflictSum
	a.maxConflict = max(a.maxConflict, b.maxConflict)
	a.sectors += b.sectors
}

// foldBatchOps ends the ops totals of the instructions batch being
// handed over (WithSeqRowGroups, with the ops table: the memos' totals
// are the batch's, batchOps): it records them as its row group's and
// adds them to the writer's, then starts the next batch's at zero.
func (w *Writer) foldBatchOps() {
	var rg []rowGroupOp
	for k, a := range w.batchOps {
		if a.instructions == 0 {
			continue
		}
		rg = append(rg, rowGroupOp{Dialect: k.dialect.String(), Op: k.op.String(), Type: k.typ.String(),
			Space: w.spaceName(k.space), Instructions: a.instructions, Lanes: a.lanes, Faults: a.faults,
			MaxConflict: a.maxConflict, ConflictSum: a.conflictSum, Sectors: a.sectors})
		w.ops[k].add(a)
		*a = opAgg{}
	}
	slices.SortFunc(rg, func(a, b rowGroupOp) int {
		return cmp.Or(strings.Compare(a.Dialect, b.Dialect), strings.Compare(a.Op, b.Op),
			strings.Compare(a.Type, b.Type), strings.Compare(a.Space, b.Space))
	})
	w.rgOps = append(w.rgOps, rg)
}

// recordRowGroups puts MetaRowGroups into t's Parquet files' footers,
// once its last batch is handed over.
func (w *Writer) recordRowGroups(t *table) error {
	m := rowGroupsMeta{SeqRows: w.opt.seqRowGroups, StoredBelow: w.opt.storedPageBytes, Ops: w.rgOps}
	if w.batchOps != nil && m.Ops == nil {
		m.Ops = [][]rowGroupOp{} // the ops table is written: no row groups, not no totals
	}
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	for _, o := range t.outs {
		if pw, ok := o.w.(*parquetWriter); ok {
			pw.kv = append(pw.kv, [2]string{MetaRowGroups, string(v)})
		}
	}
	return nil
}

// parseOpKey is the ops key of an ops row's strings.
func parseOpKey(r *rowGroupOp) (opKey, bool) {
	var k opKey
	var ok1, ok2, ok3, ok4 bool
	for d := trace.Dialect(1); d != 0 && !strings.HasPrefix(d.String(), "Dialect("); d++ {
		if d.String() == r.Dialect {
			k.dialect, ok1 = d, true
			break
		}
	}
	for o := trace.Op(1); o != 0 && !strings.HasPrefix(o.String(), "Op("); o++ {
		if o.String() == r.Op {
			k.op, ok2 = o, true
			break
		}
	}
	k.typ, ok3 = trace.ParseType(r.Type)
	k.space, ok4 = trace.ParseSpace(r.Space)
	return k, ok1 && ok2 && ok3 && ok4
}

// copyPossible reports whether the instructions table takes row groups
// copied from partitions' files (copyRowGroup): it is written to one
// Parquet file alone, in batches of seqRows, its pages stored raw below
// storedBelow bytes, as the partitions' files were.
func (w *Writer) copyPossible(seqRows, storedBelow int) bool {
	t := w.tables[tInstructions]
	if t == nil || len(t.outs) != 1 || t.spec.overlap || w.opt.seqRowGroups != 0 {
		return false
	}
	_, ok := t.outs[0].w.(*parquetWriter)
	return ok && seqRows == w.opt.batchRows && storedBelow == w.opt.storedPageBytes
}

// copyRowGroup writes rg, a row group of a partition's instructions file,
// as the instructions file's next row group, its bytes as they are, and
// adds its ops totals. It writes nothing and returns false when those
// bytes need not be the ones the Writer would encode: the table's batch
// holds rows, or a column is in the state a page stored raw leaves
// (parquetWriter.stored), which rg's pages, compressed from none
// (rowGroupCopy.clean), were not encoded in. The table's pipeline is
// idle first (its batches back), so that its file is this goroutine's.
func (w *Writer) copyRowGroup(rg *rowGroupCopy) (bool, error) {
	if err := w.check(); err != nil {
		return false, err
	}
	t := w.tables[tInstructions]
	if w.traceDone || !w.copyPossible(w.opt.batchRows, w.opt.storedPageBytes) || t.b.rows != 0 {
		return false, nil
	}
	if w.tables[tOps] != nil && rg.ops == nil {
		return false, nil
	}
	keys := make([]opKey, len(rg.ops))
	for i := range rg.ops {
		k, ok := parseOpKey(&rg.ops[i])
		if !ok {
			return false, fmt.Errorf("%s: %s: row group %d: ops row %q %q %q %q is not one replay writes", rg.path, MetaRowGroups, rg.rg,
				rg.ops[i].Dialect, rg.ops[i].Op, rg.ops[i].Type, rg.ops[i].Space)
		}
		keys[i] = k
	}
	var held [maxBatches]*batch
	for i := range t.nb - 1 {
		held[i] = <-t.free
	}
	for _, b := range held[:t.nb-1] {
		t.free <- b
	}
	if err := t.pipe.error(); err != nil {
		return false, w.fail(err)
	}
	pw := t.outs[0].w.(*parquetWriter)
	if slices.ContainsFunc(pw.stored[0], func(s int) bool { return s != 0 }) {
		return false, nil
	}
	if err := pw.writeCopy(rg); err != nil {
		return false, w.fail(t.outs[0].wrap(err))
	}
	if w.opt.copied != nil {
		*w.opt.copied++
	}
	if w.tables[tOps] != nil {
		for i, k := range keys {
			a := w.ops[k]
			if a == nil {
				a = new(opAgg)
				w.ops[k] = a
			}
			r := &rg.ops[i]
			a.add(&opAgg{instructions: r.Instructions, lanes: r.Lanes, faults: r.Faults,
				maxConflict: r.MaxConflict, conflictSum: r.ConflictSum, sectors: r.Sectors})
		}
	}
	return true, nil
}

// writeCopy writes rg's column chunks as the file's next row group.
func (p *parquetWriter) writeCopy(rg *rowGroupCopy) error {
	shift := p.sink.Tell() - rg.start
	if _, err := p.sink.Write(rg.bytes); err != nil {
		return err
	}
	m := rowGroupMeta{chunks: slices.Clone(rg.chunks), rows: rg.rows, ordinal: int16(len(p.rgs))}
	for i := range m.chunks {
		c := &m.chunks[i]
		c.dataOffset += shift
		if c.dictOffset > 0 {
			c.dictOffset += shift
		}
		c.enc = pqPlain
		if p.encs[i] == encDelta {
			c.enc = pqDelta
		}
	}
	p.rgs = append(p.rgs, m)
	return nil
}

// rowGroupCopy is a row group of a partition's instructions file, read
// to be copied: its column chunks' bytes and footer entries.
type rowGroupCopy struct {
	path   string
	rg     int    // its index in the file
	first  uint64 // its first seq
	rows   int64
	start  int64  // the file offset of bytes
	bytes  []byte // its column chunks, back to back
	words  []uint64
	chunks []chunkMeta // offsets in the partition's file
	ops    []rowGroupOp
}

// copyPlan is which row groups of each partition's instructions file a
// merge copies (planCopies): plan[i][rg], with their ops totals.
type copyPlan struct {
	copy [][]bool
	ops  [][][]rowGroupOp
	// storedBelow is the partitions' writers' storedPageBytes.
	storedBelow int
}

// planCopies finds the row groups a merge into w copies: those of a
// window of seqs (w's batch rows) whose rows are its every seq, up to the
// last seq of all, and that no other partition has a row in, from the
// footers alone (each row group's seq statistics), of partitions whose
// files record MetaRowGroups as w encodes. nil: none.
func planCopies(w *Writer, pfs []*pqFile) *copyPlan {
	if w == nil {
		return nil
	}
	spec := &specs[tInstructions]
	type span struct {
		part     int
		lo, hi   uint64 // seqs
		rg       int
		rows     int64
		inWindow bool
	}
	var spans []span
	var metas []rowGroupsMeta
	var last uint64
	for i, pf := range pfs {
		if pf == nil || len(pf.leaves) != spec.schema.NumFields() {
			return nil
		}
		for k, l := range pf.leaves {
			f := spec.schema.Field(k)
			if l.name != f.Name || l.dt == nil || !arrow.TypeEqual(l.dt, f.Type) {
				return nil
			}
		}
		var m rowGroupsMeta
		v := ""
		for _, kv := range pf.kv {
			if kv[0] == MetaRowGroups {
				v = kv[1]
			}
		}
		if v == "" || json.Unmarshal([]byte(v), &m) != nil || !w.copyPossible(m.SeqRows, m.StoredBelow) ||
			(w.tables[tOps] != nil && len(m.Ops) != len(pf.rgs)) {
			return nil
		}
		metas = append(metas, m)
		for rg := range pf.rgs {
			g := &pf.rgs[rg]
			if g.rows == 0 {
				continue
			}
			st := &g.chunks[0].stats // seq
			if !st.set || !st.hasMin || !st.hasMax || len(st.min) != 8 || len(st.max) != 8 {
				return nil
			}
			lo, hi := binary.LittleEndian.Uint64(st.min), binary.LittleEndian.Uint64(st.max)
			if hi < lo {
				return nil
			}
			a := uint64(m.SeqRows)
			spans = append(spans, span{part: i, lo: lo, hi: hi, rg: rg, rows: g.rows, inWindow: lo/a == hi/a})
			last = max(last, hi)
		}
	}
	a := uint64(w.opt.batchRows)
	p := &copyPlan{copy: make([][]bool, len(pfs)), ops: make([][][]rowGroupOp, len(pfs)), storedBelow: w.opt.storedPageBytes}
	any := false
	for i, s := range spans {
		// Every seq of its window, up to the last of all: rows as many
		// as its seqs (a partition's are increasing, each once).
		if !s.inWindow || s.lo%a != 0 || uint64(s.rows) != s.hi-s.lo+1 || uint64(s.rows) != a && s.hi != last {
			continue
		}
		alone := true
		for j, o := range spans {
			if j != i && o.part != s.part && o.lo <= s.hi && o.hi >= s.lo {
				alone = false
				break
			}
		}
		if !alone {
			continue
		}
		if p.copy[s.part] == nil {
			p.copy[s.part] = make([]bool, len(pfs[s.part].rgs))
			p.ops[s.part] = metas[s.part].Ops
		}
		p.copy[s.part][s.rg] = true
		any = true
	}
	if !any {
		return nil
	}
	return p
}

// readCopy reads row group rg of the file to be copied (storage from
// pool): nil when it is not one a copy may take, its column chunks not
// back to back in column order, or a page of more than storedBelow bytes
// stored raw or compressed by less than a sixteenth (worthCompressing),
// which a column's state, not its rows, may have made so; the row group
// is then decoded.
func (pf *pqFile) readCopy(rg int, storedBelow int, pool *wordPool) (*rowGroupCopy, error) {
	g := &pf.rgs[rg]
	cp := &rowGroupCopy{path: pf.path, rg: rg, rows: g.rows, chunks: make([]chunkMeta, len(g.chunks))}
	var end int64
	for k := range g.chunks {
		c := &g.chunks[k]
		start := c.dataOffset
		if c.dictOffset > 0 && c.dictOffset < start {
			start = c.dictOffset
		}
		if c.external || c.codec != codecZstd || c.values != g.rows || !c.stats.set || c.size <= 0 ||
			start < 4 || start > pf.size || c.size > pf.size-start {
			return nil, nil
		}
		if k == 0 {
			cp.start = start
		} else if start != end {
			return nil, nil
		}
		end = start + c.size
	}
	n := end - cp.start
	cp.words = pool.get((n+7)/8, false)
	if cp.words == nil {
		cp.words = pool.alloc((n + 7) / 8)
	}
	cp.bytes = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(cp.words))), n)
	if _, err := pf.f.ReadAt(cp.bytes, cp.start); err != nil {
		pool.put(cp.words)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	at := cp.start
	buf := cp.bytes
	for k := range g.chunks {
		c := &g.chunks[k]
		m := &cp.chunks[k]
		m.values, m.raw, m.size, m.stats = c.values, c.raw, c.size, c.stats
		chunk := buf[:c.size]
		buf = buf[c.size:]
		off := at
		at += c.size
		for len(chunk) > 0 {
			r := &thriftReader{b: chunk}
			h := readPageHeader(r)
			if r.err != nil || h.size < 0 || int(h.size) > len(chunk)-r.off || h.raw < 0 {
				pool.put(cp.words)
				return nil, nil
			}
			switch {
			case h.typ == pqDictPage && m.dataPages == 0:
				m.dictOffset, m.hasDict = off, true
				m.dictPages++
			case h.typ == pqDataPage:
				if m.dataPages == 0 {
					m.dataOffset = off
				}
				m.dataPages++
				m.dataEncoding = h.enc
				if int(h.raw) > storedBelow && int(h.size) >= int(h.raw)-int(h.raw)/16 {
					pool.put(cp.words)
					return nil, nil
				}
			default:
				pool.put(cp.words)
				return nil, nil
			}
			step := int64(r.off) + int64(h.size)
			chunk = chunk[step:]
			off += step
		}
		if m.dataPages == 0 || m.dataOffset != c.dataOffset || m.hasDict != (c.dictOffset > 0) ||
			m.hasDict && m.dictOffset != c.dictOffset {
			pool.put(cp.words)
			return nil, nil
		}
	}
	cp.first = binary.LittleEndian.Uint64(g.chunks[0].stats.min)
	return cp, nil
}
