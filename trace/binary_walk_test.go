package trace

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// walkBytes walks the frame in b (after its 4-byte magic).
func walkBytes(b []byte) (int, error) {
	at := 4
	return walkFrame(func(n int) ([]byte, error) {
		if n > len(b)-at {
			return nil, errTruncated
		}
		at += n
		return b[at-n : at], nil
	})
}

// TestWalkFrameHeader checks the frame-header rules walkFrame applies on
// top of zstd.Header: each case is a real frame with one header field set
// by hand.
func TestWalkFrameHeader(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithSingleSegment(true))
	if err != nil {
		t.Fatal(err)
	}
	// Incompressible, so the frame holds one raw block whose size bounds
	// the content exactly.
	payload := make([]byte, 520)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	good := enc.EncodeAll(payload, nil)
	// good: magic, FHD (single segment, 2-byte FCS, checksum), FCS.
	if good[4]&0x20 == 0 || good[4]>>6 != 1 {
		t.Fatalf("encoder wrote FHD 0x%02x, want single segment with a 2-byte FCS", good[4])
	}
	bound, err := walkBytes(good)
	if err != nil || bound != len(payload) {
		t.Fatalf("good frame: bound %d, %v; want %d", bound, err, len(payload))
	}
	with := func(edit func(f []byte) []byte) []byte { return edit(bytes.Clone(good)) }
	cases := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"reserved bit", with(func(f []byte) []byte { f[4] |= 0x08; return f }), "reserved bit"},
		{"dictionary", with(func(f []byte) []byte {
			// FHD's Dictionary_ID_Flag = 1: one byte of dictionary ID after it.
			f[4] |= 0x01
			return append(f[:5], append([]byte{7}, f[5:]...)...)
		}), "needs dictionary 7"},
		{"window over the limit", with(func(f []byte) []byte {
			// Not single segment, no FCS, Window_Descriptor 2^(10+18) = 256 MiB.
			f[4] &^= 0xE0
			return append(f[:5], append([]byte{18 << 3}, f[7:]...)...)
		}), "zstd window of 268435456 bytes is over the limit"},
		{"content size over the blocks", with(func(f []byte) []byte {
			f[5]++ // FCS = stored + 256: one more byte than the blocks hold
			return f
		}), "declares 521 decompressed bytes, its blocks hold at most 520"},
		{"truncated header", good[:5], "truncated"},
	}
	for _, c := range cases {
		_, err := walkBytes(c.frame)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := walkBytes(good[:5]); !errors.Is(err, errTruncated) {
		t.Errorf("truncated header: %v, want errTruncated", err)
	}
}
