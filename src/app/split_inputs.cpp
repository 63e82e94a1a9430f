#include "bloomshard/app/split_inputs.hpp"

#include "bloomshard/io/line_ranges.hpp"

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

}  // namespace

std::filesystem::path range_output_path(const std::filesystem::path& output_dir,
                                        const std::string& relative_path, std::size_t range) {
  return part_path(output_dir, relative_path, range, "");
}

std::filesystem::path range_reject_path(const std::filesystem::path& output_dir,
                                        const std::string& relative_path, std::size_t range) {
  return part_path(output_dir, relative_path, range, ".rejects.jsonl");
}

void split_large_inputs(RunManifest& m, int ranks, std::uint64_t min_bytes) {
  std::uint64_t total = 0;
  for (const InputProgress& p : m.inputs) total += p.file.size;
  for (InputProgress& p : m.inputs) {
    if (p.file.compression != io::Compression::kNone || p.file.size <= min_bytes) continue;
    const std::uint64_t count = io::range_count_for(p.file.size, total, ranks, min_bytes);
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

RunManifest merge_cut(const comm::Communicator& comm, const RunManifest& base,
                      std::span<const FileState> states) {
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
  return m;
}

}  // namespace bloomshard::app
