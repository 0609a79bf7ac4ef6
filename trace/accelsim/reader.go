package accelsim

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gpureplay/replay/trace"
	"github.com/ulikunitz/xz"
)

// Stats counts what a reader read.
type Stats struct {
	Kernels int    // kernel files opened
	Lines   uint64 // instruction lines read, atomic or not
	Atomics uint64 // instructions handed out
	// Skipped counts the instruction lines skipped, by opcode as written:
	// every opcode that is not an atomic.
	Skipped map[string]uint64
	// Unmapped counts the atomic opcodes (ATOM, ATOMG, ATOMS, RED …) the
	// SASS dialect does not take (ATOMS.POPC.INC, ATOMS.CAST.SPIN, an
	// unknown scope …), by opcode; they are skipped too.
	Unmapped map[string]uint64
	// Bytes is the trace text read, after decompression.
	Bytes int64

	// The counts as kept while reading: a line of a known opcode costs a
	// lookup, no string (snapshot makes Skipped and Unmapped of them).
	skipped, unmapped map[string]*uint64
}

func newStats() Stats {
	return Stats{skipped: map[string]*uint64{}, unmapped: map[string]*uint64{}}
}

func (s *Stats) skip(opcode []byte, atomic bool) {
	m := s.skipped
	if atomic {
		m = s.unmapped
	}
	if c, ok := m[string(opcode)]; ok {
		*c++
		return
	}
	c := new(uint64)
	*c = 1
	m[string(opcode)] = c
}

// snapshot is s with Skipped and Unmapped filled.
func (s Stats) snapshot() Stats {
	s.Skipped, s.Unmapped = map[string]uint64{}, map[string]uint64{}
	for k, c := range s.skipped {
		s.Skipped[k] = *c
	}
	for k, c := range s.unmapped {
		s.Unmapped[k] = *c
	}
	s.skipped, s.unmapped = nil, nil
	return s
}

// OpcodeCount is an opcode and how many lines had it.
type OpcodeCount struct {
	Opcode string
	Count  uint64
}

// Sorted lists a count map by descending count, then opcode.
func Sorted(m map[string]uint64) []OpcodeCount {
	out := make([]OpcodeCount, 0, len(m))
	for k, v := range m {
		out = append(out, OpcodeCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Opcode < out[j].Opcode
	})
	return out
}

// kernelSource is one kernel file being read.
type kernelSource interface {
	next() (*trace.Inst, error)
	close() error
	parserOf() *parser
}

// Reader is a [trace.Source] of the SASS atomics of an Accel-Sim trace:
// a directory's kernels in kernelslist.g order, or one kernel file. Its
// header is address-only. Close releases the open file.
type Reader struct {
	trace.NoCaps          // no fast path: the engine reads it an instruction at a time
	files        []string // kernel files still to open, in order
	hdr          trace.Header
	stats        Stats
	statics      [2]map[string]*trace.Static
	cur          kernelSource
	groupLo      int64 // the first group number of the next kernel
	seq          uint64
	err          error
	// open makes a kernel source of a file (tests replace it).
	open func(path string) (kernelSource, error)
}

// Open reads PATH: a trace directory (its kernelslist.g), a kernelslist.g,
// or one kernel file (.traceg, .traceg.gz, .traceg.xz, .tracez).
func Open(path string) (*Reader, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var files []string
	switch {
	case fi.IsDir():
		files, err = kernelsList(filepath.Join(path, "kernelslist.g"))
	case strings.HasPrefix(filepath.Base(path), "kernelslist"):
		files, err = kernelsList(path)
	default:
		files = []string{path}
	}
	if err != nil {
		return nil, err
	}
	r := newReader(files)
	r.open = openKernelFile
	return r, nil
}

// NewReader reads one kernel's .traceg text from rd; name names it in
// errors.
func NewReader(rd io.Reader, name string) *Reader {
	r := newReader([]string{name})
	r.open = func(string) (kernelSource, error) {
		return newTextKernel(rd, nil, name), nil
	}
	return r
}

func newReader(files []string) *Reader {
	return &Reader{
		files:   files,
		hdr:     trace.Header{AddressOnly: true},
		stats:   newStats(),
		statics: [2]map[string]*trace.Static{{}, {}},
	}
}

