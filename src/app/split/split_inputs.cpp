#include "app/split/split_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <stdexcept>
#include <utility>

#include "io/records/file_assignment.hpp"
#include "io/records/line_ranges.hpp"

namespace bloomshard::app {
namespace {

// Per unit, the fields one rank reports at a cut; summed over ranks, and
// only the rank reading a unit sets them. touched, records, offset, done,
// output_length, digest known, prefix digest, reject_length, frame start
// known, its compressed and decompressed offsets (compressed inputs).
constexpr std::size_t kFieldsPerUnit = 11;

std::filesystem::path part_path(const std::filesystem::path& output_dir,
                                const std::string& relative_path, std::size_t range,
                                const char* suffix) {
  return output_dir / kRangesDirName / (relative_path + ".range-" + std::to_string(range) + suffix);
}

// Bytes of piece k of an input of `size` bytes cut into `count` nominal
// ranges (the line-aligned cuts move them by at most a line).
std::uint64_t piece_bytes(std::uint64_t size, std::uint64_t count, std::uint64_t k) {
  const auto cut = [&](std::uint64_t j) { return size / count * j + size % count * j / count; };
  return cut(k + 1) - cut(k);
}

// The largest rank load of longest-first assignment of the pieces.
std::uint64_t largest_load(std::span<const std::uint64_t> sizes,
                           std::span<const std::uint64_t> counts, int ranks) {
  std::vector<std::uint64_t> pieces;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    for (std::uint64_t k = 0; k < counts[i]; ++k) {
      pieces.push_back(piece_bytes(sizes[i], counts[i], k));
    }
  }
  const std::vector<int> owners = io::assign_files_to_ranks(pieces, ranks);
  std::vector<std::uint64_t> load(static_cast<std::size_t>(ranks), 0);
  for (std::size_t j = 0; j < pieces.size(); ++j) {
    load[static_cast<std::size_t>(owners[j])] += pieces[j];
  }
  return *std::max_element(load.begin(), load.end());
}

// A cut input's count a little short of a multiple of the rank count (15
// at 16 ranks: the goal is met, one rank reads none of it) goes up to that
// multiple when this does not raise the largest load: the join copies
// (count - 1) / count of the input's output either way.
void round_up_to_rank_multiples(std::span<const std::uint64_t> sizes,
                                std::span<const std::uint64_t> caps,
                                std::vector<std::uint64_t>& counts, int ranks, std::uint64_t load) {
  const auto r = static_cast<std::uint64_t>(ranks);
  std::vector<std::uint64_t> rounded = counts;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 2) continue;
    const std::uint64_t multiple = (counts[i] + r - 1) / r * r;
    if (multiple <= caps[i] &&
        static_cast<double>(counts[i]) * kSplitMaxImbalance >= static_cast<double>(multiple)) {
      rounded[i] = multiple;
    }
  }
  if (rounded != counts && largest_load(sizes, rounded, ranks) <= load) counts = rounded;
}

}  // namespace

