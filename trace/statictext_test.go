package trace

import (
	"strings"
	"testing"
)

// TestItem8StaticTextAsWritten: issue 46 item 8. A Static's text is the
// instruction as written, a trailing ';' (and a blank before it) kept
// when there is one, none added when there is none; parsing that text
// again, or an LSC text without its LSC fields, gives the same instruction.
func TestItem8StaticTextAsWritten(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  atom.global.add.u32 d, [a], 1;  ", "atom.global.add.u32 d, [a], 1;"},
		{"atom.global.add.u32 d, [a], 1 ", "atom.global.add.u32 d, [a], 1"},
		{"ATOM.ADD R0, [R1], R2 ;", "ATOM.ADD R0, [R1], R2 ;"},
		{"ATOM.ADD R0, [R1], R2; &wr0 ?sched", "ATOM.ADD R0, [R1], R2; &wr0 ?sched"},
		{"(P1) DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12;", "(P1) DWORD_ATOMIC.ADD (16) T255 V10 V11 V0 V12;"},
		{"lsc_atomic_iadd.ugm (M1,32) V13:d32 flat[V12]:a64 V14;", "lsc_atomic_iadd.ugm (M1,32) V13:d32 flat[V12]:a64 V14;"},
		{"lsc_atomic_iadd.ugm (M1,32) V13:d32 flat[V12]:a64 V14", "lsc_atomic_iadd.ugm (M1,32) V13:d32 flat[V12]:a64 V14"},
	} {
		st, err := ParseStatic(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if st.Text != tc.want {
			t.Errorf("ParseStatic(%q).Text = %q, want %q", tc.in, st.Text, tc.want)
		}
		again, err := ParseStatic(st.Text)
		if err != nil || again.Op != st.Op || again.Type != st.Type || len(again.Inputs) != len(st.Inputs) || again.Text != st.Text {
			t.Errorf("%q parsed again: %+v, %v", st.Text, again, err)
		}
		if st.Dialect == DialectLSC {
			l, err := LSCOf(&Static{Dialect: DialectLSC, Text: st.Text})
			if err != nil || l.SubOp != "atomic_iadd" || l.SFID != "ugm" || strings.Contains(l.AddrType, ";") {
				t.Errorf("LSCOf(%q) = %+v, %v", st.Text, l, err)
			}
		}
	}
}
