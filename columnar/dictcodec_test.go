package columnar

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestDictPageCodec checks how the writer compresses dictionary pages: a
// small page is a stored zstd frame (its bytes, a 9-byte frame around
// them), a large one compressed as arrow-go's zstd codec compresses it at
// the same level, byte for byte, and both decode with arrow-go's zstd
// codec, as a reader of the zstd column chunk does.
func TestDictPageCodec(t *testing.T) {
	var c dictCompressor
	z, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	dict := func(n int) []byte { // PLAIN BYTE_ARRAY values, as a dictionary page holds them
		var b []byte
		for i := 0; len(b) < n; i++ {
			v := []string{"ptx", "sass", "global", "bti(0x4)"}[i%4]
			b = append(b, byte(len(v)), 0, 0, 0)
			b = append(b, v...)
		}
		return b[:n]
	}
	for _, tc := range []struct {
		n      int
		stored bool
	}{{0, true}, {7, true}, {255, true}, {256, true}, {storedDictBytes, true}, {storedDictBytes + 1, false}, {200 << 10, false}} {
		src := dict(tc.n)
		enc, err := c.compress(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		arrowEnc := z.EncodeLevel(nil, src, zstdLevel)
		for name, enc := range map[string][]byte{"compress": enc} {
			if !tc.stored && !bytes.Equal(enc, arrowEnc) {
				t.Errorf("%s of %d bytes: %d bytes, arrow-go's codec gives %d others", name, tc.n, len(enc), len(arrowEnc))
			}
			if tc.stored {
				want := 9 // magic, descriptor, 1-byte size, block header
				if tc.n >= 256 {
					want++ // a 2-byte size
				}
				if len(enc) != tc.n+want {
					t.Errorf("%s of %d bytes: %d bytes out, want %d (a stored frame)", name, tc.n, len(enc), tc.n+want)
				}
				if !bytes.Equal(enc[len(enc)-tc.n:], src) {
					t.Errorf("%s of %d bytes: the frame does not end with the page", name, tc.n)
				}
			} else if len(enc) >= tc.n/2 {
				t.Errorf("%s of %d repetitive bytes: %d bytes out, not compressed", name, tc.n, len(enc))
			}
			got, err := z.(compress.ErrorCodec).DecodeWithError(nil, enc)
			if err != nil {
				t.Fatalf("%s of %d bytes: zstd cannot decode it: %v", name, tc.n, err)
			}
			if !bytes.Equal(got, src) {
				t.Errorf("%s of %d bytes: decodes to %d other bytes", name, tc.n, len(got))
			}
		}
	}
}
