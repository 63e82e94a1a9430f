/* Test-only file-system call recorder (LD_PRELOAD) for the crash-state
 * test (tests/faults/crash_states.py, docs/reliability.md "Crash states").
 * For paths under BLOOMSHARD_FSREC_ROOT (an absolute, symlink-free path)
 * it logs every successful open/creat/fopen, write/pwrite/writev/pwritev
 * (offset, length, the bytes), ftruncate/truncate, rename, unlink/remove,
 * mkdir/rmdir, fsync/fdatasync/sync_file_range/msync and close, one log
 * per process: BLOOMSHARD_FSREC_LOG/rec-<pid>.log (text) and rec-<pid>.dat
 * (the written bytes, back to back). Every record carries a sequence
 * number from one counter shared by all processes (an atomic in the
 * mmap'd file BLOOMSHARD_FSREC_LOG/seq), so the ranks' logs merge into
 * one order. Contract of that order: a data or namespace call takes its
 * number after it returns, a sync takes it before it is called, so a
 * write numbered below a sync had completed before the sync began (a
 * sync never claims a write that raced with it). Calls that make a name
 * (a creating open, mkdir, rename) also take it before the call: another
 * rank that opens the new name does so after that call began, so the
 * replay never sees a name opened before it was made.
 *
 * Limits: writes through a shared writable mmap, sendfile/copy_file_range
 * and fallocate are not recorded (the product makes none on these paths:
 * checked with strace, see docs/testing.md); dup'ed descriptors are not
 * followed. Calls glibc makes internally (fopen's open, fclose's close,
 * fwrite's write) do not pass through here: fopen and fclose are wrapped
 * themselves; stdio writes to a recorded path are not seen (libstdc++'s
 * ofstream writes with write(2), which is). Never linked into the product. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
enum { kMaxFds = 65536 };

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static int ready_ = 0; /* 1: recording, -1: off (no env or setup failed) */
static char root_[PATH_MAX];
static size_t root_len_ = 0;
static int log_fd_ = -1;
static int dat_fd_ = -1;
static uint64_t dat_off_ = 0;
static pid_t log_pid_ = 0;
static uint64_t* seq_ = NULL;
static char* fd_path_[kMaxFds];

/* Raw system calls for our own files: they must never come back here. */
static int raw_open(const char* path, int flags, mode_t mode) {
  return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
static void raw_write_all(int fd, const void* buf, size_t n) {
  const char* p = buf;
  while (n > 0) {
    const long put = syscall(SYS_write, fd, p, n);
    if (put <= 0) {
      if (put < 0 && errno == EINTR) continue;
      return;
    }
    p += put;
    n -= (size_t)put;
  }
}

/* Opens this process's log (again after a fork: the pid names it). Caller
 * holds lock_. */
static int setup_locked(void) {
  const pid_t pid = getpid();
  if (ready_ == 1 && log_pid_ == pid) return 1;
  if (ready_ == -1) return 0;
  const char* root = getenv("BLOOMSHARD_FSREC_ROOT");
  const char* dir = getenv("BLOOMSHARD_FSREC_LOG");
  if (root == NULL || dir == NULL || root[0] != '/' || strlen(root) >= sizeof root_) {
    ready_ = -1;
    return 0;
  }
  strcpy(root_, root);
  root_len_ = strlen(root_);
  while (root_len_ > 1 && root_[root_len_ - 1] == '/') root_[--root_len_] = '\0';
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/seq", dir);
  const int seq_fd = raw_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (seq_fd < 0 || syscall(SYS_ftruncate, seq_fd, 4096) != 0) {
    ready_ = -1;
    return 0;
  }
  if (seq_ == NULL) {
    void* m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, seq_fd, 0);
    if (m == MAP_FAILED) {
      ready_ = -1;
      return 0;
    }
    seq_ = m;
  }
  syscall(SYS_close, seq_fd);
  if (log_fd_ >= 0) syscall(SYS_close, log_fd_);
  if (dat_fd_ >= 0) syscall(SYS_close, dat_fd_);
  snprintf(path, sizeof path, "%s/rec-%d.log", dir, (int)pid);
  log_fd_ = raw_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  snprintf(path, sizeof path, "%s/rec-%d.dat", dir, (int)pid);
  dat_fd_ = raw_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd_ < 0 || dat_fd_ < 0) {
    ready_ = -1;
    return 0;
  }
  dat_off_ = 0;
  log_pid_ = pid;
  ready_ = 1;
  return 1;
}

