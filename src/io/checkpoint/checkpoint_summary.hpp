// Reading a checkpoint file's summary in one process, without MPI: HDF5's
// default (sec2) driver over the store's index reader. The io layer builds
// it against parallel HDF5; the Python module compiles the same source
// against serial HDF5 (src/python/CMakeLists.txt), so this header and its
// source include nothing of MPI.
#pragma once

#include <filesystem>

#include "bloomshard/store/header.hpp"

namespace bloomshard::io {

using store::CheckpointSummary;

/// Not collective: reads the header and layer infos of a checkpoint file.
/// Throws CheckpointError naming the problem (not an HDF5 file, missing
/// attribute or dataset, format version newer than kCheckpointFormatVersion).
/// Does not compare hash scheme or layout with this build: the caller does.
[[nodiscard]] CheckpointSummary read_checkpoint_summary(const std::filesystem::path& file);

}  // namespace bloomshard::io
