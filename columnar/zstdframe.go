package columnar

import (
	"encoding/binary"
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// The data pages' encoder. arrow-go's zstd codec takes an encoder from a
// sync.Pool for each page, made with klauspost's default window of 8 MiB:
// the first page of more than a block then allocates the encoder's
// history for that window, 8 MiB, cleared, and every collection empties
// the pool, so a replay made a new one after each of its collections
// (8 MiB of a uniform-1Mi replay's 50 MiB of allocation, which brought
// the next collection nearer in turn). A Writer instead keeps one
// encoder for its life, shared by its tables' goroutines (EncodeAll may
// be called concurrently), with a window of pageWindow.

// pageWindow is the window of the pages' zstd frames: at least the largest
// page most columns write (dataPage bytes of PLAIN values; a
// DELTA_BINARY_PACKED page of maxPageRows 64-bit values is at most 513
// KiB), so that a match may reach back to the start of the page, as with
// the 8 MiB window, and a page of at most the window is one segment whose
// size the frame header gives. The encoder's history is then about 1 MiB.
const pageWindow = 512 << 10

// newPageEncoder returns a Writer's page encoder: zstd at zstdLevel (1,
// klauspost's SpeedFastest, as arrow-go maps it), literals always
// entropy-coded and an empty page a frame, as arrow-go's codec makes them,
// for one page at once per two cores, up to four (pageEncoders; one
// encoder state each, about 1.3 MiB, made when first needed). Without the
// frame's content checksum, as the stored frames below: a Parquet reader
// does not check it (a page header has its own optional CRC field, which
// this writer leaves out, as arrow-go's writer does by default), and it
// cost an XXH64 pass over every page's raw bytes.
func newPageEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderCRC(false),
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(zstdLevel)),
		zstd.WithZeroFrames(true),
		zstd.WithAllLitEntropyCompression(true),
		zstd.WithEncoderConcurrency(pageEncoders(runtime.GOMAXPROCS(0))),
		zstd.WithWindowSize(pageWindow))
}

// pageEncoders is how many pages a Writer compresses at once on procs
// cores: half of them, at least one, at most four. A page is a fraction
// of a table's work, and each encoder state's 256 KiB match table is
// fresh memory that its first page reads before writing, a second fault
// and a TLB shootdown a page of it: on two cores, one state rather than
// two made the hot counter's replay and the replay with every table
// faster, with fewer page faults (BenchmarkReplay/hotcounter).
func pageEncoders(procs int) int { return min(max(procs/2, 1), 4) }

// Incompressible pages. A delta-packed column of values with many
// distinct values (a scattered replay's memory values, the addresses of
// a sparse one) leaves zstd nothing to find: on the memory table of
// BenchmarkMemory its values' pages came out of zstd at level 1 no
// smaller, for a good part of that column's cost. A
// column chunk whose page does not shrink by at least a sixteenth stores
// its next storedPages pages as zstd frames of raw blocks, which every
// zstd decoder reads and which cost a copy, and then compresses one page
// again to see whether the data changed. The file stays a Parquet file
// with zstd for every chunk; at most a sixteenth of such a page's size is
// given up.
const storedPages = 15

// sampledPageBytes is the smallest data page whose compression is first
// tried on a sample of it, sampleBytes from its middle: a page whose
// sample zstd does not shrink by a sixteenth is stored without
// compressing the rest (and the column's next storedPages pages with it).
// A delta-packed page of random addresses (the results' addr, and value
// once memory has filled with random sums) is about 190 KiB that zstd
// at level 1 gave back no smaller, at several times the cost of the
// sample; a page that compresses (lanes, sequence numbers, small values)
// compresses its sample too, and is then compressed whole, to the bytes
// it had before.
const (
	sampledPageBytes = 64 << 10
	sampleBytes      = 16 << 10
)

// storedPageBytes is the largest data page stored rather than compressed
// by default. zstd saves at most a few hundred bytes on such a page, and
// the first page compressed makes the encoder's state (newPageEncoder,
// over half a megabyte): a short trace's tables then compress no page,
// and its replay neither allocates that state nor collects garbage for
// it (bench/e2e's startup/one-inst).
const storedPageBytes = 512

// worthCompressing reports whether zstd's output z of raw saved at least
// a sixteenth of raw.
func worthCompressing(raw, z []byte) bool { return len(z) < len(raw)-len(raw)/16 }

// zstdMagic opens a zstd frame (RFC 8878, section 3.1.1).
const zstdMagic = 0xFD2FB528

// maxRawBlock is the largest block of a frame (RFC 8878, section
// 3.1.1.2.3: Block_Maximum_Size, 128 KiB, or the window when smaller).
const maxRawBlock = 128 << 10

// appendStoredFrame appends src to dst as one zstd frame of raw
// (uncompressed) blocks: the frame header with Single_Segment_Flag set and
// the content size, so that the window is the content and a decoder
// knows the size up front, no dictionary and no checksum; then blocks of
// at most maxRawBlock bytes, the last one flagged (one empty block for an
// empty src).
func appendStoredFrame(dst, src []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, zstdMagic)
	// Frame_Header_Descriptor: Frame_Content_Size_Flag in bits 7-6,
	// Single_Segment_Flag in bit 5. With a single segment, flag 0 is a
	// 1-byte size, 1 a 2-byte size less 256, 2 a 4-byte size.
	switch n := len(src); {
	case n < 256:
		dst = append(dst, 0x20, byte(n))
	case n < 256+1<<16:
		dst = append(dst, 0x60)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n-256))
	default:
		dst = append(dst, 0xA0)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	}
	for {
		k := min(len(src), maxRawBlock)
		// Block_Header: Last_Block in bit 0, Block_Type 0 (Raw_Block)
		// in bits 1-2, Block_Size in bits 3-23.
		h := uint32(k) << 3
		if k == len(src) {
			h |= 1
		}
		dst = append(dst, byte(h), byte(h>>8), byte(h>>16))
		dst = append(dst, src[:k]...)
		if src = src[k:]; len(src) == 0 {
			return dst
		}
	}
}
