#include "app/feed/input_windows.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

namespace bloomshard::app {
namespace fs = std::filesystem;
namespace {

class ReadOnlyFd {
 public:
  explicit ReadOnlyFd(const fs::path& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY)) {
    if (fd_ < 0) fail("cannot open", errno);
  }
  ~ReadOnlyFd() { ::close(fd_); }
  ReadOnlyFd(const ReadOnlyFd&) = delete;
  ReadOnlyFd& operator=(const ReadOnlyFd&) = delete;

  // Exactly `n` bytes at `offset` into `out`, or throws.
  void read_exactly(char* out, std::uint64_t n, std::uint64_t offset) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("cannot read", errno);
      if (got == 0) {
        throw std::runtime_error("'" + path_.string() + "' ends before byte " +
                                 std::to_string(offset + n));
      }
      out += got;
      n -= static_cast<std::uint64_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
  }

 private:
  [[noreturn]] void fail(const char* what, int err) const {
    throw std::runtime_error(std::string(what) + " '" + path_.string() +
                             "': " + std::strerror(err));
  }
  fs::path path_;
  int fd_;
};

// The windows' digests of inputs finished (or stopped) in this process,
// so each checkpoint of a segment reads a finished input's windows once.
// Keyed by everything the digest depends on; bounded (cleared when full).
using CacheKey = std::tuple<std::string, std::uint64_t, std::int64_t, std::uint64_t>;
std::map<CacheKey, std::uint64_t>& window_cache() {
  static std::map<CacheKey, std::uint64_t> cache;
  return cache;
}
constexpr std::size_t kMaxCachedWindows = std::size_t{1} << 16;

bool started(const InputProgress& p) {
  if (p.done || p.cursor.records > 0 || p.cursor.decompressed_offset > 0) return true;
  return std::any_of(p.ranges.begin(), p.ranges.end(),
                     [](const RangeProgress& r) { return r.done || r.cursor.records > 0; });
}

}  // namespace

std::uint64_t input_window_end(const InputProgress& p) {
  if (p.done) return p.file.size;
  if (!p.ranges.empty()) {
    std::uint64_t end = 0;
    for (const RangeProgress& r : p.ranges) {
      if (r.done || r.cursor.records > 0) end = std::max(end, r.cursor.decompressed_offset);
    }
    return end;
  }
  if (p.file.compression == io::Compression::kNone) return p.cursor.decompressed_offset;
  return p.cursor.frame ? p.cursor.frame->compressed_offset : 0;
}

std::uint64_t input_window_digest(const fs::path& path, std::uint64_t size, std::uint64_t end) {
  const std::uint64_t head = std::min(kInputWindowBytes, size);
  const std::uint64_t tail_begin =
      std::max(head, end >= kInputWindowBytes ? end - kInputWindowBytes : 0);
  std::array<char, 2 * kInputWindowBytes> bytes{};
  const ReadOnlyFd fd(path);
  fd.read_exactly(bytes.data(), head, 0);
  std::uint64_t n = head;
  if (end > tail_begin) {
    fd.read_exactly(bytes.data() + n, end - tail_begin, tail_begin);
    n += end - tail_begin;
  }
  return XXH3_64bits(bytes.data(), n);
}

void refresh_input_windows(RunManifest& m) {
  auto& cache = window_cache();
  if (cache.size() > kMaxCachedWindows) cache.clear();
  for (InputProgress& p : m.inputs) {
    if (!started(p)) {
      p.window.reset();
      continue;
    }
    const std::uint64_t end = input_window_end(p);
    if (p.window && p.window->end == end) continue;
    const CacheKey key{p.file.absolute_path.native(), p.file.size, p.file.mtime_ns, end};
    if (const auto it = cache.find(key); it != cache.end()) {
      p.window = InputWindow{end, it->second};
      continue;
    }
    try {
      p.window = InputWindow{end, input_window_digest(p.file.absolute_path, p.file.size, end)};
      cache.emplace(key, p.window->digest);
    } catch (const std::exception&) {
      p.window.reset();  // gone or unreadable now: size and mtime are all a resume checks
    }
  }
  m.input_windows_version = kInputWindowsVersion;
  m.input_window_bytes = kInputWindowBytes;
}

std::string window_difference(const InputProgress& then, const io::InputFile& now) {
  if (!then.window) return {};
  std::uint64_t digest = 0;
  try {
    digest = input_window_digest(now.absolute_path, now.size, then.window->end);
  } catch (const std::exception& e) {
    return std::string("its windows cannot be read: ") + e.what();
  }
  if (digest == then.window->digest) return {};
  const std::uint64_t head = std::min(kInputWindowBytes, now.size);
  std::string what = "its first " + std::to_string(head) + " bytes";
  if (then.window->end > head) {
    what += " or the " + std::to_string(std::min(kInputWindowBytes, then.window->end - head)) +
            " before byte " + std::to_string(then.window->end);
  }
  return what + " are not the ones the checkpoint saw (window digest " +
         std::to_string(then.window->digest) + ", now " + std::to_string(digest) + ")";
}

}  // namespace bloomshard::app
