// Package model is the model of a recorded run of file-system mode (docs/fs-mode.md): the
// logical operations of the run, the abstract persistence models that say how they reach the
// disk, the legal crash states, and the crash directories built from them. It is the middle
// stage of the pipeline strace -> model -> explore (packages fs/strace, fs/model, fs/explore).
//
// # Logical operations
//
// [Snapshot] copies the workload directory before the run (hard links, symbolic links and modes
// kept): the initial state every crash directory is built from. [BuildModel] reads that
// snapshot and the trace of the run (FS_OP, OUTPUT and OP_BEGIN records, package fs/strace) and
// returns a [Model]: the initial inodes, directory entries and file sizes (bytes), and the
// run's logical operations over inodes and directory entries ([Op]: creat, mkdir, symlink,
// link, unlink, rmdir, rename, trunc, write, append, fsync, sync, and stdout for an output), in
// the order of the trace, each with its system call, its trace record, its site and call stack
// and the workload operation it belongs to. A write past a file's end becomes a size change and
// an append; offsets and sizes are in bytes. A write the kernel makes durable on return (an
// O_DSYNC or O_SYNC descriptor, RWF_DSYNC or RWF_SYNC: open(2), pwritev2(2)) is followed by the
// fdatasync or fsync of its byte range it implies; fallocate's zeroing is an overwrite of
// zeros, its allocation a size change; copy_file_range a write of the source's bytes as the run
// left them; an O_TMPFILE file has no name until a link gives it one. [Verify] checks the model: every operation
// persisted must rebuild the directory the run left (names, types, contents, link targets).
//
// # Persistence models
//
// An [APM] turns the logical operations into micro-operations ([Micro], [APM.Build]): a write
// of data, zeros or garbage to a byte range of a file, a size change, a directory entry
// created, removed or renamed, a sync, an output; each with the earlier micro-operations that
// must persist before it (Micro.Deps, not transitively closed). A [Split] says how writes,
// appends and truncations are cut into pieces that persist independently: Count pieces of equal
// size, or pieces ending at multiples of Aligned bytes. [APMs] are "default" (ALICE's default
// model: any order between two barriers, writes cut into 1 and 3 pieces and 4 KiB blocks,
// appends that may expose zeros or garbage, a file's fsync that does not persist its name),
// "ext4-ordered" (ext4 with data=ordered and delayed allocation) and "ext4-journal" (ext4 with
// data=journal: program order); docs/fs-mode.md, "Persistence models", tabulates the
// directories each allows for small runs and lists where scry differs from ALICE's code (a
// rename is atomic in every model).
//
// # Crash states and crash directories
//
// A crash state ([State]) says which micro-operations of a build persisted. A crash after
// micro-operation end-1 leaves a legal one ([Legal], [LegalStates]) when it holds every barrier
// before end (a sync that returned, an output the user saw) and the dependencies of every
// micro-operation it holds; [Free] lists those a crash there may lose, so a crash point has at
// most 2^len(Free) legal states. [Materialize] builds a state as a crash directory: the
// snapshot's entries with the persisted directory operations applied, untouched files cloned
// (FICLONE, copy-on-write) or copied from the snapshot, changed ones patched with their
// persisted writes and size changes; it returns what the persisted outputs printed. [Digest]
// identifies a crash directory and that output by a SHA-256 hash, so that a finding's state can
// be rebuilt and checked later (package fs/explore's Replay). [LegalUnder] says whether a
// state of one model, or one leaving the same directory, is legal under another: the models a
// finding names.
//
// # Sources
//
// ALICE (Pillai et al., OSDI'14): §3.2 for the abstract persistence model, micro-operations and
// the crash states a model allows; §4.1 for the logical operations over inodes and directory
// entries that a trace of system calls becomes; §4.2 for the default model and its splits;
// Table 1 (and §2.3) for the persistence properties of ext4 the two ext4 models encode.
// Barowsky et al., "Improving Application Crash Consistency with Symbolic Execution and
// Fuzzing" (2021), §3.1.3 for that chain as scry takes it (system calls parsed into
// micro-operations, the model's constraints deciding which crash states are reachable) and §6
// for the models worth running: the default model, the least constrained, which reorders
// arbitrarily between syncs, and ext4-ordered.
//
// # Errors
//
// Snapshot: a file that cannot be read, or a special file (device, socket, fifo; wrapping
// exec.ErrSpecialFile). BuildModel: an unreadable snapshot, or a trace error other than
// truncation (a truncated trace is modeled up to its cut, with a warning in Model.Warnings;
// what the model cannot represent is warned about there too). [APMByName]: an unknown name.
// Materialize: the destination exists (fs.ErrExist), or an I/O error building it. Verify and
// Digest: I/O errors. LegalStates returns false, not an error, past its limit of states.
package model
