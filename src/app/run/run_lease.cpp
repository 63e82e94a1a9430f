#include "app/run/run_lease.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <sstream>
#include <system_error>
#include <thread>

#include "app/run/host_name.hpp"
#include "io/durable/durable_entries.hpp"

namespace bloomshard::app {
namespace fs = std::filesystem;
namespace {

constexpr auto kPoll = std::chrono::milliseconds(200);
constexpr std::size_t kMaxRecordBytes = 4096;  // one line; anything longer is not ours

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void throw_errno(const std::string& what, const fs::path& p) {
  throw std::system_error(errno, std::generic_category(), what + " '" + p.string() + "'");
}

// Errors that mean "this file system has no (working) fcntl locks".
bool locks_unsupported(int e) {
  return e == ENOLCK || e == ENOSYS || e == EINVAL || e == EOPNOTSUPP;
}

// F_SETLK of the whole file: 0 = taken, EAGAIN/EACCES = held by another
// process, anything else = an error.
int set_lock(int fd, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 0;
  return ::fcntl(fd, F_SETLK, &fl) == 0 ? 0 : errno;
}

// The process holding a conflicting lock (fcntl's F_GETLK), 0 if none.
std::int64_t lock_holder_pid(int fd) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK) return 0;
  return fl.l_pid;
}

std::string read_record_text(int fd) {
  std::string buf(kMaxRecordBytes, '\0');
  const ssize_t n = ::pread(fd, buf.data(), buf.size(), 0);
  if (n < 0) return {};
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

// Writes the record in place and makes it durable; the length is padded to a
// fixed size so a shorter record never leaves a tail of the longer one and
// a reader never sees a half-truncated file.
void write_record(int fd, const LeaseRecord& r, const fs::path& p) {
  std::string line = format_lease(r);
  if (line.size() < 255) line.append(255 - line.size(), ' ');
  line += '\n';
  const ssize_t n = ::pwrite(fd, line.data(), line.size(), 0);
  if (n != static_cast<ssize_t>(line.size())) {
    if (n >= 0) errno = ENOSPC;
    throw_errno("cannot write the lock file", p);
  }
  if (::fdatasync(fd) != 0) throw_errno("cannot sync the lock file", p);
}

// True if `path` still names the file open as `fd` (not removed or replaced).
bool still_linked(int fd, const fs::path& path) {
  struct stat open_file {};
  struct stat named {};
  if (::fstat(fd, &open_file) != 0 || ::stat(path.c_str(), &named) != 0) return false;
  return open_file.st_dev == named.st_dev && open_file.st_ino == named.st_ino;
}

}  // namespace

std::optional<FencingMode> parse_fencing_mode(std::string_view text) {
  if (text == "auto") return FencingMode::kAuto;
  if (text == "fcntl") return FencingMode::kFcntl;
  if (text == "lease") return FencingMode::kLease;
  return std::nullopt;
}

std::string format_lease(const LeaseRecord& r) {
  std::ostringstream s;
  s << "bloomshard-lease v1 epoch " << r.epoch << " host " << r.host << " pid " << r.pid
    << " since " << r.since_unix << " heartbeat " << r.heartbeat_unix << " mode " << r.mode;
  return s.str();
}

std::optional<LeaseRecord> parse_lease(std::string_view line) {
  std::istringstream s{std::string(line)};
  LeaseRecord r;
  std::string magic, version, k1, k2, k3, k4, k5, k6;
  if (!(s >> magic >> version >> k1 >> r.epoch >> k2 >> r.host >> k3 >> r.pid >> k4 >>
        r.since_unix >> k5 >> r.heartbeat_unix >> k6 >> r.mode)) {
    return std::nullopt;
  }
  if (magic != "bloomshard-lease" || version != "v1" || k1 != "epoch" || k2 != "host" ||
      k3 != "pid" || k4 != "since" || k5 != "heartbeat" || k6 != "mode") {
    return std::nullopt;
  }
  return r;
}

