// A sleeping lock around the writes that several processes of one node make
// to one file (io/output/positional_output.hpp): flock(2) of the whole file,
// taken only where the file lives on a local file system.
//
// Why: a buffered write on Linux holds the inode's rwsem for writing while it
// copies its bytes into the page cache, and a writer waiting for that rwsem
// spins on the CPU for as long as the holder runs (rwsem optimistic
// spinning). The lockstep layout's ranks write the blocks of one output at
// the same point of every round, so on one node every waiting rank burned a
// core for the whole of the other's copy: 6% of the 10M-record job's CPU at
// 2 ranks (docs/performance.md "Ranks that write one file wait asleep").
// flock's waiters sleep, so the core goes to the rank's next parse; the
// writes are serialized as before (the rwsem did that), no more.
//
// Where: only on file systems whose locks are the node's own (ext4, XFS,
// btrfs, tmpfs, overlayfs, f2fs, bcachefs): there the rwsem contention is
// the node's and flock costs two system calls. On a network or parallel file
// system (NFS, Lustre, GPFS, BeeGFS, CIFS, FUSE...) flock is a server round
// trip, emulated, or refused (Lustre without -o flock), while ranks on other
// nodes never share this node's rwsem: there nothing is locked, as before.
#pragma once

namespace bloomshard::io {

/// Whether `fd` lies on a file system of the list above (statfs f_type).
/// False when statfs fails.
[[nodiscard]] bool on_local_file_system(int fd) noexcept;

/// Holds flock(fd, LOCK_EX) from construction to destruction when `enabled`
/// (a no-op otherwise). The lock is for speed, not correctness (the byte
/// ranges the writers agreed on keep the writes correct without it), so
/// one that cannot be had is gone without: a file system that refuses
/// flock, or a holder that keeps it for over a second (polled with
/// LOCK_NB and a backoff of 25-400 us, so that a stopped holder can never
/// hang a write).
class LocalWriteLock {
 public:
  LocalWriteLock(int fd, bool enabled) noexcept;
  ~LocalWriteLock();
  LocalWriteLock(const LocalWriteLock&) = delete;
  LocalWriteLock& operator=(const LocalWriteLock&) = delete;

  [[nodiscard]] bool held() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;  // the locked file; -1: none held
};

}  // namespace bloomshard::io
