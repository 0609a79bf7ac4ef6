package engine

import "errors"

// planLSC fills p for an Intel LSC instruction (../shared/seeds/visa-LSC_UNTYPED.md).
func planLSC(p *plan) error { return errors.New("LSC is not replayed yet") }
