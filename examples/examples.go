// Package examples holds example traces, embedded so that the replay
// binary can run one with no file at hand.
package examples

import _ "embed"

//go:embed simpleAtomicIntrinsics.tasm
var simpleAtomics []byte

// SimpleAtomicIntrinsics is the CUDA samples' simpleAtomicIntrinsics kernel
// (64 blocks of 256 threads, eleven atomics each) as a .tasm trace.
func SimpleAtomicIntrinsics() []byte { return simpleAtomics }

// SimpleAtomicIntrinsicsName is the file name of that trace.
const SimpleAtomicIntrinsicsName = "simpleAtomicIntrinsics.tasm"
