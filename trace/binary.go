package trace

// The binary trace form: a seekable zstd file. docs/FORMAT.md is the
// byte-level specification; this file holds what the writer and the reader
// share: the constants and limits, the error type, the varint helpers, the
// record headers and the seek table.
//
// The seek table follows the Zstandard seekable format,
// https://github.com/facebook/zstd/blob/dev/contrib/seekable_format/zstd_seekable_compression_format.md
// and frames follow RFC 8878 (the Zstandard compression format).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits and defaults of the binary form. A reader rejects a file that goes
// over a limit before allocating anything for it.
const (
	// DefaultChunkInsts is how many instructions a chunk holds unless
	// WithChunkInsts says otherwise.
	DefaultChunkInsts = 1 << 16
	// MaxChunkInsts is the most records (instructions and directives) one
	// chunk may declare.
	MaxChunkInsts = 1 << 20
	// MaxRecordPayload bounds the payload of one record (the header, or one
	// chunk) after decompression.
	MaxRecordPayload = 64 << 20
	// chunkTargetBytes is the payload size at which the writer ends a chunk
	// early, whatever the instruction count, so that a chunk is at most
	// 1 MiB and an instruction. A reader holds a few chunks, each
	// decompressed and compressed (read-ahead + 1 of them), and starts
	// replaying once the first is decompressed: 1 MiB chunks of per-lane
	// lists (the uniform benchmark trace) replay faster than 4 MiB ones,
	// in less peak memory, in files of nearly the same size
	// (BenchmarkReplay/uniform-1Mi).
	chunkTargetBytes = 1 << 20
	// splitChunkBytes is chunkTargetBytes for a split file (WithSplit).
	splitChunkBytes = 256 << 10
)

const (
	// formatVersion is the version the writer writes. Version 2 added
	// directive records (.init and .region after the first instruction) to
	// chunks; a reader reads versions 1 and 2.
	formatVersion       = 2
	formatVersionOldest = 1

	headerMagic    = "RPLTRACE"
	chunkMagic     = "RPLC"
	headerFixedLen = 24 // magic 8, version 2, flags 2, payload length 4, checksum 8
	// headerFlagAddressOnly is header flag bit 0: Header.AddressOnly.
	headerFlagAddressOnly = 1
	chunkFixedLen         = 40 // magic 4, index 4, first seq 8, count 4, lane ops 8, payload length 4, checksum 8

	// Smallest encoded record: an instruction's code (static index), group
	// delta, warp delta and mask, one byte each; a directive record takes
	// at least 5 (code, kind, and a region's space, base and size).
	minInstBytes = 4

	zstdFrameMagic      = 0xFD2FB528
	skippableMagicMask  = 0xFFFFFFF0
	skippableMagicBase  = 0x184D2A50
	seekTableFrameMagic = 0x184D2A5E
	seekableMagic       = 0x8F92EAB1
	seekFooterLen       = 9 // Number_Of_Frames 4, Seek_Table_Descriptor 1, Seekable_Magic_Number 4
	seekChecksumFlag    = 0x80
	seekReservedBits    = 0x7C
	seekEntryLen        = 12 // Compressed_Size, Decompressed_Size, Checksum: 4 bytes each

	zstdMaxBlock = 128 << 10
	// maxFrameContent bounds the decompressed size of one frame.
	maxFrameContent = MaxRecordPayload + headerFixedLen + chunkFixedLen
	// maxFrameBytes bounds the compressed size of one frame: the content
	// stored raw, one 3-byte block header per 128 KiB, the frame header and
	// checksum, and slack for empty blocks.
	maxFrameBytes = maxFrameContent + maxFrameContent/zstdMaxBlock*3 + 1<<16
	// maxWindow is the largest zstd window a reader accepts: the default
	// limit of the zstd CLI (--memory=128MB).
	maxWindow = 1 << 27
)

// Chunk values of a BinaryError that are not chunk indices.
const (
	BinaryChunkHeader    = -1 // the header frame
	BinaryChunkSeekTable = -2 // the seek table, or what follows it
)

