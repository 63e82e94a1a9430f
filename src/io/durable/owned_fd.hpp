// A POSIX file descriptor closed on every path out of a scope (an error
// thrown between open(2) and the end of the work included). Not a file
// abstraction: callers use `fd` with the system calls they need (pread,
// pwrite, copy_file_range, fsync). Errors of close(2) are ignored: a caller
// that needs its data on disk calls fsync(2) on `fd` first and checks it.
#pragma once

#include <unistd.h>

namespace bloomshard::io {

struct OwnedFd {
  int fd;  ///< < 0: nothing to close (a failed open)
  explicit OwnedFd(int f) noexcept : fd(f) {}
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace bloomshard::io
