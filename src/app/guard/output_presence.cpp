#include "app/guard/output_presence.hpp"

#include <cstdint>
#include <system_error>
#include <vector>

#include "app/guard/output_guard.hpp"
#include "app/round/retracted_line_cut.hpp"
#include "app/split/split_inputs.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {
namespace fs = std::filesystem;
namespace {

struct Recorded {
  fs::path path;
  std::uint64_t committed = 0;
};

std::vector<Recorded> recorded_outputs(const RunManifest& m, const fs::path& output_dir) {
  std::vector<Recorded> out;
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    const InputProgress& p = m.inputs[i];
    fs::path mirror = io::output_path_for(output_dir, p.file.relative_path);
    // An end pass killed before its renames: the cut output (of the
    // committed length, which may be longer than the output in annotate
    // mode) is the temporary file until the resume renames it.
    if (const fs::path tmp = cut_output_temp_path(mirror); cut_recorded(m, i) && fs::exists(tmp)) {
      mirror = tmp;
    }
    if (!p.ranges.empty() && !p.done) {
      // Range 0 writes the mirror itself, ranges k > 0 their parts.
      for (std::size_t k = 0; k < p.ranges.size(); ++k) {
        const RangeProgress& r = p.ranges[k];
        if (r.output_length > 0) {
          out.push_back({k == 0 ? mirror : range_output_path(output_dir, p.file.relative_path, k),
                         r.output_length});
        }
        if (k > 0 && r.reject_length > 0) {
          out.push_back({range_reject_path(output_dir, p.file.relative_path, k), r.reject_length});
        }
      }
    } else if (p.output_length > 0 || (p.done && p.skipped.empty())) {
      out.push_back({mirror, p.output_length});
    }
  }
  for (const RejectSegment& r : m.rejects) {
    if (r.length > 0) out.push_back({output_dir / kRejectsDirName / r.name, r.length});
  }
  return out;
}

}  // namespace

std::string missing_or_short_output(const RunManifest& m, const fs::path& output_dir) {
  std::string first;
  std::size_t bad = 0;
  for (const Recorded& r : recorded_outputs(m, output_dir)) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(r.path, ec);
    if (!ec && size >= r.committed) continue;
    if (bad++ > 0) continue;
    first =
        "'" + r.path.string() + "' has " + std::to_string(r.committed) +
        " committed bytes in the checkpoint but " +
        (ec ? "is missing (" + ec.message() + ")" : "is only " + std::to_string(size) + " bytes");
  }
  if (bad > 1) first += " (and " + std::to_string(bad - 1) + " more missing or short outputs)";
  return first;
}

}  // namespace bloomshard::app