static uint64_t next_seq(void) { return __atomic_fetch_add(seq_, 1, __ATOMIC_SEQ_CST); }

static int under_root(const char* abs) {
  return strncmp(abs, root_, root_len_) == 0 && (abs[root_len_] == '/' || abs[root_len_] == '\0');
}

/* Absolute path of a descriptor we are not tracking yet (from /proc). */
static int fd_abs_path(int fd, char* out, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, out, size - 1);
  if (n <= 0) return 0;
  out[n] = '\0';
  return 1;
}

/* Absolute path of `path` relative to dirfd, the parent resolved by
 * realpath (the last component may not exist yet, or any more). */
static int abs_path_at(int dirfd, const char* path, char* out, size_t size) {
  char joined[2 * PATH_MAX + 2];
  if (path[0] == '/') {
    snprintf(joined, sizeof joined, "%s", path);
  } else {
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
      if (getcwd(base, sizeof base) == NULL) return 0;
    } else if (!fd_abs_path(dirfd, base, sizeof base)) {
      return 0;
    }
    snprintf(joined, sizeof joined, "%s/%s", base, path);
  }
  size_t len = strlen(joined);
  while (len > 1 && joined[len - 1] == '/') joined[--len] = '\0';
  char* slash = strrchr(joined, '/');
  char parent[PATH_MAX];
  if (slash == joined) {
    strcpy(parent, "/");
  } else {
    *slash = '\0';
    if (realpath(joined, parent) == NULL) return 0;
    *slash = '/';
  }
  snprintf(out, size, "%s%s%s", parent, strcmp(parent, "/") == 0 ? "" : "/", slash + 1);
  return 1;
}

static void put_line_locked(const char* line) { raw_write_all(log_fd_, line, strlen(line)); }

static int is_recording(void) {
  pthread_mutex_lock(&lock_);
  const int on = setup_locked();
  pthread_mutex_unlock(&lock_);
  return on;
}

/* The tracked path of fd, or NULL (lock_ held). */
static const char* tracked(int fd) { return fd >= 0 && fd < kMaxFds ? fd_path_[fd] : NULL; }

/* "Take the number when the record is written" (the usual case). */
static const uint64_t kSeqNow = UINT64_MAX;

/* Calls that make a name (a creating open, mkdir, rename) are numbered
 * before the call: another process can only see the name after the call has
 * begun, so its open of it, numbered after its own call, sorts later. */
static uint64_t seq_before_call(int makes_a_name) {
  return makes_a_name && is_recording() ? next_seq() : kSeqNow;
}

static void track_open(int fd, int flags, uint64_t seq) {
  if (fd < 0 || fd >= kMaxFds) return;
  pthread_mutex_lock(&lock_);
  if (setup_locked()) {
    char abs[PATH_MAX];
    free(fd_path_[fd]);
    fd_path_[fd] = NULL;
    if (fd_abs_path(fd, abs, sizeof abs) && under_root(abs)) {
      struct stat st;
      const int is_dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
      fd_path_[fd] = strdup(abs);
      char line[PATH_MAX + 128];
      snprintf(line, sizeof line, "%llu\t%d\topen\t%d\t%d\t%d\t%s\n",
               (unsigned long long)(seq == kSeqNow ? next_seq() : seq), (int)getpid(), fd, flags,
               is_dir, abs);
      put_line_locked(line);
    }
  }
  pthread_mutex_unlock(&lock_);
}

