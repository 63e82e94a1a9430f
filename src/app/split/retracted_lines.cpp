#include "app/split/retracted_lines.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// The lines of [begin, end) of a file, read in order through one buffer
// (pread from the page cache: on this VM, faulting a memory map of the
// same bytes in 4 KiB pages cost more than the copy).
class FileLines {
 public:
  FileLines(const fs::path& path, std::uint64_t begin, std::uint64_t end)
      : path_(path), next_offset_(begin), read_(begin), end_(end), buffer_(kBufferBytes) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail("open");
  }
  FileLines(const FileLines&) = delete;
  FileLines& operator=(const FileLines&) = delete;
  ~FileLines() { ::close(fd_); }

  // The next line, terminator included (the last may have none); false at
  // `end`. The view lives until the next call.
  bool next(std::string_view& line) {
    for (;;) {
      const char* const from = buffer_.data() + head_;
      if (const void* nl = std::memchr(from, '\n', tail_ - head_)) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(nl) + 1 - from);
        return take(line, length);
      }
      if (read_ == end_) {
        if (tail_ == head_) return false;
        return take(line, tail_ - head_);  // a last line without newline
      }
      refill();
    }
  }
  // Offset of the line next() returned last.
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{4} << 20;

  bool take(std::string_view& line, std::size_t length) {
    line = std::string_view(buffer_.data() + head_, length);
    offset_ = next_offset_;
    next_offset_ += length;
    head_ += length;
    return true;
  }
  // Keeps the unfinished line, makes room (doubling for a line longer than
  // the buffer) and reads on.
  void refill() {
    std::memmove(buffer_.data(), buffer_.data() + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
    if (tail_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size() - tail_, end_ - read_));
    ssize_t got = 0;
    do {
      got = ::pread(fd_, buffer_.data() + tail_, want, static_cast<off_t>(read_));
    } while (got < 0 && errno == EINTR);
    if (got < 0) fail("read");
    if (got == 0) {
      errno = 0;
      throw std::runtime_error("joining split input: '" + path_.string() + "' ends at byte " +
                               std::to_string(read_) + ", before " + std::to_string(end_));
    }
    tail_ += static_cast<std::size_t>(got);
    read_ += static_cast<std::uint64_t>(got);
  }
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(std::string("joining split input: cannot ") + what + " '" +
                             path_.string() + "': " + std::strerror(errno));
  }

  fs::path path_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;       // of the line returned last
  std::uint64_t next_offset_ = 0;  // of the next line
  std::uint64_t read_ = 0;         // file offset after the buffered bytes
  std::uint64_t end_ = 0;
  std::vector<char> buffer_;
  std::size_t head_ = 0;  // first unconsumed byte
  std::size_t tail_ = 0;  // end of the buffered bytes
};

}  // namespace

std::uint64_t PartWithoutRetracted::kept_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const auto& [from, to] : keep) n += to - from;
  return n;
}

void for_each_written_line(const fs::path& input, std::uint64_t begin, std::uint64_t end,
                           const fs::path& part, std::uint64_t part_length,
                           const WrittenLineVisitor& visit) {
  if (part_length == 0) return;
  FileLines in(input, begin, end);
  FileLines out(part, 0, part_length);
  std::string_view written;  // the part's next line
  if (!out.next(written)) return;
  std::string_view line;
  while (in.next(line)) {
    if (line.size() != written.size() ||
        std::memcmp(line.data(), written.data(), line.size()) != 0) {
      continue;
    }
    if (!visit(written, out.offset(), in.offset())) return;
    if (!out.next(written)) return;
  }
  throw std::runtime_error("joining split input '" + input.string() + "': the output part '" +
                           part.string() + "' has a line at byte " + std::to_string(out.offset()) +
                           " that its input range does not have in that order");
}

PartWithoutRetracted plan_part_without_retracted(const fs::path& input, std::uint64_t begin,
                                                 std::uint64_t end, const fs::path& part,
                                                 std::uint64_t part_length,
                                                 std::span<const std::uint64_t> retracted) {
  PartWithoutRetracted plan;
  const auto bad = [&](std::uint64_t offset) {
    return std::runtime_error("joining split input '" + input.string() +
                              "': the retracted record at byte " + std::to_string(offset) +
                              " is not a line of its output part '" + part.string() + "'");
  };
  std::uint64_t keep_from = 0;
  std::size_t next = 0;  // into retracted
  if (!retracted.empty()) {
    for_each_written_line(input, begin, end, part, part_length,
                          [&](std::string_view line, std::uint64_t at, std::uint64_t offset) {
                            if (offset > retracted[next]) throw bad(retracted[next]);
                            if (offset < retracted[next]) return true;
                            if (at > keep_from) plan.keep.emplace_back(keep_from, at);
                            keep_from = at + line.size();
                            ++plan.removed_lines;
                            plan.removed_bytes += line.size();
                            return ++next < retracted.size();
                          });
    if (next < retracted.size()) throw bad(retracted[next]);
  }
  if (keep_from < part_length) plan.keep.emplace_back(keep_from, part_length);
  return plan;
}

}  // namespace bloomshard::app
