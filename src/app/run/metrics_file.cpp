#include "app/run/metrics_file.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include "app/report/job_metrics.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/durable/durable_entries.hpp"

namespace bloomshard::app {

void write_metrics_file(const std::string& path, const std::string& json) {
  io::replace_file_durably(path, json);
}

void write_metrics_of_finished_run(const DedupConfig& config) {
  if (config.metrics_path.empty() || std::filesystem::exists(config.metrics_path)) return;
  // The generation the start decided by: the newest whose header reads.
  std::optional<io::CheckpointSummary> saved;
  for (const std::uint64_t g : io::resume_candidates(config.state_dir)) {
    try {
      saved = io::read_checkpoint_summary(io::generation_path(config.state_dir, g));
      break;
    } catch (const std::exception&) {
      continue;  // the start's own decision skipped it too
    }
  }
  if (!saved || !saved->header.finished) return;  // changed since the decision: say nothing
  write_metrics_file(config.metrics_path,
                     metrics_json(summary_of_finished_run(
                         *saved, manifest_from_json(saved->header.manifest_json))));
  std::cout << "bloomshard dedup: metrics of the finished run written to '" << config.metrics_path
            << "' (from its state)\n";
}

}  // namespace bloomshard::app
