#include "app/feed/skipped_inputs.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace bloomshard::app {
namespace {

// Length-prefixed fields ("5:a.txt"): names and reasons may hold any byte.
void put(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

std::string take(std::string_view& in) {
  const std::size_t colon = in.find(':');
  const std::size_t n = std::stoull(std::string(in.substr(0, colon)));
  std::string s(in.substr(colon + 1, n));
  in.remove_prefix(colon + 1 + n);
  return s;
}

std::string encode(std::span<const SkippedInput> list) {
  std::string out;
  for (const SkippedInput& s : list) {
    put(out, std::to_string(s.index));
    put(out, s.file);
    put(out, std::to_string(s.at.records));
    put(out, std::to_string(s.at.decompressed_offset));
    put(out, s.reason);
  }
  return out;
}

void decode(std::string_view in, std::vector<SkippedInput>& out) {
  while (!in.empty()) {
    SkippedInput s;
    s.index = std::stoull(take(in));
    s.file = take(in);
    s.at.records = std::stoull(take(in));
    s.at.decompressed_offset = std::stoull(take(in));
    s.reason = take(in);
    out.push_back(std::move(s));
  }
}

}  // namespace

std::vector<SkippedInput> gather_skipped_inputs(const comm::Communicator& comm,
                                                std::span<const SkippedInput> mine) {
  std::vector<SkippedInput> all;
  if (comm.allreduce_sum(static_cast<std::uint64_t>(mine.size())) == 0) return all;
  const std::string own = encode(mine);
  for (int r = 0; r < comm.size(); ++r) {
    decode(comm.broadcast(comm.rank() == r ? own : std::string(), r), all);
  }
  std::sort(all.begin(), all.end(),
            [](const SkippedInput& a, const SkippedInput& b) { return a.index < b.index; });
  return all;
}

std::vector<SkippedInput> skipped_in_manifest(const RunManifest& m) {
  std::vector<SkippedInput> out;
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    const InputProgress& p = m.inputs[i];
    if (!p.skipped.empty()) out.push_back({i, p.file.relative_path, p.cursor, p.skipped});
  }
  return out;
}

void mark_skipped_inputs(RunManifest& m, std::span<const SkippedInput> skipped) {
  for (const SkippedInput& s : skipped) {
    if (s.index < m.inputs.size()) m.inputs[s.index].skipped = s.reason;
  }
}

std::string describe_skip(const SkippedInput& s) {
  std::ostringstream out;
  out << '\'' << s.file << "' from record " << s.at.records + 1 << " (decompressed byte "
      << s.at.decompressed_offset << "): " << s.reason;
  return out.str();
}

}  // namespace bloomshard::app
