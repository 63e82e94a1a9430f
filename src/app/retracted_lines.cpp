#include "bloomshard/app/retracted_lines.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// A read-only mapping of [offset, offset + length) of a file.
class MappedRange {
 public:
  MappedRange(const fs::path& path, std::uint64_t offset, std::uint64_t length) {
    if (length == 0) return;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("open", path);
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t aligned = offset - offset % page;
    map_length_ = static_cast<std::size_t>(offset - aligned + length);
    void* at =
        ::mmap(nullptr, map_length_, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(aligned));
    ::close(fd);
    if (at == MAP_FAILED) fail("map", path);
    map_ = static_cast<char*>(at);
    (void)::madvise(map_, map_length_, MADV_SEQUENTIAL);
    data_ = map_ + (offset - aligned);
  }
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  ~MappedRange() {
    if (map_ != nullptr) ::munmap(map_, map_length_);
  }
  [[nodiscard]] const char* data() const noexcept { return data_; }

 private:
  [[noreturn]] static void fail(const char* what, const fs::path& path) {
    throw std::runtime_error(std::string("joining split input: cannot ") + what + " '" +
                             path.string() + "': " + std::strerror(errno));
  }
  char* map_ = nullptr;
  std::size_t map_length_ = 0;
  const char* data_ = nullptr;
};

// End of the line starting at `at` (after its '\n', or `end`).
const char* line_end(const char* at, const char* end) {
  const void* nl = std::memchr(at, '\n', static_cast<std::size_t>(end - at));
  return nl != nullptr ? static_cast<const char*>(nl) + 1 : end;
}

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
  const MappedRange in_map(input, begin, end - begin);
  const MappedRange part_map(part, 0, part_length);
  const char* in = in_map.data();
  const char* const in_end = in + (end - begin);
  std::uint64_t in_offset = begin;
  const char* const part_begin = part_map.data();
  const char* const part_end = part_begin + part_length;
  const char* out = part_begin;                   // the part's next line
  const char* out_end = line_end(out, part_end);  // and its end
  while (in != in_end) {
    const char* const in_line_end = line_end(in, in_end);
    const auto length = static_cast<std::size_t>(in_line_end - in);
    if (static_cast<std::size_t>(out_end - out) == length && std::memcmp(out, in, length) == 0) {
      if (!visit(std::string_view(out, length), static_cast<std::uint64_t>(out - part_begin),
                 in_offset)) {
        return;
      }
      out = out_end;
      if (out == part_end) return;
      out_end = line_end(out, part_end);
    }
    in = in_line_end;
    in_offset += length;
  }
  throw std::runtime_error("joining split input '" + input.string() + "': the output part '" +
                           part.string() + "' has a line at byte " +
                           std::to_string(out - part_begin) +
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