std::vector<std::uint64_t> plan_range_counts(std::span<const std::uint64_t> sizes,
                                             std::span<const std::uint64_t> max_counts, int ranks) {
  if (ranks < 1) throw std::invalid_argument("plan_range_counts: ranks must be >= 1");
  if (sizes.size() != max_counts.size()) {
    throw std::invalid_argument("plan_range_counts: one max count per input");
  }
  std::uint64_t total = 0;
  for (const std::uint64_t size : sizes) total += size;
  const double mean = static_cast<double>(total) / ranks;
  // Pieces of at most (kSplitMaxImbalance - 1) x mean always balance (any
  // list schedule ends within mean + its largest piece): no input needs
  // more ranges than that, which bounds the steps below by inputs + 10 x
  // ranks.
  const double enough = (kSplitMaxImbalance - 1) * mean;
  std::vector<std::uint64_t> caps(sizes.size(), 1);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double needed = std::ceil(static_cast<double>(sizes[i]) / enough);
    if (needed > 1) caps[i] = std::min(max_counts[i], static_cast<std::uint64_t>(needed));
  }
  std::vector<std::uint64_t> counts(sizes.size(), 1);
  // Inputs that may take another range, by their largest piece (size /
  // count rounded up; ties: the lower index first), and the largest piece
  // of the others: no assignment's largest load is below it, so the goal
  // is kSplitMaxImbalance x the mean or x that piece, whichever is larger.
  using Piece = std::pair<std::uint64_t, std::size_t>;  // (bytes, ~index)
  const auto piece_of = [&](std::size_t i) {
    return Piece{(sizes[i] + counts[i] - 1) / counts[i], ~i};
  };
  std::priority_queue<Piece> growable;
  std::uint64_t fixed_piece = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (caps[i] > 1) {
      growable.push(piece_of(i));
    } else {
      fixed_piece = std::max(fixed_piece, sizes[i]);
    }
  }
  const auto goal = [&] {
    return kSplitMaxImbalance * std::max(mean, static_cast<double>(fixed_piece));
  };
  std::uint64_t best_load = largest_load(sizes, counts, ranks);
  std::vector<std::uint64_t> best = counts;
  if (static_cast<double>(best_load) <= goal()) return counts;
  while (!growable.empty()) {
    const std::size_t i = ~growable.top().second;
    growable.pop();
    ++counts[i];
    if (counts[i] < caps[i]) {
      growable.push(piece_of(i));
    } else {
      fixed_piece = std::max(fixed_piece, piece_of(i).first);
    }
    // A piece above the goal is a load above it: assign only once none is.
    if (!growable.empty() && static_cast<double>(growable.top().first) > goal()) continue;
    const std::uint64_t load = largest_load(sizes, counts, ranks);
    if (static_cast<double>(load) <= goal()) {
      round_up_to_rank_multiples(sizes, caps, counts, ranks, load);
      return counts;
    }
    if (load < best_load) {
      best_load = load;
      best = counts;
    }
  }
  return best;
}

std::filesystem::path range_output_path(const std::filesystem::path& output_dir,
                                        const std::string& relative_path, std::size_t range) {
  return part_path(output_dir, relative_path, range, "");
}

std::filesystem::path range_reject_path(const std::filesystem::path& output_dir,
                                        const std::string& relative_path, std::size_t range) {
  return part_path(output_dir, relative_path, range, ".rejects.jsonl");
}

void split_large_inputs(RunManifest& m, int ranks, std::uint64_t min_bytes) {
  std::vector<std::uint64_t> sizes;
  std::vector<std::uint64_t> max_counts;
  for (const InputProgress& p : m.inputs) {
    sizes.push_back(p.file.size);
    const bool may_split = p.file.compression == io::Compression::kNone && p.file.size > min_bytes;
    // Ranges of at least min_bytes, but a file under twice it may halve.
    max_counts.push_back(may_split ? std::max<std::uint64_t>(2, p.file.size / min_bytes) : 1);
  }
  const std::vector<std::uint64_t> counts = plan_range_counts(sizes, max_counts, ranks);
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    InputProgress& p = m.inputs[i];
    const std::uint64_t count = counts[i];
    if (count < 2) continue;
    const std::vector<io::ByteRange> cuts =
        io::line_aligned_ranges(p.file.absolute_path, p.file.size, count);
    if (cuts.size() < 2) continue;  // one long line: nothing to split
    p.ranges.clear();
    for (const io::ByteRange& r : cuts) {
      RangeProgress g;
      g.begin = r.begin;
      g.end = r.end;
      g.cursor = {0, r.begin};
      p.ranges.push_back(g);
    }
  }
}

std::vector<std::size_t> first_units(const RunManifest& m) {
  std::vector<std::size_t> first;
  first.reserve(m.inputs.size() + 1);
  std::size_t next = 0;
  for (const InputProgress& p : m.inputs) {
    first.push_back(next);
    next += p.ranges.empty() ? 1 : p.ranges.size();
  }
  first.push_back(next);
  return first;
}

