#include "app/split/range_join.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "app/split/retracted_lines.hpp"
#include "app/split/split_inputs.hpp"
#include "io/durable/durable_file.hpp"
#include "io/durable/owned_fd.hpp"
#include "io/output/json_escape.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kCopyBytes = std::size_t{1} << 20;

[[noreturn]] void fail(const std::string& what, const fs::path& path) {
  throw std::runtime_error("joining split input: cannot " + what + " '" + path.string() +
                           "': " + std::strerror(errno));
}

// Copies the `keep` spans of `part` (committed length `length`), one after
// another, into `out` at `offset` (pread/pwrite: other ranks write other
// offsets of the same file).
void copy_part(const fs::path& part, std::uint64_t length, const PartWithoutRetracted& plan,
               const fs::path& out, std::uint64_t offset, bool durable) {
  const io::OwnedFd in(::open(part.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.fd < 0) fail("open the output part", part);
  const io::OwnedFd to(::open(out.c_str(), O_WRONLY | O_CLOEXEC));
  if (to.fd < 0) fail("open the mirrored output", out);
  std::string buf(kCopyBytes, '\0');
  std::uint64_t at = offset;  // next byte of `out`
  for (const auto& [from, until] : plan.keep) {
    std::uint64_t done = from;
    while (done < until) {
      const std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(kCopyBytes, until - done));
      const ssize_t got = ::pread(in.fd, buf.data(), want, static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("read the output part", part);
      if (got == 0) {
        errno = 0;
        throw std::runtime_error("joining split input: output part '" + part.string() +
                                 "' is shorter than its committed " + std::to_string(length) +
                                 " bytes");
      }
      std::size_t written = 0;
      while (written < static_cast<std::size_t>(got)) {
        const ssize_t w =
            ::pwrite(to.fd, buf.data() + written, static_cast<std::size_t>(got) - written,
                     static_cast<off_t>(at + written));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) fail("write the mirrored output", out);
        written += static_cast<std::size_t>(w);
      }
      done += static_cast<std::uint64_t>(got);
      at += static_cast<std::uint64_t>(got);
    }
  }
  if (durable && ::fsync(to.fd) != 0) fail("fsync the mirrored output", out);
}

std::string read_prefix(const fs::path& path, std::uint64_t length) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("open the reject part", path);
  std::string text(static_cast<std::size_t>(length), '\0');
  in.read(text.data(), static_cast<std::streamsize>(length));
  if (static_cast<std::uint64_t>(in.gcount()) != length) {
    throw std::runtime_error("joining split input: reject part '" + path.string() +
                             "' is shorter than its committed " + std::to_string(length) +
                             " bytes");
  }
  return text;
}

bool ready_to_join(const InputProgress& p) {
  if (p.done || p.ranges.empty()) return false;
  for (const RangeProgress& r : p.ranges) {
    if (!r.done) return false;
  }
  return true;
}

// Where the parts of the joined inputs go: part k of input i is unit
// first[i] + k, copied by rank (unit mod ranks).
struct JoinUnits {
  std::vector<std::size_t> first;
  std::size_t rank = 0;
  std::size_t ranks = 1;
  [[nodiscard]] bool mine(std::size_t i, std::size_t k) const {
    return (first[i] + k) % ranks == rank;
  }
  [[nodiscard]] std::size_t unit(std::size_t i, std::size_t k) const { return first[i] + k; }
};

[[noreturn]] void throw_join_error(const std::string& error) {
  throw std::runtime_error(error.empty() ? "another rank failed to join a split input" : error);
}

// Step 1, collective: each part's bytes without its retracted records
// (core/order/file_order.hpp), planned by the rank that copies it. Every rank
// learns every part's bytes left out (per unit, summed over ranks); throws
// on every rank if any rank failed.
struct JoinPlan {
  std::vector<PartWithoutRetracted> parts;  // per unit, filled on the copying rank
  std::vector<std::uint64_t> left_out;      // per unit, on every rank
};

