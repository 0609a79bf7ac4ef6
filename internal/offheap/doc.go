// Package offheap hands out memory that the Go collector does not manage:
// an Arena maps regions of anonymous memory from the operating system and
// gives out pieces of them by bumping a pointer, until Release unmaps them
// all at once.
//
// It is for large, long-lived tables of plain data, such as the engine's
// per-address statistics: a million addresses' slabs are 50 MiB that live
// until the end of a replay. Kept in the Go heap they raise the
// collector's heap goal by as much again (GOGC=100), and memory the
// replay frees near its end (batches, table buffers) is not reused until
// the heap reaches that goal. Outside the heap they cost their own size,
// the way VictoriaMetrics' fastcache keeps its buckets in mmap'd chunks
// (github.com/VictoriaMetrics/fastcache, malloc_mmap.go).
//
// # Invariants
//
//  1. Memory from Alloc is zeroed, aligned to Align bytes, and never moves.
//  2. It must hold no Go pointers: the collector does not scan it, so a
//     pointer stored there does not keep its target alive.
//  3. Nothing may touch it after Release: on Unix it is unmapped, and a
//     read faults. Release is idempotent.
//  4. An Arena is not safe for concurrent use; give each goroutine its own.
//  5. Where the system has no mmap (not Unix), under the race detector
//     (which watches only the Go heap), or when the system refuses a
//     mapping, a region comes from the Go heap instead and Release drops
//     it: the same behaviour, without the gain.
//  6. On Linux a region is one transparent huge page, aligned and advised
//     (MADV_HUGEPAGE), where the system grants them: a table scattered
//     over tens of MiB then misses the TLB and faults once per 2 MiB, not
//     once per 4 KiB page.
//  7. Memory is resident once written. Write a fresh piece before reading
//     it: a first read maps the kernel's zero page, and the write after it
//     faults again and flushes the TLB of every core the process runs on.
//  8. A Block is one owner's buffer, mapped as a region is, for buffers
//     that are not the arena's kind (a reader's frames, a batch's
//     instructions, a table writer's slabs): outside the heap they do not
//     raise the collector's goal (in it, with their huge-page padding,
//     they brought a short replay two more collections). Its owner
//     releases it when done; one dropped unreleased (a sync.Pool's) is
//     unmapped once the collector finds it unreachable (runtime.AddCleanup).
//     Nothing may hold a slice of a Block's bytes past its owner.
//  9. AdviseHeap is the one measure on the Go heap itself: called once,
//     first in main, it advises the heap's next pages into huge pages
//     and leaves the collector's heap goal, and the runtime's memory
//     that a memory limit counts, as they were. It allocates nothing
//     that stays.
package offheap
