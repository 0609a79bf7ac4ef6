package columnar

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Dictionary pages. The tables' string columns have tiny dictionaries
// ("ptx", "add", "u32", "global": tens of bytes) and a replay writes one
// per row group: a dictionary page of at most storedDictBytes goes out as
// a zstd frame of raw blocks (appendStoredFrame), which every zstd decoder
// reads, without an encoder's state to set up (BenchmarkReplay with
// REPLAY_BENCH_LANEOPS=32000). A larger one is compressed at zstdLevel
// by an encoder made when first needed, with the options arrow-go's zstd
// codec gives its encoders, which compressed them before, so that the
// pages keep their bytes.

// storedDictBytes is the largest dictionary page stored rather than
// compressed: zstd at level 1 gains little on a few distinct strings, and
// a stored frame costs a copy.
const storedDictBytes = 4 << 10

// dictCompressor compresses a Parquet writer's dictionary pages.
type dictCompressor struct {
	once sync.Once
	enc  *zstd.Encoder
	err  error
}

// compress returns src's zstd frame, appended to dst.
func (d *dictCompressor) compress(dst, src []byte) ([]byte, error) {
	if len(src) <= storedDictBytes {
		return appendStoredFrame(dst, src), nil
	}
	d.once.Do(func() {
		d.enc, d.err = zstd.NewWriter(nil, zstd.WithZeroFrames(true),
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(zstdLevel)),
			zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
	})
	if d.err != nil {
		return nil, d.err
	}
	return d.enc.EncodeAll(src, dst), nil
}
