package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// TextWriter prints a trace as `.tasm`: the header's directives, then one
// line per instruction with every input bound explicitly, and .group/.warp
// directives where the context changes. Reading the output back gives the
// same instructions (TASM.md's lossless round trip).
type TextWriter struct {
	w           *bufio.Writer
	group, warp int64
	buf         []byte
	addrOnly    bool // Header.AddressOnly: data inputs are not printed
}

// NewTextWriter writes h's directives at once.
func NewTextWriter(w io.Writer, h *Header) (*TextWriter, error) {
	tw := &TextWriter{w: bufio.NewWriterSize(w, 64<<10), addrOnly: h.AddressOnly}
	if h.AddressOnly {
		tw.w.WriteString(".addresses-only\n")
	}
	for i := range h.Regions {
		tw.buf = appendRegion(tw.buf[:0], &h.Regions[i])
		tw.w.Write(tw.buf)
	}
	for _, w := range h.Windows {
		fmt.Fprintf(tw.w, ".window %s 0x%x 0x%x\n", w.Kind, w.Base, w.Size)
	}
	for i := range h.Inits {
		b, err := tw.appendInit(tw.buf[:0], &h.Inits[i])
		if err != nil {
			return nil, err
		}
		tw.buf = b
		tw.w.Write(b)
	}
	return tw, tw.w.Flush()
}

func appendRegion(b []byte, r *Region) []byte {
	b = append(b, ".region "...)
	b = append(b, r.Space.String()...)
	b = append(b, " 0x"...)
	b = strconv.AppendUint(b, r.Base, 16)
	b = append(b, " 0x"...)
	b = strconv.AppendUint(b, r.Size, 16)
	return append(b, '\n')
}

// appendInit appends a .init line, after a .group line when the init is of
// a per-group space and another group is current.
func (tw *TextWriter) appendInit(b []byte, in *Init) ([]byte, error) {
	size := in.Type.Size()
	if size == 0 || len(in.Data)%size != 0 {
		return nil, fmt.Errorf("init at %s 0x%x: %d bytes is not a whole number of %s", in.Space, in.Addr, len(in.Data), in.Type)
	}
	if in.Space.PerGroup() && in.Group != tw.group {
		b = append(b, ".group "...)
		b = strconv.AppendInt(b, in.Group, 10)
		b = append(b, '\n')
		tw.group = in.Group
	}
	b = append(b, ".init "...)
	b = append(b, in.Space.String()...)
	b = append(b, " 0x"...)
	b = strconv.AppendUint(b, in.Addr, 16)
	b = append(b, ' ')
	b = append(b, in.Type.String()...)
	for i := 0; i < len(in.Data); i += size {
		var lo, hi uint64
		for j := 0; j < size && j < 8; j++ {
			lo |= uint64(in.Data[i+j]) << (8 * j)
		}
		for j := 8; j < size; j++ {
			hi |= uint64(in.Data[i+j]) << (8 * (j - 8))
		}
		b = append(b, ' ')
		b = appendHex(b, lo, hi)
	}
	return append(b, '\n'), nil
}

func appendHex(b []byte, lo, hi uint64) []byte {
	b = append(b, "0x"...)
	if hi != 0 {
		b = strconv.AppendUint(b, hi, 16)
		s := strconv.FormatUint(lo, 16)
		for i := len(s); i < 16; i++ {
			b = append(b, '0')
		}
		return append(b, s...)
	}
	return strconv.AppendUint(b, lo, 16)
}

// Write prints one instruction, or one directive record.
func (tw *TextWriter) Write(in *Inst) error {
	if in.Dir != nil {
		return tw.writeDirective(in.Dir)
	}
	st := in.Static
	if st == nil {
		return fmt.Errorf("instruction %d has no Static", in.Seq)
	}
	if len(in.Vals) != len(st.Inputs) {
		return fmt.Errorf("instruction %d: %d values for %d inputs", in.Seq, len(in.Vals), len(st.Inputs))
	}
	b := tw.buf[:0]
	if in.Group != tw.group {
		b = append(b, ".group "...)
		b = strconv.AppendInt(b, in.Group, 10)
		b = append(b, '\n')
		tw.group = in.Group
	}
	if in.Warp != tw.warp {
		b = append(b, ".warp "...)
		b = strconv.AppendInt(b, in.Warp, 10)
		b = append(b, '\n')
		tw.warp = in.Warp
	}
	b = append(b, st.Text...)
	sep := " | "
	for i := range st.Inputs {
		inp := &st.Inputs[i]
		if tw.addrOnly && inp.Role != RoleAddr && inp.Role != RolePred {
			continue // no value: Header.Valued
		}
		v := &in.Vals[i]
		b = append(b, sep...)
		sep = " "
		b = append(b, inp.Name...)
		b = append(b, '=')
		switch v.Kind {
		case VecBroadcast:
			b = appendHex(b, v.Base, v.BaseHi)
		case VecStride:
			b = appendHex(b, v.Base, 0)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(v.Stride), 10)
		case VecList:
			b = append(b, '[')
			for l := range v.List {
				if l > 0 {
					b = append(b, ',')
				}
				var hi uint64
				if v.ListHi != nil {
					hi = v.ListHi[l]
				}
				b = appendHex(b, v.List[l], hi)
			}
			b = append(b, ']')
		}
	}
	if in.Mask != st.ExecMask() {
		b = append(b, sep...)
		b = append(b, "mask=0x"...)
		b = strconv.AppendUint(b, uint64(in.Mask), 16)
	}
	b = append(b, '\n')
	tw.buf = b
	_, err := tw.w.Write(b)
	return err
}

func (tw *TextWriter) writeDirective(d *Directive) error {
	var b []byte
	switch {
	case d.Init != nil:
		var err error
		if b, err = tw.appendInit(tw.buf[:0], d.Init); err != nil {
			return err
		}
	case d.Region != nil:
		b = appendRegion(tw.buf[:0], d.Region)
	case d.Cluster != nil:
		b = tw.buf[:0]
		if d.Cluster.Group != tw.group {
			b = append(b, ".group "...)
			b = strconv.AppendInt(b, d.Cluster.Group, 10)
			b = append(b, '\n')
			tw.group = d.Cluster.Group
		}
		b = append(b, ".cluster "...)
		b = strconv.AppendInt(b, d.Cluster.ID, 10)
		b = append(b, '\n')
	case d.Fold != nil:
		return fmt.Errorf("a fold record (of a combined split file) has no text form: disassemble the trace split")
	default:
		return fmt.Errorf("a directive record with none of .init, .region and .cluster")
	}
	tw.buf = b
	_, err := tw.w.Write(b)
	return err
}

// Close flushes the output; it does not close the underlying writer.
func (tw *TextWriter) Close() error { return tw.w.Flush() }
