package shard

// written is writtenGeneric in assembly (written_amd64.s), and asks for
// the page next's words as it goes.
//
//go:noescape
func written(words *[PageWords]uint32, touched, dst *[PageWords / 64]uint64, next *[PageWords]uint32)
