// Package shard is the simulated memory a replay runs on. It knows no ISA:
// it hands out [Block]s, 256-byte granules of little-endian 32-bit words,
// and the engine decides what an instruction does to them.
//
// The layout follows VictoriaMetrics/fastcache: a fixed array of shards;
// every access hashes its granule key once ([Hash]), picks a shard with a
// multiply-shift ([Memory.ShardIndex]) and hands the hash down to
// [Shard.Block]. A shard keeps a one-entry memo of the last block it
// returned, an open-addressing table (power-of-two size, linear probing)
// from (mem, granule) to a block reference, and its blocks in a few large
// chunks. Neither the table nor the chunks hold pointers, so the garbage
// collector sees a handful of objects per shard, not one per block.
//
// # Invariants
//
//  1. A granule lives in exactly one shard, chosen only by its key's hash
//     and the shard count: [Memory.ShardIndex]([Hash](mem, addr)). Two
//     memories with the same shard count place every granule alike, and
//     the values a sequence of writes leaves are the same for any shard
//     count.
//  2. A block never moves. The pointer [Shard.Block] returns stays valid,
//     and keeps addressing the same granule, for the life of the
//     [Memory]: growing the table moves references, never blocks, and
//     chunks are never reallocated.
//  3. A shard's mutex serialises its users. [Shard.Block], [Shard.Lookup],
//     [Shard.Len] and [Shard.ForEach], and every read or write through a
//     returned *Block, must happen with the shard's lock held (or with the
//     shard otherwise confined to one goroutine). [Memory.Blocks] takes
//     each shard's lock in turn.
//  4. No allocation on a hit: [Hash], [Hasher.Hash], [Memory.ShardIndex], and
//     [Shard.Block] or [Shard.Lookup] on a block that exists allocate
//     nothing. Creating a block allocates only when a chunk fills or the
//     table grows, which is amortised over many blocks.
//  5. A new block is all zeros with no word touched. The package never sets
//     [Block.Touched]; the engine does, for the words it writes.
//
// # Hash
//
// [Hash] is xxhash64 (seed 0, as github.com/cespare/xxhash/v2 computes it)
// of a 16-byte key: uint64(mem) then addr>>GranuleShift, each little
// endian. It is written out inline for the fixed key length; a test checks
// it against xxhash.Sum64. A [Hasher] memoises it for runs of accesses
// to one granule, so a dispatcher routing coalesced lanes hashes once a
// granule rather than once a lane.
package shard
