#include "app/round/retracted_line_place.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "io/durable/owned_fd.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// First read of a retracted line: most lines are shorter; a longer one is
// read again with 8x the bytes until its newline or its run's end.
constexpr std::uint64_t kFirstLineRead = 1024;

[[noreturn]] void fail(const std::string& what, const fs::path& path) {
  throw std::runtime_error("leaving retracted copies out: cannot " + what + " '" + path.string() +
                           "': " + std::strerror(errno));
}

// Reads output bytes [from, from + length) into `buf`; false at the end of
// the file before that.
bool read_exactly(int fd, std::uint64_t from, std::uint64_t length, std::string& buf,
                  const fs::path& output) {
  buf.resize(static_cast<std::size_t>(length));
  std::size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n =
        ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read", output);
    if (n == 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

// The whole line of the output at `at` whose written run has `room` bytes
// from it on (`length`: the output's), terminator included, into `line`;
// false when it does not start after a newline or does not end within the
// run (a newline, or the output's last byte).
bool read_whole_line(int fd, std::uint64_t at, std::uint64_t room, std::uint64_t length,
                     std::string& buf, std::string& line, const fs::path& output) {
  const std::uint64_t before = at > 0 ? 1 : 0;  // the byte before: a newline
  for (std::uint64_t want = std::min(room, kFirstLineRead);; want = std::min(room, want * 8)) {
    if (!read_exactly(fd, at - before, before + want, buf, output)) return false;
    if (before == 1 && buf[0] != '\n') return false;
    const std::string_view text = std::string_view(buf).substr(before);
    if (const std::size_t nl = text.find('\n'); nl != std::string_view::npos) {
      line.assign(text.substr(0, nl + 1));
      return true;
    }
    if (want == room) {  // no newline in the run: only the output's last line has none
      if (at + room != length) return false;
      line.assign(text);
      return !line.empty();
    }
  }
}

}  // namespace

std::optional<PartWithoutRetracted> plan_cut_by_offset_map(const fs::path& output,
                                                           std::uint64_t output_length,
                                                           const core::OutputOffsetMap& map,
                                                           std::span<const RetractedLine> retracted,
                                                           const LineKeyHash& hash_of) {
  if (map.broken() || map.output_length() != output_length) return std::nullopt;
  PartWithoutRetracted plan;
  std::uint64_t keep_from = 0;
  if (!retracted.empty()) {
    const io::OwnedFd fd(::open(output.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.fd < 0) fail("open", output);
    core::OutputOffsetMap::Cursor cursor(map);
    std::string buf;
    std::string line;  // with the padding the key parser reads past it
    for (std::size_t i = 0; i < retracted.size(); ++i) {
      const RetractedLine& r = retracted[i];
      if (i > 0 && r.input_offset <= retracted[i - 1].input_offset) return std::nullopt;
      const std::optional<core::OutputOffsetMap::Place> place = cursor.find(r.input_offset);
      if (!place) return std::nullopt;
      const std::uint64_t at = place->output_offset;
      const std::uint64_t room = place->run_end - r.input_offset;
      if (at < keep_from || at + room > output_length) return std::nullopt;
      if (!read_whole_line(fd.fd, at, room, output_length, buf, line, output)) return std::nullopt;
      const std::size_t size = line.size();
      line.resize(size + io::kLinePaddingBytes, ' ');
      const std::optional<core::KeyHash> h = hash_of(std::string_view(line.data(), size));
      if (!h || *h != r.hash) return std::nullopt;
      if (at > keep_from) plan.keep.emplace_back(keep_from, at);
      keep_from = at + size;
      ++plan.removed_lines;
      plan.removed_bytes += size;
    }
  }
  if (keep_from < output_length) plan.keep.emplace_back(keep_from, output_length);
  return plan;
}

}  // namespace bloomshard::app
