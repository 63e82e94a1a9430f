// Guards the output directory of a dedup run: refuses one that already
// holds another run's outputs (unless --overwrite), refuses inputs and
// outputs that overlap, and records what this run writes in a marker file
// (OUTPUT/_bloomshard_run.json) so a later --overwrite removes exactly that
// and nothing the user put there. Runs on rank 0 only (filesystem work).
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// Name of the marker file and of the rejects folder inside the output dir.
inline constexpr const char* kRunMarkerName = "_bloomshard_run.json";
inline constexpr const char* kRejectsDirName = "_rejects";

/// Result of preparing the output dir: empty `error` on success, otherwise
/// the message and the exit code to end the job with.
struct OutputCheck {
  std::string error;
  int exit_code = 0;
};

/// True if `output_dir` exists and holds anything but the run's lock file
/// (a run without --state and without --overwrite is refused there).
[[nodiscard]] bool output_dir_in_use(const std::filesystem::path& output_dir);

/// The refusal for an output dir in use, naming the ways on: --overwrite,
/// and --state for a stop that can be resumed (when an earlier run's
/// marker is there), or another dir. `state_dir` is this job's --state
/// ("" without one): with one, the earlier run is another run than the
/// state's, and the message says so instead of suggesting --state.
[[nodiscard]] std::string not_empty_refusal(const std::filesystem::path& output_dir,
                                            const std::filesystem::path& state_dir = {});

/// The checks of prepare_output_dir without its writes: the refusal it
/// would give, or an empty `error`. A start calls it before it records
/// anything in the state (RUN.json), so a refused start leaves the state as
/// it was. `state_dir` as for not_empty_refusal. Never throws for user
/// errors.
[[nodiscard]] OutputCheck check_output_dir(const std::filesystem::path& output_dir,
                                           std::span<const std::filesystem::path> input_args,
                                           std::span<const io::InputFile> inputs, bool overwrite,
                                           const std::filesystem::path& state_dir = {});

/// Checks and prepares `output_dir` for a run writing `inputs`' mirrors
/// (creates it, removes a previous run's files with `overwrite`, writes the
/// marker). Never throws for user errors.
[[nodiscard]] OutputCheck prepare_output_dir(const std::filesystem::path& output_dir,
                                             std::span<const std::filesystem::path> input_args,
                                             std::span<const io::InputFile> inputs, bool overwrite);

}  // namespace bloomshard::app