// BinaryError is a problem in a binary trace, with its place: the chunk
// (BinaryChunkHeader, BinaryChunkSeekTable or a chunk index from 0) and the
// offset in the file of the frame that holds it.
type BinaryError struct {
	Name   string // the file name given by WithName, or ""
	Chunk  int
	Offset int64
	Err    error
}

func (e *BinaryError) Error() string {
	var b strings.Builder
	if e.Name != "" {
		b.WriteString(e.Name)
		b.WriteString(": ")
	}
	switch e.Chunk {
	case BinaryChunkHeader:
		b.WriteString("header")
	case BinaryChunkSeekTable:
		b.WriteString("seek table")
	default:
		fmt.Fprintf(&b, "chunk %d", e.Chunk)
	}
	fmt.Fprintf(&b, " at offset 0x%x: %v", e.Offset, e.Err)
	return b.String()
}

func (e *BinaryError) Unwrap() error { return e.Err }

// errTruncated is wrapped by every error about input that ends too soon.
var errTruncated = errors.New("truncated")

// IsBinary reports whether a file that starts with prefix is a binary
// trace rather than `.tasm` text: it starts with a zstd frame.
func IsBinary(prefix []byte) bool {
	return len(prefix) >= 4 && binary.LittleEndian.Uint32(prefix) == zstdFrameMagic
}

// IsBinaryAt reports whether the file ra starts as a binary trace does
// (IsBinary of its first 4 bytes), for a caller that holds it open: a
// file too short, or that cannot be read, is not one.
func IsBinaryAt(ra io.ReaderAt) bool {
	var head [4]byte
	n, _ := ra.ReadAt(head[:], 0)
	return IsBinary(head[:n])
}

// seekEntry is one Seek_Table_Entries row.
type seekEntry struct {
	csize, dsize uint32
	check        uint32 // low 32 bits of the XXH64 of the decompressed frame
}

// appendSeekTable appends the seek table frame for entries, with checksums.
func appendSeekTable(b []byte, entries []seekEntry) []byte {
	b = binary.LittleEndian.AppendUint32(b, seekTableFrameMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)*seekEntryLen+seekFooterLen))
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint32(b, e.csize)
		b = binary.LittleEndian.AppendUint32(b, e.dsize)
		b = binary.LittleEndian.AppendUint32(b, e.check)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)))
	b = append(b, seekChecksumFlag)
	return binary.LittleEndian.AppendUint32(b, seekableMagic)
}

// parseSeekTable reads a whole seek table frame, from its skippable magic to
// the seekable magic. Entries without checksums have check 0 and
// hasCheck false.
func parseSeekTable(t []byte) (entries []seekEntry, hasCheck bool, err error) {
	if len(t) < 8+seekFooterLen {
		return nil, false, fmt.Errorf("%d bytes is too short for a seek table", len(t))
	}
	if m := binary.LittleEndian.Uint32(t); m != seekTableFrameMagic {
		return nil, false, fmt.Errorf("skippable magic 0x%08x, want 0x%08x", m, seekTableFrameMagic)
	}
	if n := binary.LittleEndian.Uint32(t[4:]); int64(n) != int64(len(t)-8) {
		return nil, false, fmt.Errorf("frame size %d, but the table holds %d bytes", n, len(t)-8)
	}
	foot := t[len(t)-seekFooterLen:]
	if m := binary.LittleEndian.Uint32(foot[5:]); m != seekableMagic {
		return nil, false, fmt.Errorf("seekable magic 0x%08x, want 0x%08x", m, seekableMagic)
	}
	desc := foot[4]
	if desc&seekReservedBits != 0 {
		return nil, false, fmt.Errorf("reserved descriptor bits set (0x%02x)", desc)
	}
	hasCheck = desc&seekChecksumFlag != 0
	esize := 8
	if hasCheck {
		esize = 12
	}
	n := uint64(binary.LittleEndian.Uint32(foot))
	body := t[8 : len(t)-seekFooterLen]
	if uint64(len(body)) != n*uint64(esize) {
		return nil, false, fmt.Errorf("%d frames need %d bytes of entries, the table has %d", n, n*uint64(esize), len(body))
	}
	entries = make([]seekEntry, n)
	for i := range entries {
		e := body[i*esize:]
		entries[i] = seekEntry{csize: binary.LittleEndian.Uint32(e), dsize: binary.LittleEndian.Uint32(e[4:])}
		if hasCheck {
			entries[i].check = binary.LittleEndian.Uint32(e[8:])
		}
	}
	return entries, hasCheck, nil
}