/* A completed write of the iov bytes at offset (-1: unknown, read back). */
static void log_write(int fd, const struct iovec* iov, int iovcnt, ssize_t done, off_t offset) {
  if (done <= 0) return;
  pthread_mutex_lock(&lock_);
  const char* path = ready_ == 1 ? tracked(fd) : NULL;
  if (path != NULL && setup_locked()) {
    if (offset < 0) offset = lseek(fd, 0, SEEK_CUR) - done; /* O_APPEND too */
    size_t left = (size_t)done;
    for (int i = 0; i < iovcnt && left > 0; ++i) {
      const size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
      raw_write_all(dat_fd_, iov[i].iov_base, n);
      left -= n;
    }
    char line[PATH_MAX + 160];
    snprintf(line, sizeof line, "%llu\t%d\twrite\t%d\t%lld\t%lld\t%llu\t%s\n",
             (unsigned long long)next_seq(), (int)getpid(), fd, (long long)offset, (long long)done,
             (unsigned long long)dat_off_, path);
    dat_off_ += (uint64_t)done;
    put_line_locked(line);
  }
  pthread_mutex_unlock(&lock_);
}

/* One record "OP fd path" for a tracked descriptor; seq taken now. */
static void log_fd_op(const char* op, int fd, long long arg) {
  pthread_mutex_lock(&lock_);
  const char* path = ready_ == 1 ? tracked(fd) : NULL;
  if (path != NULL && setup_locked()) {
    char line[PATH_MAX + 128];
    snprintf(line, sizeof line, "%llu\t%d\t%s\t%d\t%lld\t%s\n", (unsigned long long)next_seq(),
             (int)getpid(), op, fd, arg, path);
    put_line_locked(line);
  }
  pthread_mutex_unlock(&lock_);
}

/* One record "OP arg path [path2]" for paths, numbered seq (kSeqNow: now). */
static void log_path_op(const char* op, long long arg, const char* abs, const char* abs2,
                        uint64_t seq) {
  pthread_mutex_lock(&lock_);
  if (setup_locked() && (under_root(abs) || (abs2 != NULL && under_root(abs2)))) {
    char line[2 * PATH_MAX + 128];
    snprintf(line, sizeof line, "%llu\t%d\t%s\t-1\t%lld\t%s%s%s\n",
             (unsigned long long)(seq == kSeqNow ? next_seq() : seq), (int)getpid(), op, arg, abs,
             abs2 ? "\t" : "", abs2 ? abs2 : "");
    put_line_locked(line);
  }
  pthread_mutex_unlock(&lock_);
}

/* ---- opens ---- */
#define OPEN_MODE(flags, mode)                                 \
  mode_t mode = 0;                                             \
  if (((flags)&O_CREAT) || ((flags)&O_TMPFILE) == O_TMPFILE) { \
    va_list ap;                                                \
    va_start(ap, flags);                                       \
    mode = va_arg(ap, mode_t);                                 \
    va_end(ap);                                                \
  }

int open(const char* path, int flags, ...) {
  OPEN_MODE(flags, mode);
  const uint64_t seq = seq_before_call(flags & O_CREAT);
  const int fd = NEXT(open)(path, flags, mode);
  if (fd >= 0) track_open(fd, flags, seq);
  return fd;
}
int open64(const char* path, int flags, ...) {
  OPEN_MODE(flags, mode);
  const uint64_t seq = seq_before_call(flags & O_CREAT);
  const int fd = NEXT(open64)(path, flags, mode);
  if (fd >= 0) track_open(fd, flags, seq);
  return fd;
}
int openat(int dirfd, const char* path, int flags, ...) {
  OPEN_MODE(flags, mode);
  const uint64_t seq = seq_before_call(flags & O_CREAT);
  const int fd = NEXT(openat)(dirfd, path, flags, mode);
  if (fd >= 0) track_open(fd, flags, seq);
  return fd;
}
int openat64(int dirfd, const char* path, int flags, ...) {
  OPEN_MODE(flags, mode);
  const uint64_t seq = seq_before_call(flags & O_CREAT);
  const int fd = NEXT(openat64)(dirfd, path, flags, mode);
  if (fd >= 0) track_open(fd, flags, seq);
  return fd;
}
int creat(const char* path, mode_t mode) {
  const uint64_t seq = seq_before_call(1);
  const int fd = NEXT(creat)(path, mode);
  if (fd >= 0) track_open(fd, O_CREAT | O_WRONLY | O_TRUNC, seq);
  return fd;
}
int creat64(const char* path, mode_t mode) {
  const uint64_t seq = seq_before_call(1);
  const int fd = NEXT(creat64)(path, mode);
  if (fd >= 0) track_open(fd, O_CREAT | O_WRONLY | O_TRUNC, seq);
  return fd;
}

