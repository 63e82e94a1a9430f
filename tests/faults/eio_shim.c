/* Test-only EIO injection at the system-call boundary (LD_PRELOAD): where
 * a real failing device cannot be had (no device-mapper here, so no
 * dm-error), writes and syncs fail with EIO while the file named by
 * BLOOMSHARD_EIO_TRIGGER exists, for file descriptors whose path contains
 * BLOOMSHARD_EIO_MATCH. Everything else passes through unchanged. Costs one
 * stat() per write while loaded; never linked into the product. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int should_fail(int fd) {
  const char* trigger = getenv("BLOOMSHARD_EIO_TRIGGER");
  const char* match = getenv("BLOOMSHARD_EIO_MATCH");
  struct stat st;
  if (trigger == NULL || match == NULL || stat(trigger, &st) != 0) return 0;
  char link[64];
  char path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  return strstr(path, match) != NULL;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* buf, size_t count) {
  if (should_fail(fd)) { errno = EIO; return -1; }
  return NEXT(write)(fd, buf, count);
}
ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  if (should_fail(fd)) { errno = EIO; return -1; }
  return NEXT(pwrite)(fd, buf, count, offset);
}
ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  if (should_fail(fd)) { errno = EIO; return -1; }
  return NEXT(pwrite64)(fd, buf, count, offset);
}
ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  if (should_fail(fd)) { errno = EIO; return -1; }
  return NEXT(pwritev)(fd, iov, iovcnt, offset);
}
ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  if (should_fail(fd)) { errno = EIO; return -1; }
  return NEXT(writev)(fd, iov, iovcnt);
}
int fsync(int fd) {
  if (should_fail(fd)) { errno = EIO; return -1; }
  return NEXT(fsync)(fd);
}
int fdatasync(int fd) {
  if (should_fail(fd)) { errno = EIO; return -1; }
  return NEXT(fdatasync)(fd);
}
