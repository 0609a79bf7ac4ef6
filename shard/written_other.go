//go:build !amd64

package shard

func written(words *[PageWords]uint32, touched, dst *[PageWords / 64]uint64, _ *[PageWords]uint32) {
	writtenGeneric(words, touched, dst)
}