/* stdio opens: the flags its mode string means (the replay needs O_CREAT
 * and O_TRUNC; "a" appends, which the written offsets already show). */
static int stdio_flags(const char* mode) {
  int flags = strchr(mode, '+') ? O_RDWR : (mode[0] == 'r' ? O_RDONLY : O_WRONLY);
  if (mode[0] == 'w') flags |= O_CREAT | O_TRUNC;
  if (mode[0] == 'a') flags |= O_CREAT | O_APPEND;
  return flags;
}
FILE* fopen(const char* path, const char* mode) {
  const uint64_t seq = seq_before_call(stdio_flags(mode) & O_CREAT);
  FILE* f = NEXT(fopen)(path, mode);
  if (f != NULL) track_open(fileno(f), stdio_flags(mode), seq);
  return f;
}
FILE* fopen64(const char* path, const char* mode) {
  const uint64_t seq = seq_before_call(stdio_flags(mode) & O_CREAT);
  FILE* f = NEXT(fopen64)(path, mode);
  if (f != NULL) track_open(fileno(f), stdio_flags(mode), seq);
  return f;
}

/* ---- closes ---- */
static void untrack(int fd) {
  log_fd_op("close", fd, 0);
  pthread_mutex_lock(&lock_);
  if (fd >= 0 && fd < kMaxFds) {
    free(fd_path_[fd]);
    fd_path_[fd] = NULL;
  }
  pthread_mutex_unlock(&lock_);
}
int close(int fd) {
  const int rc = NEXT(close)(fd);
  if (rc == 0 || errno != EBADF) untrack(fd);
  return rc;
}
int fclose(FILE* f) {
  const int fd = fileno(f);
  const int rc = NEXT(fclose)(f);
  untrack(fd);
  return rc;
}

/* ---- data ---- */
ssize_t write(int fd, const void* buf, size_t count) {
  const ssize_t n = NEXT(write)(fd, buf, count);
  const struct iovec iov = {(void*)buf, count};
  log_write(fd, &iov, 1, n, -1);
  return n;
}
ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  const ssize_t n = NEXT(pwrite)(fd, buf, count, offset);
  const struct iovec iov = {(void*)buf, count};
  log_write(fd, &iov, 1, n, offset);
  return n;
}
ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  const ssize_t n = NEXT(pwrite64)(fd, buf, count, offset);
  const struct iovec iov = {(void*)buf, count};
  log_write(fd, &iov, 1, n, offset);
  return n;
}
ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  const ssize_t n = NEXT(writev)(fd, iov, iovcnt);
  log_write(fd, iov, iovcnt, n, -1);
  return n;
}
ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  const ssize_t n = NEXT(pwritev)(fd, iov, iovcnt, offset);
  log_write(fd, iov, iovcnt, n, offset);
  return n;
}
ssize_t pwritev64(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  const ssize_t n = NEXT(pwritev64)(fd, iov, iovcnt, offset);
  log_write(fd, iov, iovcnt, n, offset);
  return n;
}
ssize_t pwritev2(int fd, const struct iovec* iov, int iovcnt, off_t offset, int flags) {
  const ssize_t n = NEXT(pwritev2)(fd, iov, iovcnt, offset, flags);
  log_write(fd, iov, iovcnt, n, offset);
  return n;
}
int ftruncate(int fd, off_t length) {
  const int rc = NEXT(ftruncate)(fd, length);
  if (rc == 0) log_fd_op("ftruncate", fd, (long long)length);
  return rc;
}
int ftruncate64(int fd, off_t length) {
  const int rc = NEXT(ftruncate64)(fd, length);
  if (rc == 0) log_fd_op("ftruncate", fd, (long long)length);
  return rc;
}

