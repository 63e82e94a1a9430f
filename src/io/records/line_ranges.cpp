#include "io/records/line_ranges.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "io/errors.hpp"

namespace bloomshard::io {
namespace {

constexpr std::size_t kProbeBytes = 4096;

// Owns the descriptor of the file being probed.
class ProbeFile {
 public:
  explicit ProbeFile(const std::filesystem::path& path)
      : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) fail("cannot open to split it");
  }
  ProbeFile(const ProbeFile&) = delete;
  ProbeFile& operator=(const ProbeFile&) = delete;
  ~ProbeFile() { ::close(fd_); }

  // The first line start at or after `from` (a position p with p == 0 or
  // byte p - 1 == '\n'), or `size` if no '\n' follows.
  std::uint64_t next_line_start(std::uint64_t from, std::uint64_t size) {
    if (from == 0) return 0;
    std::array<char, kProbeBytes> buf{};
    std::uint64_t pos = from - 1;  // the byte that must be '\n'
    while (pos < size) {
      const ssize_t got = ::pread(fd_, buf.data(), buf.size(), static_cast<off_t>(pos));
      if (got < 0) {
        if (errno == EINTR) continue;
        fail("cannot read to split it");
      }
      if (got == 0) break;  // shorter than listed: the rest is one range
      const void* nl = std::memchr(buf.data(), '\n', static_cast<std::size_t>(got));
      if (nl != nullptr) {
        return std::min(
            size, pos + static_cast<std::uint64_t>(static_cast<const char*>(nl) - buf.data()) + 1);
      }
      pos += static_cast<std::uint64_t>(got);
    }
    return size;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw InputError(path_.string(), 0, 0, std::string(what) + ": " + std::strerror(errno));
  }
  std::filesystem::path path_;
  int fd_;
};

}  // namespace

std::uint64_t range_count_for(std::uint64_t file_bytes, std::uint64_t total_bytes, int ranks,
                              std::uint64_t min_bytes) {
  if (ranks < 1) throw std::invalid_argument("range_count_for: ranks must be >= 1");
  if (min_bytes < 1) throw std::invalid_argument("range_count_for: min_bytes must be >= 1");
  if (file_bytes <= min_bytes) return 1;
  const std::uint64_t parts = 4 * static_cast<std::uint64_t>(ranks);
  const std::uint64_t target = std::max(min_bytes, (total_bytes + parts - 1) / parts);
  // The nearest count, at least 1; from `ranks` ranges on, down to a
  // multiple of the rank count, so that one big file alone still spreads
  // evenly (15 ranges on 4 ranks would leave one rank 3 of 4 parts' work).
  const std::uint64_t nearest = std::max<std::uint64_t>(1, (file_bytes + target / 2) / target);
  const auto r = static_cast<std::uint64_t>(ranks);
  return nearest >= r ? nearest - nearest % r : nearest;
}

std::vector<ByteRange> line_aligned_ranges(const std::filesystem::path& path, std::uint64_t size,
                                           std::uint64_t count) {
  count = std::max<std::uint64_t>(count, 1);
  std::vector<ByteRange> ranges;
  if (count == 1 || size == 0) return {{0, size}};
  ProbeFile file(path);
  std::uint64_t begin = 0;
  for (std::uint64_t k = 1; k <= count; ++k) {
    // size * k / count without overflowing 64 bits (count is far below 2^32).
    const std::uint64_t nominal = size / count * k + size % count * k / count;
    // A line that spans this cut and the next gives an empty range: skip
    // the probe (it would read the same long line again) and drop it.
    const std::uint64_t end = k == count         ? size
                              : nominal <= begin ? begin
                                                 : file.next_line_start(nominal, size);
    if (end > begin) ranges.push_back({begin, end});
    begin = end;
  }
  return ranges;
}

std::vector<ByteRange> line_aligned_blocks(const std::filesystem::path& path, std::uint64_t size,
                                           std::uint64_t block_bytes) {
  if (block_bytes == 0) throw std::invalid_argument("line_aligned_blocks: block_bytes is 0");
  std::vector<ByteRange> blocks;
  if (size == 0) return blocks;
  if (size <= block_bytes) return {{0, size}};
  ProbeFile file(path);
  std::uint64_t begin = 0;
  for (std::uint64_t nominal = block_bytes; begin < size; nominal += block_bytes) {
    // As in line_aligned_ranges(): a cut inside the line that started the
    // block needs no probe, the next cut's probe reads past that line.
    const std::uint64_t end = nominal >= size    ? size
                              : nominal <= begin ? begin
                                                 : file.next_line_start(nominal, size);
    if (end > begin) blocks.push_back({begin, end});
    begin = end;
    if (nominal >= size) break;
  }
  return blocks;
}

}  // namespace bloomshard::io