JoinPlan plan_joins(const comm::Communicator& comm, const RunManifest& cut, const JoinUnits& units,
                    const std::vector<std::size_t>& joined, const fs::path& output_dir) {
  JoinPlan plan;
  plan.parts.resize(units.first.back());
  std::vector<std::uint64_t> left_out(units.first.back() + 1, 0);  // + 1: any rank failed
  std::string error;
  try {
    for (const std::size_t i : joined) {
      const InputProgress& p = cut.inputs[i];
      for (std::size_t k = 1; k < p.ranges.size(); ++k) {
        if (!units.mine(i, k)) continue;
        const RangeProgress& r = p.ranges[k];
        PartWithoutRetracted& part = plan.parts[units.unit(i, k)];
        part = plan_part_without_retracted(p.file.absolute_path, r.begin, r.end,
                                           range_output_path(output_dir, p.file.relative_path, k),
                                           r.output_length, r.retracted);
        left_out[units.unit(i, k)] = part.removed_bytes;
      }
    }
  } catch (const std::exception& e) {
    error = e.what();
    left_out.back() = 1;
  }
  left_out = comm.allreduce_sum(left_out);
  if (left_out.back() != 0) throw_join_error(error);
  left_out.pop_back();
  plan.left_out = std::move(left_out);
  return plan;
}

// Range k of input i as it lies in the joined output.
std::uint64_t joined_length(const RunManifest& cut, const JoinUnits& units, const JoinPlan& plan,
                            std::size_t i, std::size_t k) {
  return cut.inputs[i].ranges[k].output_length - plan.left_out[units.unit(i, k)];
}

