// See direct_region_writer.hpp. The buffer arithmetic in file offsets:
// buffers_[current_] holds [buffer_start_, buffer_start_ + fill_), with
// buffer_start_ aligned; the first buffer starts below `begin` (the bytes
// before it are never written). A flush writes the whole blocks that are
// complete and inside [direct_begin_, direct_end_), and carries the last
// partial block (< kDirectIoAlignment bytes) into the other buffer.
#include "io/durable/direct_region_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "io/errors.hpp"

namespace bloomshard::io {
namespace {

constexpr std::uint64_t align_down(std::uint64_t x) {
  return x / kDirectIoAlignment * kDirectIoAlignment;
}
constexpr std::uint64_t align_up(std::uint64_t x) { return align_down(x + kDirectIoAlignment - 1); }

}  // namespace

std::optional<DirectFile> DirectFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    if (errno == EINVAL) return std::nullopt;
    throw OutputError(path.string(),
                      std::string("open for direct writes: ") + std::strerror(errno));
  }
  return DirectFile(fd, path);
}

DirectFile::DirectFile(DirectFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

DirectFile& DirectFile::operator=(DirectFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

DirectFile::~DirectFile() {
  if (fd_ >= 0) ::close(fd_);
}

void DirectFile::write_at(const char* data, std::uint64_t size, std::uint64_t offset) const {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "wrote nothing";
      throw OutputError(path_.string(), "direct write of " + std::to_string(size) +
                                            " bytes at offset " + std::to_string(offset) + ": " +
                                            why);
    }
    const auto done = static_cast<std::uint64_t>(n);
    data += done;
    size -= done;
    offset += done;
  }
}

void DirectFile::sync() const {
  if (::fdatasync(fd_) != 0) {
    throw OutputError(path_.string(), std::string("fdatasync: ") + std::strerror(errno));
  }
}

void DirectRegionWriter::FreeAligned::operator()(char* p) const noexcept { std::free(p); }

DirectRegionWriter::Buffer DirectRegionWriter::allocate(std::size_t bytes) {
  // Not value-initialized: only bytes the caller filled are ever written.
  void* p = std::aligned_alloc(kDirectIoAlignment, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return Buffer(static_cast<char*>(p));
}

DirectRegionWriter::DirectRegionWriter(const DirectFile& file, std::uint64_t begin,
                                       std::uint64_t end, std::size_t buffer_bytes)
    : file_(&file), begin_(begin), end_(end) {
  if (end < begin) throw std::invalid_argument("DirectRegionWriter: end < begin");
  direct_begin_ = align_up(begin);
  direct_end_ = std::max(direct_begin_, align_down(end));
  head_end_ = std::min(direct_begin_, end);
  tail_begin_ = std::max(direct_end_, head_end_);
  const std::size_t size = std::max<std::size_t>(align_up(buffer_bytes), 4 * kDirectIoAlignment);
  for (std::size_t i = 0; i < 2; ++i) {
    buffers_[i] = allocate(size);
    capacity_[i] = size;
  }
  buffer_start_ = align_down(begin);
  fill_ = begin - buffer_start_;
}

DirectRegionWriter::~DirectRegionWriter() {
  if (in_flight_.valid()) in_flight_.wait();
}

void DirectRegionWriter::wait_in_flight() {
  if (in_flight_.valid()) in_flight_.get();  // rethrows the write's error
}

char* DirectRegionWriter::reserve_bytes(std::size_t n) {
  if (finished_) throw std::logic_error("DirectRegionWriter: reserve after finish");
  if (n > end_ - begin_ - appended_) {
    throw std::length_error("DirectRegionWriter: " + std::to_string(n) +
                            " bytes past the end of [" + std::to_string(begin_) + ", " +
                            std::to_string(end_) + ")");
  }
  if (fill_ + n > capacity_[current_]) flush(false);
  if (fill_ + n > capacity_[current_]) {  // one piece larger than a buffer
    const std::size_t size = align_up(fill_ + n);
    Buffer bigger = allocate(size);
    std::memcpy(bigger.get(), buffers_[current_].get(), fill_);
    buffers_[current_] = std::move(bigger);
    capacity_[current_] = size;
  }
  char* out = buffers_[current_].get() + fill_;
  fill_ += n;
  appended_ += n;
  return out;
}

void DirectRegionWriter::append(std::span<const char> bytes) {
  while (!bytes.empty()) {
    std::size_t room = capacity_[current_] - fill_;
    if (room == 0) {
      flush(false);
      room = capacity_[current_] - fill_;
    }
    const std::size_t take = std::min(room, bytes.size());
    std::memcpy(reserve_bytes(take), bytes.data(), take);
    bytes = bytes.subspan(take);
  }
}

void DirectRegionWriter::flush(bool final) {
  const std::uint64_t pos = buffer_start_ + fill_;
  const char* buffer = buffers_[current_].get();
  const auto at = [&](std::uint64_t offset) { return buffer + (offset - buffer_start_); };
  if (!head_taken_ && pos >= head_end_) {
    if (head_end_ > begin_) edges_.push_back({begin_, {at(begin_), at(head_end_)}});
    head_taken_ = true;
  }
  if (final && tail_begin_ < end_) edges_.push_back({tail_begin_, {at(tail_begin_), at(end_)}});

  const std::uint64_t lo = std::max(buffer_start_, direct_begin_);
  const std::uint64_t hi = std::min(align_down(pos), direct_end_);
  wait_in_flight();  // the other buffer is free again
  if (hi > lo) {
    const DirectFile* file = file_;
    const char* data = at(lo);
    in_flight_ =
        std::async(std::launch::async, [file, data, lo, hi] { file->write_at(data, hi - lo, lo); });
    direct_bytes_ += hi - lo;
  }
  if (final) {
    wait_in_flight();
    return;
  }
  const std::uint64_t next_start = align_down(pos);
  const std::size_t carry = pos - next_start;
  const std::size_t next = 1 - current_;
  std::memcpy(buffers_[next].get(), at(next_start), carry);
  current_ = next;
  buffer_start_ = next_start;
  fill_ = carry;
}

std::vector<RegionEdge> DirectRegionWriter::finish() {
  if (finished_) throw std::logic_error("DirectRegionWriter: finish called twice");
  if (appended_ != end_ - begin_) {
    if (in_flight_.valid()) in_flight_.wait();
    throw std::logic_error("DirectRegionWriter: " + std::to_string(appended_) + " of " +
                           std::to_string(end_ - begin_) + " bytes appended");
  }
  finished_ = true;
  flush(true);
  return std::move(edges_);
}

}  // namespace bloomshard::io
