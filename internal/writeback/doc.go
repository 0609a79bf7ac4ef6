// Package writeback starts writing a file's bytes to its device as they
// are written, without waiting, so that the fsync that makes the file
// durable at its end finds most of it written already. The outputs that
// are committed by fsync and rename use it: the replay's tables (package
// columnar) and the slice files of a split (package split). Databases do
// the same (RocksDB's bytes_per_sync, PostgreSQL's backend_flush_after).
//
// # Invariants
//
//  1. The hint changes nothing about the file's bytes or durability:
//     every Write goes to the file as it is, and a failure to start
//     writing back is left to the fsync to report.
//  2. Writeback is asked for in consecutive ranges from offset 0, each
//     once at least the File's threshold has piled up since the last,
//     never past what was written (TestFile).
//  3. Where the system has no way to start writeback of a range without
//     waiting for it (not Linux), nothing is asked: the fsync writes the
//     whole file, as it would without this package.
package writeback
