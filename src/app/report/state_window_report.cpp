#include "app/report/state_window_report.hpp"

#include <cstdio>
#include <map>

#include "bloomshard/core/bloom_kernel.hpp"

namespace bloomshard::app {

std::vector<SlotReport> slot_reports(const io::CheckpointSummary& s,
                                     std::span<const std::uint64_t> run_file_bytes) {
  std::vector<SlotReport> out;
  if (s.header.window.empty()) return out;
  std::map<std::uint64_t, SlotReport> by_slot;
  const auto entry = [&](std::uint64_t slot) -> SlotReport& {
    SlotReport& r = by_slot[slot];
    r.slot = slot;
    r.age = s.header.window_slot >= slot ? s.header.window_slot - slot : 0;
    return r;
  };
  for (std::size_t i = 0; i < s.runs.size(); ++i) {
    SlotReport& r = entry(s.runs[i].slot);
    ++r.runs;
    r.keys += s.runs[i].keys;
    r.key_bytes += s.runs[i].bytes;
    r.file_bytes += i < run_file_bytes.size() ? run_file_bytes[i] : 0;
  }
  for (const io::CheckpointLayerInfo& l : s.layers) {
    SlotReport& r = entry(l.slot);
    ++r.layers;
    r.bloom_bytes +=
        l.geometry.blocks_per_slice * core::kBlockWords * 8 * s.header.params.num_slices;
  }
  for (const auto& [slot, r] : by_slot) out.push_back(r);
  return out;
}

void add_window_json(JsonWriter& j, const io::CheckpointSummary& s,
                     std::span<const std::uint64_t> run_file_bytes) {
  if (s.header.window.empty()) return;
  j.value("window", s.header.window);
  j.value("current_slot", s.header.window_slot);
  j.value("current_slot_progress", s.header.window_slot_progress);
  j.begin_array("slots");
  for (const SlotReport& r : slot_reports(s, run_file_bytes)) {
    j.begin_object();
    j.value("slot", r.slot);
    j.value("age", r.age);
    j.value("runs", r.runs);
    j.value("keys", r.keys);
    j.value("key_bytes", r.key_bytes);
    j.value("file_bytes", r.file_bytes);
    j.value("layers", r.layers);
    j.value("bloom_bytes", r.bloom_bytes);
    j.end_object();
  }
  j.end_array();
}

void print_window_text(const io::CheckpointSummary& s,
                       std::span<const std::uint64_t> run_file_bytes) {
  if (s.header.window.empty()) return;
  std::printf("window      %s, current slot %llu\n", s.header.window.c_str(),
              static_cast<unsigned long long>(s.header.window_slot));
  for (const SlotReport& r : slot_reports(s, run_file_bytes)) {
    std::printf(
        "  slot %-4llu age %llu: %llu keys, %.1f MiB of %llu run(s), %llu layer(s) "
        "%.1f MiB\n",
        static_cast<unsigned long long>(r.slot), static_cast<unsigned long long>(r.age),
        static_cast<unsigned long long>(r.keys), static_cast<double>(r.file_bytes) / 1048576.0,
        static_cast<unsigned long long>(r.runs), static_cast<unsigned long long>(r.layers),
        static_cast<double>(r.bloom_bytes) / 1048576.0);
  }
}

}  // namespace bloomshard::app
