//go:build linux

package trace

import (
	"math/rand/v2"
	"syscall"
	"testing"
)

func needFixedSIMD(t testing.TB) {
	t.Helper()
	if !hasFixedSIMD() {
		t.Skip("this CPU has no AVX-512 VBMI: readFixed runs Go's loops only (every other test)")
	}
}

// guarded returns n bytes that end where an inaccessible page begins: a
// load of one byte past them faults.
func guarded(t *testing.T, n int) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size := (n + page - 1) / page * page
	m, err := syscall.Mmap(-1, 0, size+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(m) })
	if err := syscall.Mprotect(m[size:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	return m[size-n : size : size]
}

// TestFixedAVX512MatchesGo decodes random lists of every width, shift and
// length from 0 to 70 lanes (eight-lane steps, and every tail) with the
// assembly and with Go's loops, and wants the same values. Each list ends
// at an inaccessible page, so a load past its bytes crashes the test, and
// the values are followed by sentinels that a store past them would
// change.
func TestFixedAVX512MatchesGo(t *testing.T) {
	needFixedSIMD(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for w := 1; w <= 8; w++ {
		for _, sh := range []uint8{0, 1, 2, 3, 7, 15} {
			for n := 0; n <= 70; n++ {
				q := guarded(t, n*w)
				for i := range q {
					q[i] = byte(rng.Uint32())
				}
				lo := rng.Uint64()
				if n%3 == 0 {
					lo = uint64(rng.Uint32() >> 8)
				}
				want := make([]uint64, n)
				fixedGo(want, q, w, lo, sh)
				got := make([]uint64, n+8)
				for i := range got {
					got[i] = 0xfeedface
				}
				fixedAVX512(got[:n], q, w, lo, uint64(sh))
				for i := range n {
					if got[i] != want[i] {
						t.Fatalf("w=%d sh=%d n=%d: lane %d is %#x, want %#x", w, sh, n, i, got[i], want[i])
					}
				}
				for i := n; i < len(got); i++ {
					if got[i] != 0xfeedface {
						t.Fatalf("w=%d sh=%d n=%d: stored past the list, at lane %d", w, sh, n, i)
					}
				}
			}
		}
	}
}

// BenchmarkReadFixed decodes a warp's list of 32 offsets, one and three
// bytes wide (a histogram's and uniform-1Mi's), as readFixed does (simd)
// and with Go's loops (go).
func BenchmarkReadFixed(b *testing.B) {
	for _, w := range []int{1, 3} {
		q := make([]byte, 32*w+1)
		for i := range q {
			q[i] = byte(i * 37)
		}
		vs := make([]uint64, 32)
		b.Run("w="+string(rune('0'+w))+"/go", func(b *testing.B) {
			for b.Loop() {
				fixedGo(vs, q, w, 4096, 2)
			}
		})
		b.Run("w="+string(rune('0'+w))+"/simd", func(b *testing.B) {
			needFixedSIMD(b)
			for b.Loop() {
				fixedAVX512(vs, q[:32*w], w, 4096, 2)
			}
		})
	}
}