std::string describe_holder(const LeaseRecord& r) {
  char when[64] = "?";
  const std::time_t t = static_cast<std::time_t>(r.since_unix);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) != nullptr)
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  std::string text = "host " + r.host + ", pid " + std::to_string(r.pid) + ", since " + when +
                     " (epoch " + std::to_string(r.epoch) + ")";
  if (r.lock_pid != 0 && r.lock_pid != r.pid) {
    // F_GETLK's pid is local to the node that holds the lock (NFS: may be 0).
    text += "; the lock is now held by its pid " + std::to_string(r.lock_pid) +
            " (another rank of it, maybe an orphan)";
  }
  return text;
}

fs::path lock_file_for(const std::string& state_dir, const std::string& output_dir) {
  if (!state_dir.empty()) return fs::path(state_dir) / "LOCK";
  return fs::path(output_dir) / kOutputLockName;
}

RunLease::RunLease(int fd, bool fcntl_mode, std::uint64_t epoch, LeaseRecord record)
    : fd_(fd), fcntl_(fcntl_mode), epoch_(epoch), record_(std::move(record)) {}

RunLease::RunLease(RunLease&& other) noexcept
    : fd_(other.fd_),
      fcntl_(other.fcntl_),
      epoch_(other.epoch_),
      record_(std::move(other.record_)) {
  other.fd_ = -1;
}

RunLease& RunLease::operator=(RunLease&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    fcntl_ = other.fcntl_;
    epoch_ = other.epoch_;
    record_ = std::move(other.record_);
    other.fd_ = -1;
  }
  return *this;
}

RunLease::~RunLease() {
  if (fd_ < 0) return;
  // Lease mode, the holder itself ending normally: hand the lease back (a
  // zero beat), so the next start need not wait out kLeaseTimeoutSeconds.
  // A killed holder cannot; its successor waits for the beat to go stale.
  if (!fcntl_ && record_.pid == ::getpid()) {
    const std::optional<LeaseRecord> now = parse_lease(read_record_text(fd_));
    if (now && now->epoch == epoch_) {
      record_.heartbeat_unix = 0;
      try {
        write_record(fd_, record_, "LOCK");
      } catch (...) {  // the successor waits for the stale beat instead
      }
    }
  }
  ::close(fd_);  // releases the fcntl lock
}