namespace {

// Files retracted records under their ranges, ascending (a record is
// retracted at most once: the owner forgets a copy when it retracts it).
void add_retracted(RunManifest& m, std::span<const core::OrderTag> tags) {
  std::vector<RangeProgress*> touched;
  for (const core::OrderTag t : tags) {
    const std::uint64_t i = core::order_input(t);
    const std::uint64_t offset = core::order_offset(t);
    if (t == 0 || !core::order_later_range(t) || i >= m.inputs.size() ||
        m.inputs[i].ranges.empty()) {
      throw std::logic_error("retracted record " + std::to_string(t) + " names no split input");
    }
    std::vector<RangeProgress>& ranges = m.inputs[i].ranges;
    const auto r =
        std::upper_bound(ranges.begin(), ranges.end(), offset,
                         [](std::uint64_t o, const RangeProgress& g) { return o < g.begin; });
    if (r == ranges.begin() + 1 || r == ranges.begin() || offset >= std::prev(r)->end) {
      throw std::logic_error("retracted record at byte " + std::to_string(offset) + " of input " +
                             std::to_string(i) + " lies in no range k > 0");
    }
    if (touched.empty() || touched.back() != &*std::prev(r)) touched.push_back(&*std::prev(r));
    std::prev(r)->retracted.push_back(offset);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (RangeProgress* r : touched) {  // once per range
    std::sort(r->retracted.begin(), r->retracted.end());
    r->retracted.erase(std::unique(r->retracted.begin(), r->retracted.end()), r->retracted.end());
  }
}

}  // namespace

RunManifest merge_cut(const comm::Communicator& comm, const RunManifest& base,
                      std::span<const FileState> states,
                      std::span<const core::OrderTag> retracted) {
  const std::vector<std::size_t> first = first_units(base);
  std::vector<std::uint64_t> fields(first.back() * kFieldsPerUnit, 0);
  for (const FileState& s : states) {
    std::uint64_t* f = &fields[(first[s.index] + s.range.value_or(0)) * kFieldsPerUnit];
    f[0] = 1;
    f[1] = s.cursor.records;
    f[2] = s.cursor.decompressed_offset;
    f[3] = s.done ? 1 : 0;
    f[4] = s.output_length;
    f[5] = s.prefix_digest ? 1 : 0;
    f[6] = s.prefix_digest.value_or(0);
    f[7] = s.reject_length;
    f[8] = s.cursor.frame ? 1 : 0;
    f[9] = s.cursor.frame ? s.cursor.frame->compressed_offset : 0;
    f[10] = s.cursor.frame ? s.cursor.frame->decompressed_offset : 0;
  }
  fields = comm.allreduce_sum(fields);
  RunManifest m = base;
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    InputProgress& p = m.inputs[i];
    for (std::size_t u = first[i]; u < first[i + 1]; ++u) {
      const std::uint64_t* f = &fields[u * kFieldsPerUnit];
      if (f[0] == 0) continue;  // not read in this segment: as the base says
      const std::optional<std::uint64_t> digest = f[5] != 0 ? std::optional(f[6]) : std::nullopt;
      const io::InputCursor cursor{
          f[1], f[2], f[8] != 0 ? std::optional(io::FrameStart{f[9], f[10]}) : std::nullopt};
      if (p.ranges.empty()) {
        p.cursor = cursor;
        p.done = f[3] != 0;
        p.output_length = f[4];
        p.prefix_digest = digest;
        continue;
      }
      RangeProgress& r = p.ranges[u - first[i]];
      r.cursor = cursor;
      r.done = f[3] != 0;
      r.output_length = f[4];
      r.prefix_digest = digest;
      r.reject_length = f[7];
    }
  }
  add_retracted(m, comm.allgather(retracted));
  return m;
}

}  // namespace bloomshard::app
