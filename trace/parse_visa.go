package trace

// parseVISA parses a vISA DWORD_ATOMIC (../shared/seeds/visa-DWORD_ATOMIC.md).
// The text starts at the opcode or at a (P) predicate.
func parseVISA(lx *lexer, opcode string, opStart int) (*Static, error) {
	return nil, errAt(opStart, "vISA DWORD_ATOMIC is not supported yet")
}
