#include "io/output/positional_output.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/errors.hpp"
#include "io/output/local_write_lock.hpp"
#include "io/signal_blocked_thread.hpp"

namespace bloomshard::io {

PositionalOutput::~PositionalOutput() {
  if (writer_.joinable()) writer_.join();  // its error is not reported: the job is failing
  if (fd_ >= 0) ::close(fd_);              // nor those of an abandoned file
}

// Moves happen only between writes (the feed replaces an output after
// wait() or close()): a running writer refers to `this`.
PositionalOutput::PositionalOutput(PositionalOutput&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      writeback_(other.writeback_),
      lock_writes_(other.lock_writes_) {}

PositionalOutput& PositionalOutput::operator=(PositionalOutput&& other) noexcept {
  if (this != &other) {
    if (writer_.joinable()) writer_.join();
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    writeback_ = other.writeback_;
    lock_writes_ = other.lock_writes_;
  }
  return *this;
}

void PositionalOutput::write_in_background(std::uint64_t offset,
                                           std::vector<std::string_view> pieces,
                                           std::vector<std::shared_ptr<const void>> keep) {
  wait();
  pieces_ = std::move(pieces);
  keep_ = std::move(keep);
  writer_ = start_with_signals_blocked([this, offset] {
    try {
      write_at(offset, pieces_);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

void PositionalOutput::wait() {
  if (writer_.joinable()) writer_.join();
  pieces_.clear();
  keep_.clear();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

PositionalOutput PositionalOutput::open(const std::filesystem::path& path, bool writeback) {
  PositionalOutput out;
  out.path_ = path;
  out.writeback_ = writeback;
  out.fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (out.fd_ < 0) {
    throw OutputError(path.string(), std::string("cannot open to write: ") + std::strerror(errno));
  }
  out.lock_writes_ = on_local_file_system(out.fd_);
  return out;
}

void PositionalOutput::write_at(std::uint64_t offset, std::span<const std::string_view> pieces) {
  // IOV_MAX (1024 on Linux) pieces at most per call; a partial write
  // resumes inside the piece it stopped in.
  constexpr std::size_t kMaxIov = 1024;
  const std::uint64_t start = offset;
  std::vector<iovec> iov;
  std::size_t next = 0;
  std::size_t skip = 0;  // bytes of pieces[next] already written
  // The node's other ranks wait for this copy asleep, not spinning
  // (io/output/local_write_lock.hpp); released before the writeback hint.
  std::optional<LocalWriteLock> lock(std::in_place, fd_, lock_writes_);
  while (next < pieces.size()) {
    iov.clear();
    for (std::size_t k = next; k < pieces.size() && iov.size() < kMaxIov; ++k) {
      const std::string_view p = k == next ? pieces[k].substr(skip) : pieces[k];
      if (!p.empty()) iov.push_back({const_cast<char*>(p.data()), p.size()});
    }
    if (iov.empty()) break;
    const ssize_t wrote =
        ::pwritev(fd_, iov.data(), static_cast<int>(iov.size()), static_cast<off_t>(offset));
    if (wrote < 0) {
      if (errno == EINTR) continue;
      throw OutputError(path_.string(), "cannot write at byte " + std::to_string(offset) + ": " +
                                            std::strerror(errno));
    }
    auto left = static_cast<std::uint64_t>(wrote);
    offset += left;
    while (next < pieces.size() && left >= pieces[next].size() - skip) {
      left -= pieces[next].size() - skip;
      skip = 0;
      ++next;
    }
    skip += static_cast<std::size_t>(left);
  }
  lock.reset();
  // A hint: a failure is ignored here, the checkpoint's fsync reports real ones.
  if (writeback_ && offset > start) {
    (void)::sync_file_range(fd_, static_cast<off_t>(start), static_cast<off_t>(offset - start),
                            SYNC_FILE_RANGE_WRITE);
  }
}

void PositionalOutput::close() {
  wait();
  if (fd_ < 0) return;
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    throw OutputError(path_.string(), std::string("cannot close: ") + std::strerror(errno));
  }
}

}  // namespace bloomshard::io
