// Before a run that a checkpoint describes goes on (a resume) or is
// declared done (the "already finished" start): every output file the
// manifest records must still be there with at least its committed length.
// A checkpoint outlives its outputs when they were deleted or truncated, or
// when a power cut took entries that never reached the disk; without this
// check a finished run would say "nothing to do" with its outputs gone.
#pragma once

#include <filesystem>
#include <string>

#include "app/run/run_manifest.hpp"

namespace bloomshard::app {

/// Empty when every output `m` records under `output_dir` exists and is at
/// least its committed length (a resume truncates longer ones); otherwise a
/// message naming the first missing or short file, its committed length and
/// its size, and how many more there are. Checked: the mirrored output of
/// each input with a committed length or done (an input skipped as broken
/// may have none; its end pass's temporary file instead while a recorded
/// cut waits for its rename), the parts of unfinished split inputs, and the
/// reject files with a committed length. Reads sizes only (one stat per
/// file).
[[nodiscard]] std::string missing_or_short_output(const RunManifest& m,
                                                  const std::filesystem::path& output_dir);

}  // namespace bloomshard::app
