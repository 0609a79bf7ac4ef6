package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestItem7UnknownOperationMessages: issue 46 item 7. An unknown operation
// gets one message in every dialect: the file named once, as given, then
// the line and the column of the misspelt name, "operation", the
// operations the dialect has, and the nearest of them. Both a replay and
// asm report it so.
func TestItem7UnknownOperationMessages(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("traces", 0o755); err != nil {
		t.Fatal(err)
	}
	const first = "atom.global.add.u32 d, [a], 1; | a=0x1000\n"
	cases := []struct {
		dialect, line, want string
	}{
		{"ptx", "atom.global.ad.u32 d, [a], 1; | a=0x1000",
			"traces/ptx.tasm:2:13: unknown PTX atom operation .ad (and or xor exch cas add inc dec min max); did you mean .add?"},
		{"sass", "@P0 ATOM.E.ADX R0, [R2 + 8], R8 | P0=0xffffffff R2=0x10000 R8=1",
			"traces/sass.tasm:2:12: unknown SASS ATOM operation .ADX (ADD MIN MAX INC DEC AND OR XOR EXCH CAS); did you mean .ADD?"},
		{"visa", "(P1) DWORD_ATOMIC.IMNI (16) T255 V10 V11 V0 V12 | P1=0xffff V10=0x0:4 V11=1",
			"traces/visa.tasm:2:19: unknown vISA DWORD_ATOMIC operation .IMNI (ADD SUB INC DEC MIN MAX XCHG CMPXCHG AND OR XOR IMIN IMAX PREDEC FMAX FMIN FCMPWR); did you mean .IMIN?"},
		{"lsc", "(P1) lsc_atomic_iadx.ugm (M1,32) V13:d32 flat[V12]:a64 V14 V15 | P1=0xffffffff V12=0x100:4 V14=0 V15=5",
			"traces/lsc.tasm:2:10: unknown LSC operation lsc_atomic_iadx (load load_strided load_quad load_block2d load_status " +
				"store store_uncompressed store_strided store_quad store_block2d atomic_iinc atomic_idec atomic_load atomic_store " +
				"atomic_iadd atomic_isub atomic_smin atomic_smax atomic_umin atomic_umax atomic_icas atomic_fadd atomic_fsub " +
				"atomic_fmin atomic_fmax atomic_fcas atomic_and atomic_or atomic_xor apndctr_atomic_add apndctr_atomic_sub); " +
				"did you mean lsc_atomic_iadd?"},
	}
	for _, tc := range cases {
		t.Run(tc.dialect, func(t *testing.T) {
			name := filepath.Join("traces", tc.dialect+".tasm")
			if err := os.WriteFile(name, []byte(first+tc.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := replayCmd(t, "asm", name, "-o", tc.dialect+".zst")
			if code != 1 || errOut != "replay: "+tc.want+"\n" {
				t.Errorf("asm: exit %d, stderr\n%q\nwant exit 1 and\n%q", code, errOut, "replay: "+tc.want+"\n")
			}
			code, _, errOut = replayCmd(t, "-o", tc.dialect+".tables", name)
			if code != 1 || !strings.HasPrefix(errOut, "replay: "+tc.want) || strings.Count(errOut, tc.dialect+".tasm") != 1 {
				t.Errorf("replay: exit %d, stderr\n%q\nwant exit 1, the file named once, and to start with\n%q", code, errOut, "replay: "+tc.want)
			}
		})
	}
}
