// Package accelsim reads the traces of Accel-Sim's NVBit tracer (the
// post-processed `.traceg` text, plain, `.gz` or `.xz`, and Accel-Sim 2.0's
// `.tracez`) as a [trace.Source] of SASS atomics, and NVBit's own mem_trace
// text (see [NewMemTraceReader]).
//
// # Sources
//
// The format is what its public writer writes; where the writer and a
// reader disagree, this package follows the writer. All of these are in
// github.com/accel-sim/accel-sim-framework:
//
//   - util/tracer_nvbit/tracer_tool/tracer_tool.cu, the tracer: the kernel
//     header's `-key = value` lines, and per executed warp instruction
//     `[line] PC mask dest_num [dests] opcode src_num [srcs] mem_width
//     [compression addresses…] [immediate]` (recv_thread_fun). Tracer
//     version 3 (commit 475a282, 2020) added the compressions, 4 (fbfda53,
//     2022) the `-enable lineinfo` line number, 5 (b45bb82, 2024; still 5
//     at 8d0785d and 1e8951b) the trailing immediate. Before version 3
//     ("1.2", e28f47e) each line began with its thread block x y z and warp.
//     No source defines a version 6: TRACER_VERSION is "1.2", "3", "4" or
//     "5" on every branch and pull request of the repository (dev at
//     73f9fac, 1e8951b); any other version is an error that names these.
//   - util/tracer_nvbit/tracer_tool/traces-processing/post-traces-processing.cpp,
//     which groups the tracer's lines by block and warp into the `.traceg`:
//     `#BEGIN_TB`, `thread block = x,y,z`, then per warp `warp = n` and
//     `insts = n` and its n lines, `#END_TB`; `kernelslist.g` lists the
//     kernel files (and `MemcpyHtoD,…` lines, which carry no instruction).
//     Its newest form (the one that includes tracez_format.h) adds
//     `cluster id = x,y,z`, `cluster cta = x,y,z` and `cluster rank = n`
//     after `thread block`, and writes `.tracez`.
//   - util/tracer_nvbit/tracer_tool/tracez_format.h (commit e1c2b67): the
//     `.tracez` layout: the kernel header text and a NUL; u32 dict_size,
//     u32 subchunk_insts; the zstd dictionary; per warp u32 inst_count, u32
//     num_subchunks and per sub-chunk u32 size and a zstd frame (with the
//     dictionary) of the warp's lines joined by '\n'; the index footer
//     (u32 num_tbs, per block 11 u32: thread block, cluster id, cluster cta,
//     cluster rank, warp count; per warp u32 inst_count, u32 num_subchunks,
//     u64 file_offset, u32 per sub-chunk); and the footer's u64 offset in
//     the last 8 bytes. All integers little-endian (the writer fwrites
//     them on x86).
//   - gpu-simulator/trace-parser/trace_parser.cc (dev, 73f9fac), the
//     simulator's reader, for what it accepts beyond that: version < 3
//     lines carry the block-and-warp prefix. Its base_delta_decompress
//     reads one delta per active lane, where base_delta_compress writes
//     one fewer (the first active lane's address is the base): this
//     package reads active-1 deltas, as written.
//
// Compressions (address_format in tracer_tool.cu): 0 lists one address per
// active lane; 1 gives base and stride over the active lanes, which the
// writer uses only when they are one contiguous run (an instruction with
// no active lane is written `1 0x0 0`); 2 gives the first active lane's
// address, then each further active lane's difference from the previous
// active lane's. The mask written is the active mask ANDed with the guard
// predicate (version 5); a lane outside it did not run.
//
// # Mapping
//
// An opcode whose first part is ATOM, ATOMG, ATOMS or RED (the atomic
// opcodes of NVIDIA's CUDA Binary Utilities instruction set table) becomes
// a SASS dialect instruction (trace/parse_sass.go) with the opcode as
// written and canonical registers: `OPCODE Rd, [R2], R4` (`, R5` or `, R6`
// for the 32- or 64-bit CAS's Rc; Rd is R0, or RZ when the tracer saw no
// destination; RED has none). Only R2, the address, is bound: the trace
// is address-only ([trace.Header.AddressOnly]). Its thread block becomes
// the `.group`: the linear block id x + y·gx + z·gx·gy from the kernel's
// `-grid dim`, after the blocks of the kernels before it in the
// kernelslist (so two kernels' blocks, and their shared memories, never
// meet); `warp = n` becomes the `.warp`. A grid of more than 2^40 blocks
// is refused (its product formed so that sizes near 2^32 cannot wrap it
// to a small one), and so is a kernel (a launch) that follows more than
// 2^62 blocks of the ones before: its groups' numbers could wrap around.
// A block's `cluster id = x,y,z` line (Hopper clusters) becomes a
// .cluster directive record ([trace.Cluster]) of its group, numbered
// x + y·gx + z·gx·gy after the earlier kernels' groups as the block is,
// so that the races table's .cluster scope uses the trace's own
// clusters; `cluster cta` and `cluster rank` are checked and not kept. A
// .tracez's index holds the same cluster fields for every block, written
// whether or not the launch had clusters; they are not read. ATOMS addresses are offsets in the
// block's shared memory: an address at or above the kernel's `-shmem
// base_addr` (when given) is taken relative to it, and must then fit 32
// bits. An atomic opcode the SASS parser does not take (ATOMS.POPC.INC,
// ATOMS.CAST.SPIN, …) and every other opcode is skipped and counted
// ([Stats]).
//
// # Invariants
//
//  1. Streaming: memory stays flat in trace length. A `.traceg` is read
//     line by line (the longest line is bounded, [MaxLine]); a `.tracez`
//     holds its index and one sub-chunk at a time.
//  2. Every instruction line is checked whole (its fields, its addresses,
//     the `insts` count of its warp), atomic or not; the first problem is
//     an error naming the file, line, column and field. Nothing panics on
//     any input (FuzzAccelSimReader, FuzzMemTraceReader).
//  3. Instructions come in file order: kernel by kernel, block by block,
//     warp by warp, as the post-processor wrote them.
package accelsim
