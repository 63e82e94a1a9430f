#include "app/guard/dedup_preflight.hpp"

#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/guard/path_preflight.hpp"
#include "app/run/run_state.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"

namespace bloomshard::app {
namespace fs = std::filesystem;
namespace {

// A state dir that holds no run yet (no RUN.json, no generation): its start
// is a fresh one, refused for an output dir in use like a run without --state.
bool state_holds_no_run(const std::string& state_dir) {
  if (state_dir.empty()) return true;
  const fs::path state(state_dir);
  std::error_code ec;
  return !fs::exists(state / kRunIdentityName, ec) && io::resume_candidates(state).empty();
}

}  // namespace

OutputCheck preflight_dedup(const DedupConfig& c) {
  try {
    const std::vector<fs::path> inputs(c.inputs.begin(), c.inputs.end());
    const fs::path output(c.output_dir);
    if (std::string why = overlap_with_inputs("output dir", output, inputs); !why.empty()) {
      return {why, kExitUsage};
    }
    if (!c.state_dir.empty()) {
      if (std::string why = overlap_with_inputs("--state", c.state_dir, inputs); !why.empty()) {
        return {why, kExitUsage};
      }
    }
    std::vector<WritePath> paths{
        {"--output", output, WritePath::Kind::kDirectory},
        {"--output", output / kRejectsDirName, WritePath::Kind::kDirectory}};
    if (!c.state_dir.empty())
      paths.push_back({"--state", c.state_dir, WritePath::Kind::kDirectory});
    if (!c.metrics_path.empty()) {
      paths.push_back({"--metrics", c.metrics_path, WritePath::Kind::kFile});
    }
    if (std::string why = check_write_paths(paths); !why.empty()) return {why, kExitUsage};
    // The output guard refuses this start later anyway; a lock file left in
    // the dir (a killed attempt's) defers the decision to the locked check.
    if (!c.overwrite && state_holds_no_run(c.state_dir) && output_dir_in_use(output) &&
        !fs::exists(output / kOutputLockName)) {
      return {not_empty_refusal(output, c.state_dir), kExitOutputInUse};
    }
  } catch (const std::exception& e) {
    return {std::string("cannot check the job's paths: ") + e.what(), kExitFailure};
  }
  return {};
}

}  // namespace bloomshard::app
