// Package outdir creates the directory an output goes into so that a writer
// that fails can take back what it created: the table directory of a replay
// (package columnar) and the parents of a file that replay asm, gen, disasm
// or report writes.
//
// # Invariants
//
//  1. [Create] makes the directory and every missing parent, as
//     os.MkdirAll does, and returns the ones it made itself, outermost
//     first. A directory that another process made in the meantime (its
//     os.Mkdir fails with fs.ErrExist) is not among them.
//  2. [Made.Remove] removes those directories, innermost first, with
//     os.Remove: only an empty directory goes. A directory that holds
//     anything (a file another writer put there, a journal a failed commit
//     left) stays, and so do its parents. A directory that existed before
//     Create is never removed.
//  3. [Sync] syncs a directory's entries, best effort: it reports
//     nothing, and does nothing where a directory cannot be synced.
//  4. [SyncThreads] only raises GOMAXPROCS, for the length of a commit's
//     syncs, and puts back the value before unless another was set
//     meanwhile.
package outdir