// kernelsList reads the kernel file names of a kernelslist.g, in order:
// its `kernel-…` lines, relative to its directory. `Memcpy…` lines carry
// no instruction and are passed over.
func kernelsList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dir := filepath.Dir(path)
	var files []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "", strings.HasPrefix(line, "Memcpy"):
		case strings.HasPrefix(line, "kernel"):
			files = append(files, filepath.Join(dir, line))
		default:
			return nil, &Error{File: path, Line: n, Col: 1, Offset: -1, Msg: fmt.Sprintf("%q: a kernelslist line is kernel-N.traceg… or MemcpyHtoD,…", clip([]byte(line)))}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: path, Line: n + 1, Offset: -1, Msg: err.Error()}
	}
	if len(files) == 0 {
		return nil, &Error{File: path, Offset: -1, Msg: "lists no kernel file (kernel-N.traceg)"}
	}
	return files, nil
}

// openKernelFile opens a kernel file by its extension.
func openKernelFile(path string) (kernelSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	name := path
	switch {
	case strings.HasSuffix(path, ".tracez"):
		k, err := newTracezKernel(f, name)
		if err != nil {
			f.Close()
			return nil, err
		}
		return k, nil
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
		if err != nil {
			f.Close()
			return nil, &Error{File: name, Offset: -1, Msg: "not a gzip file: " + err.Error()}
		}
		return newTextKernel(zr, f, name), nil
	case strings.HasSuffix(path, ".xz"):
		xr, err := xz.NewReader(bufio.NewReaderSize(f, 1<<16))
		if err != nil {
			f.Close()
			return nil, &Error{File: name, Offset: -1, Msg: "not an xz file: " + err.Error()}
		}
		return newTextKernel(xr, f, name), nil
	}
	return newTextKernel(f, f, name), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func newTextKernel(rd io.Reader, closer io.Closer, name string) *textKernel {
	k := &textKernel{p: parser{file: name}, closer: closer}
	k.br = bufio.NewReaderSize(countingReader{rd, &k.p.read}, MaxLine)
	return k
}

func (k *textKernel) close() error {
	if k.closer != nil {
		return k.closer.Close()
	}
	return nil
}

// Header is the trace's header: address-only, nothing else.
func (r *Reader) Header() *trace.Header { return &r.hdr }

// Stats returns what was read so far.
func (r *Reader) Stats() Stats {
	s := r.stats.snapshot()
	if r.cur != nil {
		s.Bytes += r.cur.parserOf().read
	}
	return s
}

// Next returns the next atomic, io.EOF after the last kernel's last, or
// the first error (again on every later call).
func (r *Reader) Next() (*trace.Inst, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		if r.cur == nil {
			if len(r.files) == 0 {
				r.err = io.EOF
				return nil, io.EOF
			}
			if r.groupLo > maxGroups {
				// The next kernel's groups would follow more than 2^62
				// blocks: numbers past them could wrap around.
				r.err = &Error{File: r.files[0], Offset: -1, Field: "grid dim",
					Msg: "the kernels before this one have more than 2^62 blocks together: their groups' numbers would not fit"}
				return nil, r.err
			}
			k, err := r.open(r.files[0])
			if err != nil {
				r.err = err
				return nil, err
			}
			r.files = r.files[1:]
			r.stats.Kernels++
			r.attach(k)
			r.cur = k
		}
		in, err := r.cur.next()
		if err == io.EOF {
			r.groupLo += r.curBlocks() // at most 2^62 + 2^40: checked before the next kernel
			r.stats.Bytes += r.cur.parserOf().read
			r.cur.close()
			r.cur = nil
			continue
		}
		if err != nil {
			r.err = err
			r.cur.close()
			r.cur = nil
			return nil, err
		}
		return in, nil
	}
}

// attach gives a kernel the reader's shared state.
func (r *Reader) attach(k kernelSource) {
	p := k.parserOf()
	p.stats, p.statics, p.seq, p.groupLo = &r.stats, &r.statics, &r.seq, r.groupLo
}

func (r *Reader) curBlocks() int64 {
	return r.cur.parserOf().gridBlocks()
}

func (k *textKernel) parserOf() *parser { return &k.p }

// Close closes the kernel file being read.
func (r *Reader) Close() error {
	if r.cur != nil {
		err := r.cur.close()
		r.cur = nil
		return err
	}
	return nil
}
