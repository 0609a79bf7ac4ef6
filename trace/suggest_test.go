package trace

import (
	"fmt"
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"add", "add", 0}, {"ad", "add", 1}, {"adx", "add", 1},
		{"imni", "imin", 1}, // a swap is one edit
		{"exhc", "exch", 1}, {"cas", "xor", 3}, {"", "max", 3}, {"atomic_iadx", "atomic_iadd", 1},
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	ops := []string{"and", "or", "xor", "exch", "cas", "add", "inc", "dec", "min", "max", "atomic_iadd"}
	for _, tc := range []struct{ word, want string }{
		{"ad", "add"},  // and is as near; add shares more of the word
		{"ADD", "add"}, // case is ignored
		{"mxa", "max"},
		{"zz", ""},       // nothing within fewer edits than letters
		{"exchange", ""}, // 4 edits from exch
		{"zork", ""},     // 2 edits from or: too many for 4 letters
		{"atomc_iad", "atomic_iadd"},
		{"x", ""},
	} {
		if got := closest(tc.word, ops); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// TestItem7PTXOperationOrQualifier: issue 46 item 7. A misspelt PTX name
// where the operation goes is an unknown operation; one beside a written
// operation, or nearest to another qualifier, is an unknown qualifier.
// Each error points at the name.
func TestItem7PTXOperationOrQualifier(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"atom.global.ad.u32 d, [a], 1;", "13: unknown PTX atom operation .ad (and or xor exch cas add inc dec min max); did you mean .add?"},
		{"atom.mx.global.u32 d, [a], 1;", "6: unknown PTX atom operation .mx (and or xor exch cas add inc dec min max); did you mean .max?"},
		{"atom.global.zork.u32 d, [a], 1;", "13: unknown PTX atom operation .zork (and or xor exch cas add inc dec min max)"},
		{"atom.globl.add.u32 d, [a], 1;", "6: unknown PTX atom qualifier .globl; did you mean .global?"},
		{"atom.global.add.s33 d, [a], 1;", "17: unknown PTX atom qualifier .s33; did you mean .s32?"},
		{"atom.global.add.zork.u32 d, [a], 1;", "17: unknown PTX atom qualifier .zork"},
	} {
		_, err := ParseStatic(tc.text)
		se, ok := err.(*SyntaxError)
		if !ok || fmt.Sprintf("%d: %s", se.Col, se.Msg) != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
}

// Every dialect's unknown-operation error lists the dialect's operations.
func TestUnknownOperationListsForms(t *testing.T) {
	for _, tc := range []struct{ text, list string }{
		{"ATOM.FOO R0, [R1], R2", "(ADD MIN MAX INC DEC AND OR XOR EXCH CAS)"},
		{"DWORD_ATOMIC.FOO (16) T255 V10 V11 V0 V12", "(ADD SUB INC DEC MIN MAX XCHG CMPXCHG AND OR XOR IMIN IMAX PREDEC FMAX FMIN FCMPWR)"},
	} {
		_, err := ParseStatic(tc.text)
		if err == nil || !strings.Contains(err.Error(), "operation .FOO "+tc.list) || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: %v", tc.text, err)
		}
	}
}
