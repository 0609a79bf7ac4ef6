// Package shard is the simulated memory a replay runs on. It knows no ISA:
// it hands out [Page]s, 4 KiB of little-endian 32-bit words with a bitmap
// of the words written, and the engine decides what an instruction does to
// them.
//
// # Layout
//
// A memory instance's address space is cut into directories of 1024 pages
// (4 MiB): a directory is a dense array of page entries indexed directly by
// the address, so a lookup within 4 MiB of the last one (a [Cursor]
// remembers its last directory) is one indexed load, with no hashing or
// probing per access. Directories are found by (memory, address >> 22) in a
// small open-addressing table that is replaced whole, never changed, when
// one is added. Pages are allocated 64 at a time in a [Chunk], named by a
// 22-bit reference, so a word is named by 32 bits ([Entry.WordRef]) and the
// garbage collector sees one object per 256 KiB, not one per page. A chunk
// keeps its pages' words end to end and their written-word bitmaps end to
// end: the word of a reference is the chunk's word at its low 16 bits, so a
// loop over scattered words takes one load to find the chunk and indexes
// word and bit directly. The loop of scattered 32-bit additions
// ([Memory.AddWords]; [AddDense] over a caller's array of words;
// [Memory.AddSlots], which returns the old values) and the walk that finds a page's written words
// ([Page.Written]) are amd64 assembly (add_amd64.s, slots_amd64.s, written_amd64.s),
// with the same loops in Go elsewhere and as their tests' reference. On
// Linux a new chunk's memory is faulted in at
// once, by the goroutine that creates it (populate_linux.go), rather than
// a page at a time by the first store to each, which is the apply loop's.
//
// A page's shard is picked once, when the page is created: the xxhash of
// its key ([Hash]) mapped with a multiply-shift ([Memory.ShardIndex]). The
// engine gives each worker the pages of the shards it owns, so a page is
// only ever written by one worker in a batch.
//
// # Invariants
//
//  1. A page lives in exactly one shard, chosen only by its key's hash and
//     the shard count. The values a sequence of writes leaves are the same
//     for any shard count.
//  2. A page never moves: [Memory.Page] of a reference returns the same
//     page, and [Memory.Chunk] the same chunk, for the life of the
//     [Memory].
//  3. Lookups take no lock and may run in parallel with each other and with
//     creation; creation takes the memory's mutex, once per page. A page's
//     words are not synchronised: the caller makes sure one goroutine at a
//     time writes a page (the engine: the page's owner), and that readers
//     wait for writers (the engine: a barrier between batches).
//  4. No allocation on a hit: [Cursor.Resolve], [Cursor.WordAdds], [Memory.Lookup],
//     [Memory.Page], [Memory.Chunk] and [Hash] allocate nothing for a page
//     that exists.
//  5. A new page is all zeros with no word touched. A word is written when
//     it is non-zero or marked in [Page.Touched] ([Page.Written]): whoever
//     leaves a word zero marks it. The package marks only in
//     [Memory.AddWords] and [Memory.AddSlots] (a zero sum); the engine marks the words its other
//     loops write.
//  6. At most [MaxPages] pages (16 GiB): past them [Cursor.Resolve] returns
//     the zero Entry instead of a page, and the engine stops the replay.
//
// # Why it is a public package
//
// The engine, in another package, builds on these types, and the layout of
// the project names shard/ as the stage between trace decoding and the
// engine. Of its API a user embedding the engine needs only [Hash] and
// [Partition], to know which shard or partition (-partition i/n) an
// address falls in; the rest is public so that it can be tested and
// documented as a unit, and it promises what the invariants above say and
// nothing more.
//
// # Partitions
//
// A partitioned replay (-partition i/n, replay split) gives each of n
// processes the accesses to the addresses it owns. The unit of ownership
// is a 128-byte line ([LineBytes]): the 32 lines of a 4 KiB page go
// round-robin over the partitions, in an order and from a start that a
// hash h of the page picks ([Partition]):
//
//	owner(addr) = (lineOrder(line in page, h) + h·n / 2^64) mod n
//
// Why lines, round-robin, reordered and rotated:
//
//   - A line holds every access whole. Accesses that reach memory are
//     naturally aligned and at most 16 bytes; a misaligned one faults
//     before it touches memory and is counted by the line of its first
//     byte; an LSC vector or block access is split by element, each
//     element an access of its own. So every word is written by one
//     partition, and n memory tables are the whole one, word for word.
//   - A hot array is spread: a 4096-bin histogram (16 KiB, 128 lines) gives
//     each of n partitions 128/n of its lines exactly when n divides 32,
//     within one line a page otherwise. Owning whole pages, as this package
//     did before, put such an array in one to four partitions.
//   - The rotation keeps page strides from aliasing: the first lines of
//     4096 pages (arrays of structures a page apart) start in partitions
//     spread like the hash, not all in partition 0, as plain line mod n
//     would put them.
//   - The order (lineOrder: a bijection of the 32 lines that mixes the
//     bits of the line's index) keeps lines hot for the low bits of their
//     index from coming round to one partition: an R-MAT graph's hot
//     vertices have many zero bits, so in a plain round-robin its lines 0,
//     8, 16 and 24 of a page all went to one of 8 partitions, and bfs's
//     partitions took up to 1.59 times the mean load (bench/scale).
//     Being a bijection, it leaves a page's lines spread as evenly as
//     plain round-robin does.
//   - Lines, not words: a warp's accesses to consecutive words (a run, 32
//     lanes on 32 words) stay mostly in one or two partitions, so a split
//     trace carries each warp to few partitions.
//
// What ownership cannot spread is one word: all accesses to it are one
// partition's. The key names the memory instance the same way in every
// process (engine.PartitionKey: the space, surface and group), not by
// the order in which a replay met it, so that a split of one slice of a
// trace and the replay of another agree.
//
// # Hash
//
// [Hash] is xxhash64 (seed 0, as github.com/cespare/xxhash/v2 computes it)
// of a 16-byte key: uint64(mem) then addr>>PageShift, each little endian.
// It is written out inline for the fixed key length; a test checks it
// against xxhash.Sum64.
package shard
