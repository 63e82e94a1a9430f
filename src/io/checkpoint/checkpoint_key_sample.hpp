// The key-sample check of a checkpoint's header (store/key_sample.hpp)
// under its io names, and the serial reader that takes the sample from a
// generation file and the run files it lists.
#pragma once

#include <filesystem>
#include <string>

#include "bloomshard/store/key_sample.hpp"

namespace bloomshard::io {

using store::BloomHolds;
using store::header_names_problem;
using store::key_sample_problem;
using store::kSampledKeysPerRun;
using store::layer_geometry_problem;
using store::normalization_problem;
using store::sample_first_keys;
using store::SampledKey;

/// Serial (HDF5's default driver, no MPI; checkpoint_read.cpp): all three
/// checks above on generation file `file`, with the sample taken from every
/// run it lists (slices whose checksums fail and missing run files are
/// skipped: verify reports those). Returns "" or the problem, naming the
/// file. Throws CheckpointError if the files cannot be read. Costs ~16
/// slices per run, read in full and checksummed.
[[nodiscard]] std::string stored_key_sample_problem(const std::filesystem::path& file);

}  // namespace bloomshard::io
