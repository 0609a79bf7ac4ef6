package engine

import "errors"

// planVISA fills p for a vISA DWORD_ATOMIC (../shared/seeds/visa-DWORD_ATOMIC.md).
func planVISA(p *plan) error { return errors.New("vISA DWORD_ATOMIC is not replayed yet") }
