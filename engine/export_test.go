package engine

// The random trace generators, for the tests of package engine_test
// (split_test.go), which import packages that import engine.
var (
	RandomPTX  = randomPTX
	RandomSASS = randomSASS
	RandomVISA = randomVISA
	RandomLSC  = randomLSC
	RandomAdds = randomAdds
)

// WarpSectors and HasConflictsAVX512, for TestWarpSectors.
var (
	WarpSectors        = warpSectors
	HasConflictsAVX512 = hasConflictsAVX512
)
