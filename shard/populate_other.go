//go:build !linux

package shard

// populate does nothing here: a chunk's pages fault in on first use.
func populate(*Chunk) error { return nil }