// Step 2: this rank's parts copied into the mirrored outputs at their
// offsets, their rejects appended renumbered; "" or why it failed.
std::string copy_my_parts(const RunManifest& cut, const JoinUnits& units, const JoinPlan& plan,
                          const std::vector<std::size_t>& joined, InputFeed& feed,
                          const fs::path& output_dir, bool durable) {
  try {
    for (const std::size_t i : joined) {
      const InputProgress& p = cut.inputs[i];
      const fs::path out = io::output_path_for(output_dir, p.file.relative_path);
      std::uint64_t offset = p.ranges[0].output_length;
      std::uint64_t first_line = p.ranges[0].cursor.records + 1;
      for (std::size_t k = 1; k < p.ranges.size(); ++k) {
        const RangeProgress& r = p.ranges[k];
        if (units.mine(i, k)) {
          const PartWithoutRetracted& part = plan.parts[units.unit(i, k)];
          copy_part(range_output_path(output_dir, p.file.relative_path, k), r.output_length, part,
                    out, offset, durable);
          feed.count_left_out(part.removed_lines, part.removed_bytes);
          if (r.reject_length > 0) {
            feed.append_reject_lines(
                renumber_rejects(read_prefix(range_reject_path(output_dir, p.file.relative_path, k),
                                             r.reject_length),
                                 p.file.absolute_path.native(), first_line));
          }
        }
        offset += joined_length(cut, units, plan, i, k);
        first_line += r.cursor.records;
      }
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// Step 3, after every rank agreed that every part is in place: the joined
// inputs marked done in `cut` with their joined lengths and cursors, and
// rank 0 cuts each mirrored output to its joined length (a longer file
// holds a part of an earlier attempt's join). Collective; throws on every
// rank if rank 0 failed.
void finish_joins(const comm::Communicator& comm, RunManifest& cut, const JoinUnits& units,
                  const JoinPlan& plan, const std::vector<std::size_t>& joined,
                  const fs::path& output_dir, bool durable) {
  std::string error;
  for (const std::size_t i : joined) {
    InputProgress& p = cut.inputs[i];
    std::uint64_t length = p.ranges[0].output_length;
    std::uint64_t records = 0;
    for (std::size_t k = 0; k < p.ranges.size(); ++k) {
      if (k > 0) length += joined_length(cut, units, plan, i, k);
      records += p.ranges[k].cursor.records;
    }
    if (comm.rank() == 0) {
      try {
        const fs::path out = io::output_path_for(output_dir, p.file.relative_path);
        fs::resize_file(out, length);
        if (durable) io::fsync_path(out);
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    p.done = true;
    p.output_length = length;
    p.cursor = {records, p.file.size};
  }
  error = comm.broadcast(error);
  if (!error.empty()) throw std::runtime_error("joining split input: " + error);
}

}  // namespace

std::string renumber_rejects(std::string_view lines, std::string_view file,
                             std::uint64_t first_line) {
  // A reject line starts {"file":"<escaped file>","line":N, (reject_writer).
  std::string prefix = "{\"file\":\"";
  io::append_json_string_contents(prefix, file);
  prefix += "\",\"line\":";
  std::string out;
  out.reserve(lines.size() + lines.size() / 8);
  while (!lines.empty()) {
    const std::size_t nl = lines.find('\n');
    const std::string_view line =
        lines.substr(0, nl == std::string_view::npos ? lines.size() : nl + 1);
    lines.remove_prefix(line.size());
    std::uint64_t n = 0;
    const char* digits = line.data() + prefix.size();
    const auto [end, ec] = line.starts_with(prefix)
                               ? std::from_chars(digits, line.data() + line.size(), n)
                               : std::from_chars_result{digits, std::errc::invalid_argument};
    if (ec != std::errc()) {
      out += line;
      continue;
    }
    out += prefix;
    out += std::to_string(n + first_line - 1);
    out.append(end, line.data() + line.size());
  }
  return out;
}

std::vector<std::size_t> join_split_inputs(const comm::Communicator& comm, RunManifest& cut,
                                           InputFeed& feed, const fs::path& output_dir,
                                           bool durable) {
  const JoinUnits units{first_units(cut), comm.urank(), comm.usize()};
  std::vector<std::size_t> joined;
  for (std::size_t i = 0; i < cut.inputs.size(); ++i) {
    if (ready_to_join(cut.inputs[i])) joined.push_back(i);
  }
  const JoinPlan plan = plan_joins(comm, cut, units, joined, output_dir);
  const std::string error = copy_my_parts(cut, units, plan, joined, feed, output_dir, durable);
  // Fault injection for tests/e2e/split_case.sh: rank N dies here, its
  // parts written into the mirrored output, before any rank agreed.
  if (const char* rank = std::getenv("BLOOMSHARD_FAULT_KILL_IN_JOIN");
      rank != nullptr && !joined.empty() && std::atoi(rank) == comm.rank()) {
    (void)::raise(SIGKILL);
  }
  // Agreement: every part is in place (and durable) before any cut.
  if (comm.allreduce_max(std::uint64_t{error.empty() ? 0U : 1U}) != 0) throw_join_error(error);
  finish_joins(comm, cut, units, plan, joined, output_dir, durable);
  return joined;
}

void remove_joined_parts(const RunManifest& m, const fs::path& output_dir) {
  std::error_code ec;
  for (const InputProgress& p : m.inputs) {
    if (!p.done || p.ranges.empty()) continue;
    for (std::size_t k = 1; k < p.ranges.size(); ++k) {
      fs::remove(range_output_path(output_dir, p.file.relative_path, k), ec);
      fs::remove(range_reject_path(output_dir, p.file.relative_path, k), ec);
    }
  }
  // Empty folders left by mirrored subfolders, then _ranges itself.
  const fs::path root = output_dir / kRangesDirName;
  if (!fs::exists(root, ec)) return;
  std::vector<fs::path> dirs;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec)) dirs.push_back(it->path());
  }
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) {
    if (fs::is_empty(*d, ec)) fs::remove(*d, ec);
  }
  if (fs::is_empty(root, ec)) fs::remove(root, ec);
}

}  // namespace bloomshard::app
