package trace

// parseLSC parses an Intel LSC instruction (../shared/seeds/visa-LSC_UNTYPED.md).
// The text starts at the opcode or at a (P) predicate.
func parseLSC(lx *lexer, opcode string, opStart int) (*Static, error) {
	return nil, errAt(opStart, "LSC %s is not supported yet", opcode)
}
