package trace

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// addrOnlyText is an address-only trace as replay disasm prints it: the
// directive, then instructions with their addresses (and predicates)
// bound and their data registers left unbound.
const addrOnlyText = `.addresses-only
ATOMG.E.ADD.STRONG.GPU R0, [R2], R4 | R2=[0x1000,0x1004,0x1008,0x100c,0x1010,0x1014,0x1018,0x101c,0x1020,0x1024,0x1028,0x102c,0x1030,0x1034,0x1038,0x103c,0x1040,0x1044,0x1048,0x104c,0x1050,0x1054,0x1058,0x105c,0x1060,0x1064,0x1068,0x106c,0x1070,0x1074,0x1078,0x107c]
.group 3
.warp 1
RED.E.ADD.F32.FTZ.RN.STRONG.SYS [R2], R4 | R2=0x2000 mask=0x3
ATOMS.CAS R0, [R2], R4, R5 | R2=0x40:8 mask=0xf0
`

// TestAddressOnlyRoundTrip: the .addresses-only directive sets
// Header.AddressOnly, data registers read as zero and need no binding,
// the binary form keeps the mark in its header flags, and disasm prints
// the same text back.
func TestAddressOnlyRoundTrip(t *testing.T) {
	tr, err := NewTextReader(strings.NewReader(addrOnlyText), "a.tasm")
	if err != nil {
		t.Fatal(err)
	}
	var bin bytes.Buffer
	var insts []Inst
	var bw *BinaryWriter
	for {
		in, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if bw == nil {
			if !tr.Header().AddressOnly {
				t.Fatal("Header.AddressOnly is false after .addresses-only")
			}
			if bw, err = NewBinaryWriter(&bin, tr.Header()); err != nil {
				t.Fatal(err)
			}
		}
		insts = append(insts, *in)
		if err := bw.Write(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	if len(insts) != 3 {
		t.Fatalf("%d instructions, want 3", len(insts))
	}
	if got := insts[1].Static; got.Scope != "sys" || got.HasDst || got.Type != TypeF32 {
		t.Errorf("RED: scope %q, HasDst %v, type %s; want sys, false, f32", got.Scope, got.HasDst, got.Type)
	}
	if got := insts[2].Static; got.Space != Shared || got.Op != OpCAS || insts[2].Mask != 0xf0 || insts[2].Group != 3 || insts[2].Warp != 1 {
		t.Errorf("ATOMS.CAS: space %s op %s mask %#x group %d warp %d", got.Space, got.Op, insts[2].Mask, insts[2].Group, insts[2].Warp)
	}
	br, err := NewBinaryReader(bytes.NewReader(bin.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !br.Header().AddressOnly {
		t.Fatal("the binary header lost the address-only flag")
	}
	var out bytes.Buffer
	tw, err := NewTextWriter(&out, br.Header())
	if err != nil {
		t.Fatal(err)
	}
	if err := Copy(tw, br); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	if out.String() != addrOnlyText {
		t.Errorf("disasm of the binary form:\n%s\nwant:\n%s", out.String(), addrOnlyText)
	}
}

func TestAddressOnlyErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"ATOM.ADD R0, [R2], R4 | R2=0 R4=1\n.addresses-only\n", "a.tasm:2:1: .addresses-only must come before the first instruction"},
		{".addresses-only\nATOM.ADD R0, [R2], R4 | R2=0 R4=1\n", "a.tasm:2:33: R4 is data, and this trace carries addresses only"},
		{".addresses-only\nATOM.ADD R0, [R2], R4 | R4=1\n", "reads R2, which is bound nowhere"},
		{".addresses-only yes\n", "a.tasm:1:17: .addresses-only takes nothing after it"},
	} {
		tr, err := NewTextReader(strings.NewReader(tc.src), "a.tasm")
		if err == nil {
			for err == nil {
				_, err = tr.Next()
			}
		}
		if err == io.EOF || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
