package bench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TracegCounts is what WriteTraceg wrote: the instruction lines by
// opcode, and how many of them are atomics the importer maps.
type TracegCounts struct {
	Blocks  int
	Lines   uint64
	Atomics uint64
	Opcodes map[string]uint64
}

// tracegLine is a line of the generated warp: its opcode, whether the
// importer maps it, and its text.
type tracegLine struct {
	opcode string
	atomic bool
	format string
}

// tracegWarp is one warp's lines of the generated kernel, as Accel-Sim's
// tracer (version 5) writes them: `PC mask dest_num [dests] opcode src_num
// [srcs] mem_width [compression addresses…] immediate`, the verbs filled
// with the block's bin (%02[1]x) and the warp's offset (%02[2]x). Atomics: an ATOMG on one hot
// word (compression 1, stride 0), a RED.F32 over 32 consecutive words
// (compression 1), an ATOMS on shared bins (compression 2, deltas) and a
// 64-bit CAS on four words (compression 0, one address per lane); the
// rest are the opcodes around them, skipped.
var tracegWarp = []tracegLine{
	{"MOV", false, "0000 ffffffff 1 R1 MOV 0 0 0 \n"},
	{"S2R", false, "0010 ffffffff 1 R0 S2R 0 0 0 \n"},
	{"IMAD.WIDE", false, "0020 ffffffff 1 R2 IMAD.WIDE 2 R0 R9 0 4 \n"},
	{"LDG.E.SYS", false, "0030 ffffffff 1 R4 LDG.E.SYS 1 R2 4 1 0x7f5800%02[1]x%02[2]x00 4 0 \n"},
	{"ATOMG.E.ADD.STRONG.GPU", true, "0040 ffffffff 1 R5 ATOMG.E.ADD.STRONG.GPU 2 R2 R7 4 1 0x7f0000001000 0 0 \n"},
	{"FMUL", false, "0050 ffffffff 1 R6 FMUL 2 R4 R4 0 0 \n"},
	{"RED.E.ADD.F32.FTZ.RN.STRONG.GPU", true, "0060 ffffffff 0 RED.E.ADD.F32.FTZ.RN.STRONG.GPU 2 R2 R6 4 1 0x7f00002%02[1]x000 4 0 \n"},
	{"ATOMS.ADD", true, "0070 0000ffff 1 R8 ATOMS.ADD 2 R3 R4 4 2 0x7f01000000%02[2]x 4 4 4 -12 4 4 4 -12 4 4 4 -12 4 4 4 0 \n"},
	{"ISETP.GE.U32.AND", false, "0080 ffffffff 0 ISETP.GE.U32.AND 1 R2 0 1024 \n"},
	{"ATOM.E.CAS.64.STRONG.GPU", true, "0090 0000000f 1 R9 ATOM.E.CAS.64.STRONG.GPU 3 R2 R10 R12 8 0 0x00007f0000003000 0x00007f0000003008 0x00007f0000003000 0x00007f00000030%02[2]x 0 \n"},
	{"BRA", false, "00a0 00000000 0 BRA 0 0 528 \n"},
	{"STG.E.SYS", false, "00b0 ffffffff 0 STG.E.SYS 2 R2 R6 4 1 0x7f5900%02[1]x%02[2]x00 4 0 \n"},
	{"EXIT", false, "00c0 ffffffff 0 EXIT 0 0 0 \n"},
}

// line is the line of a block's bin and a warp's offset.
func (l tracegLine) line(bin, off int) string {
	if !strings.Contains(l.format, "%") {
		return l.format
	}
	return fmt.Sprintf(l.format, bin, off)
}

// tracegWarps is the warps of a generated block (block dim 128).
const tracegWarps = 4

// WriteTraceg writes one Accel-Sim kernel file (.traceg, tracer version
// 5) of at least minBytes, deterministic: blocks of 4 warps, each warp
// the 13 lines of tracegWarp, atomics and skipped opcodes mixed; the
// grid is as many blocks as the size takes. It returns what it wrote.
// make bench times `replay import accelsim` of it (bench/e2e).
func WriteTraceg(w io.Writer, minBytes int64) (TracegCounts, error) {
	c := TracegCounts{Opcodes: map[string]uint64{}}
	// One block's text, measured once, sets the grid: the header must
	// name it before the first block.
	var blockLen int64
	for wp := range tracegWarps {
		blockLen += int64(len(fmt.Sprintf("warp = %d\ninsts = %d\n\n", wp, len(tracegWarp))))
		for _, l := range tracegWarp {
			blockLen += int64(len(l.line(0, wp*16)))
		}
	}
	blocks := int(max(1, (minBytes+blockLen-1)/blockLen))
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "-kernel name = _Z9histogramPjPfPy\n-kernel id = 1\n-grid dim = (%d,1,1)\n-block dim = (128,1,1)\n"+
		"-shmem = 1024\n-nregs = 24\n-binary version = 86\n-cuda stream id = 0\n"+
		"-shmem base_addr = 0x00007f0100000000\n-local mem base_addr = 0x00007f0102000000\n"+
		"-nvbit version = 1.7.4\n-accelsim tracer version = 5\n-enable lineinfo = 0\n\n"+
		"#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate\n\n\n\n", blocks)
	buf := make([]byte, 0, 512)
	for b := range blocks {
		buf = append(buf[:0], "#BEGIN_TB\n\nthread block = "...)
		buf = strconv.AppendInt(buf, int64(b), 10)
		buf = append(buf, ",0,0\n\n"...)
		bw.Write(buf)
		bin := b % 256 // the block's bin: the RED's and the loads' addresses
		for wp := range tracegWarps {
			fmt.Fprintf(bw, "warp = %d\ninsts = %d\n", wp, len(tracegWarp))
			for _, l := range tracegWarp {
				bw.WriteString(l.line(bin, wp*16))
				c.Lines++
				c.Opcodes[l.opcode]++
				if l.atomic {
					c.Atomics++
				}
			}
			bw.WriteString("\n")
		}
		bw.WriteString("#END_TB\n\n")
	}
	c.Blocks = blocks
	return c, bw.Flush()
}
