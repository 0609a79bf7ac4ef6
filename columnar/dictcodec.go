package columnar

import (
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Dictionary pages. arrow-go's page writer compresses a chunk's
// dictionary page itself (WriteDictionaryPage), through the codec it looks
// up for the compression it was made with; its zstd codec takes an encoder
// from a sync.Pool for each page and resets it on the way back, which
// allocates the encoder's block buffers again (about 140 KiB), and every
// collection empties the pool, so the next page makes a whole encoder.
// The tables' string columns have tiny dictionaries ("ptx", "add", "u32",
// "global": tens of bytes) and a replay writes one per row group: a whole
// encoder's allocation each, much of a short replay's time
// (BenchmarkReplay with a small REPLAY_BENCH_LANEOPS).
//
// So the page writer is made with dictPageCompression, a compression value
// of our own that arrow-go's registry maps to dictPageCodec: a dictionary
// page of at most storedDictBytes goes out as a zstd frame of raw blocks
// (appendStoredFrame), which every zstd decoder reads, and a larger one
// through arrow-go's zstd codec as before. The page writer uses the value
// for nothing else: the column chunk's codec in the file's metadata comes
// from the writer properties, zstd (TestEncodings checks it). Data pages
// never go through it: the Writer compresses them (zstdframe.go).

// dictPageCompression is the compression the page writers are made with:
// a value no Parquet codec has (the format's go up to 7), registered with
// arrow-go for dictPageCodec.
const dictPageCompression = compress.Compression(0x7e11)

// storedDictBytes is the largest dictionary page stored rather than
// compressed: zstd at level 1 gains little on a few distinct strings, and
// a stored frame costs a copy.
const storedDictBytes = 4 << 10

// dictPageCodec is arrow-go's zstd codec, but for small pages, which it
// stores in a frame of raw blocks.
type dictPageCodec struct{ compress.Codec }

func (c dictPageCodec) Encode(dst, src []byte) []byte {
	if len(src) <= storedDictBytes {
		return appendStoredFrame(dst[:0], src)
	}
	return c.Codec.Encode(dst, src)
}

func (c dictPageCodec) EncodeLevel(dst, src []byte, level int) []byte {
	if len(src) <= storedDictBytes {
		return appendStoredFrame(dst[:0], src)
	}
	return c.Codec.EncodeLevel(dst, src, level)
}

// init registers dictPageCodec: arrow-go's registry is a map without a
// lock, written here before any goroutine can read it, and read by
// NewPageWriter only under dictPageCompression, which no other code uses.
func init() {
	z, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic("columnar: arrow-go has no zstd codec: " + err.Error())
	}
	compress.RegisterCodec(dictPageCompression, dictPageCodec{z})
}
