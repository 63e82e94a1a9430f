#include "app/split/file_order_rebuild.hpp"

#include <algorithm>
#include <vector>

#include "app/split/order_tag_wire.hpp"
#include "app/split/retracted_lines.hpp"
#include "app/split/split_inputs.hpp"

namespace bloomshard::app {

std::uint64_t rebuild_file_order(comm::KeyRouter& router, const RunManifest& m, InputFeed& feed,
                                 const std::filesystem::path& output_dir, std::uint64_t budget,
                                 core::FileOrder& order) {
  const comm::Communicator& comm = router.comm();
  const std::vector<std::size_t> first = first_units(m);
  std::vector<core::KeyRef> keys;  // hashes only: the owner's memory needs no bytes
  std::vector<core::OrderTag> tags;
  std::string error;
  try {
    for (std::size_t i = 0; i < m.inputs.size(); ++i) {
      const InputProgress& p = m.inputs[i];
      if (p.done || p.ranges.empty()) continue;
      for (std::size_t k = 1; k < p.ranges.size(); ++k) {
        const RangeProgress& r = p.ranges[k];
        if ((first[i] + k) % comm.usize() != comm.urank() || r.output_length == 0) continue;
        const std::optional<core::OrderTag> base = core::order_tag_base(i, p.file.size, true);
        if (!base) continue;   // beyond the tags' limits: arrival order
        std::size_t next = 0;  // into r.retracted
        for_each_written_line(
            p.file.absolute_path, r.begin, r.cursor.decompressed_offset,
            range_output_path(output_dir, p.file.relative_path, k), r.output_length,
            [&](std::string_view line, std::uint64_t, std::uint64_t offset) {
              while (next < r.retracted.size() && r.retracted[next] < offset) ++next;
              if (next < r.retracted.size() && r.retracted[next] == offset) return true;
              if (const std::optional<core::KeyHash> h = feed.key_hash_of(p.file.format, line)) {
                keys.push_back({*h, {}});
                tags.push_back(*base | offset);
              }
              return true;
            });
      }
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (comm.any(!error.empty())) {
    throw std::runtime_error(error.empty() ? "another rank failed to read a split input's parts"
                                           : "resuming file order: " + error);
  }
  std::vector<char> wire_bytes;
  std::vector<core::KeyRef> wire_keys;
  append_order_tags(keys, tags, wire_bytes, wire_keys);
  std::vector<core::Verdict> verdicts(wire_keys.size());
  std::vector<core::KeyRef> untagged;
  std::vector<core::OrderTag> owned_tags;
  std::vector<core::OrderTag> none;  // nothing is decided: every copy is a kept one
  router.route(wire_keys,
               [&](std::span<const core::KeyRef> owned, std::span<core::Verdict> out) {
                 split_order_tags(owned, untagged, owned_tags);
                 std::fill(out.begin(), out.end(), core::Verdict::kNew);
                 order.settle(untagged, owned_tags, out, none);
               },
               verdicts, {.budget = budget});
  return keys.size();
}

}  // namespace bloomshard::app
