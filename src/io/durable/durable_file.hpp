// fsync of one named file or directory: what makes a write (or, on a
// directory, the entries created or renamed in it) survive a power cut.
// Used by the checkpoint store and by the app's run files.
#pragma once

#include <filesystem>

namespace bloomshard::io {

/// fsyncs a file or directory; throws CheckpointError naming it.
void fsync_path(const std::filesystem::path& path);

}  // namespace bloomshard::io
