// Durable directory entries. Under strict POSIX a new file, directory or
// rename is on disk only once its directory was fsynced; fsyncing the file
// itself keeps its bytes, not its name. These helpers make the entries the
// job creates on the output side durable, once per created entry (never per
// round), so that a checkpoint written after them never records a file a
// power cut can take away.
#pragma once

#include <filesystem>
#include <string_view>

namespace bloomshard::io {

/// Creates `dir` and its missing parents (as std::filesystem::
/// create_directories), then fsyncs the parent of each directory it created,
/// outermost first, so every new entry is durable. Directories that already
/// existed cost one stat each and no fsync. Safe to race with another
/// process creating the same directories (an extra fsync at most). Throws
/// OutputError naming the directory.
void create_directories_durably(const std::filesystem::path& dir);

/// fsyncs the directory holding `path` (its entry: after a create or a
/// rename to `path`). Throws OutputError naming the directory.
void sync_parent_directory(const std::filesystem::path& path);

/// Replaces `path` with `text` atomically and durably: written to
/// `path` + ".tmp", fsynced, renamed over `path`, and the directory
/// fsynced. A failure (ENOSPC, EIO) removes the temporary, leaves any old
/// `path` as it was, and throws OutputError naming the file.
void replace_file_durably(const std::filesystem::path& path, std::string_view text);

}  // namespace bloomshard::io
