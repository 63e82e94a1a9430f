#include "io/output/local_write_lock.hpp"

#include <sys/file.h>
#include <sys/vfs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

namespace bloomshard::io {

namespace {

// statfs(2) f_type values (linux/magic.h), listed here so that the header
// of one kernel version does not decide which are known.
constexpr unsigned long kLocalFileSystems[] = {
    0xEF53UL,      // ext2/3/4
    0x58465342UL,  // XFS
    0x9123683EUL,  // btrfs
    0x01021994UL,  // tmpfs
    0x794C7630UL,  // overlayfs
    0xF2F52010UL,  // f2fs
    0xCA451A4EUL,  // bcachefs
};

}  // namespace

bool on_local_file_system(int fd) noexcept {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  const auto type = static_cast<unsigned long>(fs.f_type) & 0xFFFFFFFFUL;
  for (const unsigned long local : kLocalFileSystems) {
    if (type == local) return true;
  }
  return false;
}

LocalWriteLock::LocalWriteLock(int fd, bool enabled) noexcept {
  if (!enabled || fd < 0) return;
  // Polled, not blocking: a holder that never lets go (a rank stopped by
  // SIGSTOP or a debugger between its flock and its write) delays each
  // write by kMaxWait at most, where a blocking flock would hang the job.
  // A write takes ~1-3 ms (4 MiB into the page cache), so the backoff's
  // cap keeps the wake-up within a fraction of one.
  constexpr auto kMaxWait = std::chrono::seconds(1);
  constexpr auto kMaxPause = std::chrono::microseconds(400);
  const auto give_up = std::chrono::steady_clock::now() + kMaxWait;
  auto pause = std::chrono::microseconds(25);
  while (true) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      return;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return;  // not lockable here: write unlocked
    if (std::chrono::steady_clock::now() >= give_up) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(kMaxPause, pause * 2);
  }
}

LocalWriteLock::~LocalWriteLock() {
  if (fd_ >= 0) (void)::flock(fd_, LOCK_UN);
}

}  // namespace bloomshard::io