std::optional<RunLease> RunLease::acquire(const fs::path& lock_file, FencingMode mode,
                                          double wait_seconds, LeaseRecord& holder,
                                          void (*on_wait)()) {
  // The lock lives in the output (or state) dir, which this may create: its
  // entry made durable now, since checkpoints will record files inside it.
  io::create_directories_durably(lock_file.parent_path());
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("cannot open the lock file", lock_file);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait_seconds));
  bool use_fcntl = mode != FencingMode::kLease;
  for (;;) {
    const std::optional<LeaseRecord> old = parse_lease(read_record_text(fd));
    // A live holder of the other mode counts too (one attempt started with
    // --fencing lease, another with auto): a fresh lease beat, or an fcntl
    // lock that F_GETLK still sees.
    const bool fresh_lease =
        old && old->mode == "lease" &&
        static_cast<double>(unix_now() - old->heartbeat_unix) <= kLeaseTimeoutSeconds;
    bool free = false;
    if (use_fcntl) {
      const int e = set_lock(fd, F_WRLCK);
      if (e == 0 && fresh_lease) {
        (void)set_lock(fd, F_UNLCK);
        holder = *old;
      } else if (e == 0) {
        free = true;
      } else if (locks_unsupported(e) && mode == FencingMode::kAuto) {
        use_fcntl = false;  // fall back to the lease, re-evaluated at once
        continue;
      } else if (e != EAGAIN && e != EACCES) {
        errno = e;
        ::close(fd);
        throw_errno("cannot lock", lock_file);
      } else {
        holder = old.value_or(LeaseRecord{});
        // The record names the attempt's rank 0; the lock may be held by any
        // of its ranks (an orphan) after rank 0 died: name that process.
        holder.lock_pid = lock_holder_pid(fd);
      }
    } else {
      const std::int64_t lock_pid = lock_holder_pid(fd);  // 0 where fcntl does not work
      free = !fresh_lease && lock_pid == 0;
      if (!free && old) holder = *old;
      holder.lock_pid = lock_pid;
    }
    if (free && use_fcntl && !still_linked(fd, lock_file)) {
      // The holder we waited for ended and removed the file (release_and_remove):
      // this lock is on an unlinked inode; take the one the path names now.
      ::close(fd);
      fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) throw_errno("cannot open the lock file", lock_file);
      continue;
    }
    if (free) {
      LeaseRecord mine;
      mine.epoch = (old ? old->epoch : 0) + 1;
      mine.host = host_name();
      mine.pid = ::getpid();
      mine.since_unix = unix_now();
      mine.heartbeat_unix = mine.since_unix;
      mine.mode = use_fcntl ? "fcntl" : "lease";
      try {
        write_record(fd, mine, lock_file);
      } catch (...) {
        ::close(fd);
        throw;
      }
      // Readers join with read locks; rank 0 keeps one too (an atomic
      // conversion: no other writer can slip in between).
      if (use_fcntl && set_lock(fd, F_RDLCK) != 0) {
        ::close(fd);
        throw_errno("cannot convert the lock", lock_file);
      }
      return RunLease(fd, use_fcntl, mine.epoch, mine);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return std::nullopt;
    }
    if (on_wait != nullptr) on_wait();
    std::this_thread::sleep_for(kPoll);
  }
}

RunLease RunLease::join(const fs::path& lock_file, bool fcntl_mode, std::uint64_t epoch) {
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw_errno("cannot open the lock file", lock_file);
  if (fcntl_mode) {
    if (const int e = set_lock(fd, F_RDLCK); e != 0) {
      ::close(fd);
      errno = e;
      throw_errno("cannot take a read lock on", lock_file);
    }
  }
  const std::optional<LeaseRecord> r = parse_lease(read_record_text(fd));
  RunLease lease(fd, fcntl_mode, epoch, r.value_or(LeaseRecord{}));
  lease.check();
  return lease;
}

void RunLease::check() const {
  std::lock_guard<std::mutex> hold(mutex_);
  const std::optional<LeaseRecord> now = parse_lease(read_record_text(fd_));
  if (!now || now->epoch != epoch_) {
    throw FencedOut("this attempt (epoch " + std::to_string(epoch_) +
                    ") no longer holds the run: the lock file names " +
                    (now ? describe_holder(*now) : std::string("nobody readable")) +
                    "; stopping without writing anything further");
  }
}

bool RunLease::release_and_remove(const fs::path& lock_file) {
  if (fd_ < 0 || !fcntl_) return false;  // lease mode: the destructor hands the beat back
  bool removed = false;
  // Only under the write lock: no rank of this attempt or of another holds
  // the file then, and an attempt waiting on this inode re-opens the path
  // once it gets the lock (acquire checks that the path still names it).
  if (set_lock(fd_, F_WRLCK) == 0 && still_linked(fd_, lock_file)) {
    removed = ::unlink(lock_file.c_str()) == 0;
  }
  ::close(fd_);
  fd_ = -1;
  return removed;
}

std::string RunLease::beat() {
  if (fcntl_) return {};
  std::lock_guard<std::mutex> hold(mutex_);
  const std::optional<LeaseRecord> now = parse_lease(read_record_text(fd_));
  if (!now || now->epoch != epoch_) return "lease lost to a newer attempt";
  record_.heartbeat_unix = unix_now();
  try {
    write_record(fd_, record_, "LOCK");
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace bloomshard::app
