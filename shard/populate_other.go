//go:build !linux

package shard

// canPopulate is whether populate can fault a chunk in here.
const canPopulate = false

// populate does nothing here: a chunk's pages fault in on first use.
func populate(*Chunk) error { return nil }