/* ---- syncs: numbered before the call (see the banner) ---- */
static int sync_fd(const char* op, int fd, int (*real)(int)) {
  log_fd_op(op, fd, 0);
  const int rc = real(fd);
  if (rc != 0) log_fd_op("syncfail", fd, errno);
  return rc;
}
int fsync(int fd) { return sync_fd("fsync", fd, NEXT(fsync)); }
int fdatasync(int fd) { return sync_fd("fdatasync", fd, NEXT(fdatasync)); }
int sync_file_range(int fd, off64_t offset, off64_t nbytes, unsigned int flags) {
  log_fd_op("sync_file_range", fd, (long long)flags);
  return NEXT(sync_file_range)(fd, offset, nbytes, flags);
}
int msync(void* addr, size_t length, int flags) {
  if (is_recording()) log_path_op("msync", (long long)length, root_, NULL, kSeqNow);
  return NEXT(msync)(addr, length, flags);
}

/* ---- namespace: numbered after the call, but for mkdir and rename (before) ---- */
static int path_op_seq(const char* op, int dirfd, const char* path, long long arg, int rc,
                       uint64_t seq) {
  if (rc != 0 || !is_recording()) return rc;
  const int saved = errno;
  char abs[PATH_MAX];
  if (abs_path_at(dirfd, path, abs, sizeof abs)) log_path_op(op, arg, abs, NULL, seq);
  errno = saved;
  return rc;
}
static int path_op(const char* op, int dirfd, const char* path, long long arg, int rc) {
  return path_op_seq(op, dirfd, path, arg, rc, kSeqNow);
}
int truncate(const char* path, off_t length) {
  return path_op("truncate", AT_FDCWD, path, (long long)length, NEXT(truncate)(path, length));
}
int truncate64(const char* path, off_t length) {
  return path_op("truncate", AT_FDCWD, path, (long long)length, NEXT(truncate64)(path, length));
}
int unlink(const char* path) { return path_op("unlink", AT_FDCWD, path, 0, NEXT(unlink)(path)); }
int unlinkat(int dirfd, const char* path, int flags) {
  const char* op = (flags & AT_REMOVEDIR) ? "rmdir" : "unlink";
  return path_op(op, dirfd, path, 0, NEXT(unlinkat)(dirfd, path, flags));
}
int rmdir(const char* path) { return path_op("rmdir", AT_FDCWD, path, 0, NEXT(rmdir)(path)); }
int mkdir(const char* path, mode_t mode) {
  const uint64_t seq = seq_before_call(1);
  return path_op_seq("mkdir", AT_FDCWD, path, 0, NEXT(mkdir)(path, mode), seq);
}
int mkdirat(int dirfd, const char* path, mode_t mode) {
  const uint64_t seq = seq_before_call(1);
  return path_op_seq("mkdir", dirfd, path, 0, NEXT(mkdirat)(dirfd, path, mode), seq);
}
int remove(const char* path) {
  struct stat st;
  const int is_dir = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
  return path_op(is_dir ? "rmdir" : "unlink", AT_FDCWD, path, 0, NEXT(remove)(path));
}

/* Renames resolve both paths before the call (the source exists then). */
static int rename_op(int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                     int (*call)(int, const char*, int, const char*, unsigned), unsigned flags) {
  char from[PATH_MAX], to[PATH_MAX];
  const int on = is_recording() && abs_path_at(olddirfd, oldpath, from, sizeof from) &&
                 abs_path_at(newdirfd, newpath, to, sizeof to);
  const uint64_t seq = on ? next_seq() : kSeqNow; /* before the call: see seq_before_call */
  const int rc = call(olddirfd, oldpath, newdirfd, newpath, flags);
  if (rc == 0 && on) {
    const int saved = errno;
    log_path_op("rename", (long long)flags, from, to, seq);
    errno = saved;
  }
  return rc;
}
static int real_renameat2(int a, const char* b, int c, const char* d, unsigned flags) {
  if (flags == 0) return NEXT(renameat)(a, b, c, d);
  return NEXT(renameat2)(a, b, c, d, flags);
}
int rename(const char* oldpath, const char* newpath) {
  return rename_op(AT_FDCWD, oldpath, AT_FDCWD, newpath, real_renameat2, 0);
}
int renameat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath) {
  return rename_op(olddirfd, oldpath, newdirfd, newpath, real_renameat2, 0);
}
int renameat2(int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
              unsigned flags) {
  return rename_op(olddirfd, oldpath, newdirfd, newpath, real_renameat2, flags);
}
