package trace

// parseSASS parses a SASS ATOM (../shared/seeds/sass-ATOM.txt).
func parseSASS(lx *lexer, opcode string, opStart int, pred *predRef) (*Static, error) {
	return nil, errAt(opStart, "SASS ATOM is not supported yet")
}
