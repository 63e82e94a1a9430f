#include "io/output/local_write_lock.hpp"

#include <sys/file.h>
#include <sys/vfs.h>

#include <cerrno>

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
  int rc = 0;
  do {
    rc = ::flock(fd, LOCK_EX);
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) fd_ = fd;
}

LocalWriteLock::~LocalWriteLock() {
  if (fd_ >= 0) (void)::flock(fd_, LOCK_UN);
}

}  // namespace bloomshard::io
