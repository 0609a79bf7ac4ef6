package accelsim

import (
	"fmt"
)

// Error is a problem in a trace file, with its place: the file, the line
// (1-based; 0 for a place in a binary .tracez, which gives Offset), the
// byte column of the field (1-based; 0 when the line as a whole is
// wrong), and the field's name as the tracer's format line names it
// (`mask`, `mem_width`, `addresses` …).
type Error struct {
	File   string
	Line   int
	Col    int
	Offset int64 // .tracez: the byte offset of the problem; -1 otherwise
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	place := e.File
	switch {
	case e.Line > 0 && e.Col > 0:
		place = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	case e.Line > 0:
		place = fmt.Sprintf("%s:%d", e.File, e.Line)
	case e.Offset >= 0:
		place = fmt.Sprintf("%s: at byte offset %d", e.File, e.Offset)
	}
	if e.Field != "" {
		return place + ": " + e.Field + ": " + e.Msg
	}
	return place + ": " + e.Msg
}
