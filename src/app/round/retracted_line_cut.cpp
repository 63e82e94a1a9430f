#include "app/round/retracted_line_cut.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/durable/durable_file.hpp"
#include "io/durable/owned_fd.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kCopyBytes = std::size_t{1} << 20;  // the pread/pwrite fallback's buffer

[[noreturn]] void fail(const std::string& what, const fs::path& path) {
  throw std::runtime_error("leaving retracted copies out: cannot " + what + " '" + path.string() +
                           "': " + std::strerror(errno));
}

// Copies [from, until) of `in` to `out` at `at` through a buffer.
void copy_through_buffer(int in, int out, std::uint64_t from, std::uint64_t until, std::uint64_t at,
                         std::vector<char>& buf, const fs::path& output, const fs::path& tmp) {
  buf.resize(kCopyBytes);
  while (from < until) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kCopyBytes, until - from));
    const ssize_t got = ::pread(in, buf.data(), want, static_cast<off_t>(from));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("read", output);
    if (got == 0) {
      errno = 0;
      fail("read past the end of", output);
    }
    std::size_t written = 0;
    while (written < static_cast<std::size_t>(got)) {
      const ssize_t w = ::pwrite(out, buf.data() + written, static_cast<std::size_t>(got) - written,
                                 static_cast<off_t>(at + written));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail("write", tmp);
      written += static_cast<std::size_t>(w);
    }
    from += static_cast<std::uint64_t>(got);
    at += static_cast<std::uint64_t>(got);
  }
}

void copy_ranges(const fs::path& output, const fs::path& tmp, const PartWithoutRetracted& plan,
                 bool durable) {
  const io::OwnedFd in(::open(output.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.fd < 0) fail("open", output);
  const io::OwnedFd out(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (out.fd < 0) fail("create", tmp);
  std::vector<char> buf;
  bool in_kernel = true;  // until copy_file_range says it cannot
  std::uint64_t at = 0;   // next byte of tmp
  for (const auto& [begin, end] : plan.keep) {
    std::uint64_t from = begin;
    while (in_kernel && from < end) {
      auto off_in = static_cast<off_t>(from);
      auto off_out = static_cast<off_t>(at);
      const ssize_t n = ::copy_file_range(in.fd, &off_in, out.fd, &off_out,
                                          static_cast<std::size_t>(end - from), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        in_kernel = false;
        break;
      }
      if (n < 0) fail("copy_file_range into", tmp);
      if (n == 0) {
        errno = 0;
        fail("read past the end of", output);
      }
      from += static_cast<std::uint64_t>(n);
      at += static_cast<std::uint64_t>(n);
    }
    if (from < end) {
      copy_through_buffer(in.fd, out.fd, from, end, at, buf, output, tmp);
      at += end - from;
    }
  }
  if (durable && ::fsync(out.fd) != 0) fail("fsync", tmp);
}

}  // namespace

PartWithoutRetracted plan_output_without_retracted(const fs::path& input, std::uint64_t input_size,
                                                   const fs::path& output,
                                                   std::uint64_t output_length,
                                                   std::span<const RetractedLine> retracted,
                                                   const LineKeyHash& hash_of) {
  PartWithoutRetracted plan;
  const auto bad = [&](std::uint64_t offset, const std::string& why) {
    return std::runtime_error("leaving retracted copies out of '" + output.string() +
                              "': the retracted record at byte " + std::to_string(offset) +
                              " of '" + input.string() + "' " + why);
  };
  std::uint64_t keep_from = 0;
  std::size_t next = 0;  // into retracted
  std::string padded;    // a cut line with the padding the key parser reads past it
  if (!retracted.empty()) {
    try {
      for_each_written_line(input, 0, input_size, output, output_length,
                            [&](std::string_view line, std::uint64_t at, std::uint64_t offset) {
                              const RetractedLine& r = retracted[next];
                              if (offset > r.input_offset)
                                throw bad(r.input_offset, "is not a line of the output");
                              if (offset < r.input_offset) return true;
                              padded.assign(line);
                              padded.resize(line.size() + io::kLinePaddingBytes, ' ');
                              const std::optional<core::KeyHash> h =
                                  hash_of(std::string_view(padded.data(), line.size()));
                              if (!h || *h != r.hash) {
                                throw bad(r.input_offset,
                                          "(output byte " + std::to_string(at) +
                                              ") holds another key than the one retracted: "
                                              "the output does not match this run");
                              }
                              if (at > keep_from) plan.keep.emplace_back(keep_from, at);
                              keep_from = at + line.size();
                              ++plan.removed_lines;
                              plan.removed_bytes += line.size();
                              return ++next < retracted.size();
                            });
    } catch (const std::runtime_error& e) {
      if (std::string_view(e.what()).starts_with("leaving")) throw;
      throw std::runtime_error("leaving retracted copies out of '" + output.string() +
                               "': " + e.what());
    }
    if (next < retracted.size()) {
      throw bad(retracted[next].input_offset, "is not a line of the output");
    }
  }
  if (keep_from < output_length) plan.keep.emplace_back(keep_from, output_length);
  return plan;
}

fs::path cut_output_temp_path(const fs::path& output) { return output.string() + ".retracted-tmp"; }

std::uint64_t write_cut_output(const fs::path& output, const PartWithoutRetracted& plan,
                               bool durable) {
  const fs::path tmp = cut_output_temp_path(output);
  try {
    copy_ranges(output, tmp, plan, durable);
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
  return fs::file_size(tmp);
}

void commit_cut_output(const fs::path& output, bool durable) {
  // Not durable, the output goes first: a rename over an existing file makes
  // ext4 (auto_da_alloc) start writing the new one back at once, 0.45 s a
  // rank for the benchmark's 1.1 GB of cut outputs against 0.03 s, for a
  // durability a run without --state does not promise (a kill between the
  // two leaves the cut output under its temporary name, as a killed run
  // without --state leaves partial outputs). Durable, the rename replaces
  // the output atomically (the temporary file was fsynced: nothing to flush).
  if (!durable) fs::remove(output);
  fs::rename(cut_output_temp_path(output), output);
  if (durable) io::fsync_path(output.parent_path());
}

void write_output_without_retracted(const fs::path& output, const PartWithoutRetracted& plan,
                                    bool durable) {
  (void)write_cut_output(output, plan, durable);
  commit_cut_output(output, durable);
}

}  // namespace bloomshard::app