// zigzag maps a signed delta to an unsigned varint payload.
func zigzag(d int64) uint64 { return uint64(d<<1) ^ uint64(d>>63) }

// unzigzag inverts zigzag.
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// uvarint decodes an unsigned LEB128 varint; n <= 0 as binary.Uvarint.
// The hot decoding loop inlines its one-byte case by hand and calls
// uvarintLong for the rest.
func uvarint(p []byte) (uint64, int) {
	if len(p) > 0 && p[0] < 0x80 {
		return uint64(p[0]), 1
	}
	return uvarintLong(p)
}

//go:noinline
func uvarintLong(p []byte) (uint64, int) {
	if len(p) >= binary.MaxVarintLen64 {
		// Unrolled, without bounds checks past the first.
		p := p[:binary.MaxVarintLen64]
		x := uint64(p[0] & 0x7f)
		for i := 1; i < binary.MaxVarintLen64; i++ {
			b := p[i]
			if b < 0x80 {
				if i == binary.MaxVarintLen64-1 && b > 1 {
					return 0, -(i + 1)
				}
				return x | uint64(b)<<(7*i), i + 1
			}
			x |= uint64(b&0x7f) << (7 * i)
		}
		return 0, -binary.MaxVarintLen64
	}
	return binary.Uvarint(p)
}

// Space kinds as stored: the SpaceKind values, which the format fixes.
func validSpace(s Space) error {
	switch s.Kind {
	case SpaceGlobal, SpaceShared:
		if s.Surface != 0 {
			return fmt.Errorf("space %s with surface %d", s, s.Surface)
		}
		return nil
	case SpaceSurface, SpaceCounter:
		return nil
	}
	return fmt.Errorf("invalid space kind %d", s.Kind)
}

// windowCode is the stored code of a Window.Kind: shared 0, local 1.
func windowCode(kind string) (byte, bool) {
	switch kind {
	case "shared":
		return 0, true
	case "local":
		return 1, true
	}
	return 0, false
}

// windowKind is the Window.Kind of a stored code, "" for an unknown one.
func windowKind(code byte) string {
	switch code {
	case 0:
		return "shared"
	case 1:
		return "local"
	}
	return ""
}

func validInit(in *Init) error {
	if err := validSpace(in.Space); err != nil {
		return err
	}
	if in.Type == TypeInvalid || in.Type >= numTypes {
		return fmt.Errorf("invalid type %d", in.Type)
	}
	if len(in.Data)%in.Type.Size() != 0 {
		return fmt.Errorf("%d data bytes is not a whole number of %s", len(in.Data), in.Type)
	}
	return nil
}

// validStatic checks what the binary form relies on in a Static.
func validStatic(s *Static) error {
	if s.Text == "" {
		return errors.New("static has no text")
	}
	if s.ExecSize < 1 || s.ExecSize > MaxLanes {
		return fmt.Errorf("%q: execution size %d out of 1..%d", s.Text, s.ExecSize, MaxLanes)
	}
	if s.Pred < -1 || s.Pred >= len(s.Inputs) {
		return fmt.Errorf("%q: predicate input %d out of range (%d inputs)", s.Text, s.Pred, len(s.Inputs))
	}
	for _, in := range s.Inputs {
		if n := in.Count(s.ExecSize); in.Elems < 0 || n > MaxLanes*64 {
			return fmt.Errorf("%q: input %s holds %d values (at most %d)", s.Text, in.Name, n, MaxLanes*64)
		}
	}
	return nil
}
