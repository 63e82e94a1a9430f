// Pre-flight of the paths a job will write: one check of every output
// path (output dir, state dir, rejects dir, metrics file) before any work
// and before anything is created, so a job never runs for hours to fail at
// its end on a directory that was never there. Pure filesystem, no MPI:
// rank 0 runs it and the job broadcasts the verdict. A later failure (a
// disk that fills, a mount that goes read-only during the run) is still
// possible and is reported where it happens.
#pragma once

#include <filesystem>
#include <span>
#include <string>

namespace bloomshard::app {

/// A path the job writes, named by the option it came from.
struct WritePath {
  enum class Kind : unsigned char {
    kDirectory,  ///< created (with missing parents) by the job if absent
    kFile,       ///< written into an existing directory (or one the job creates)
  };
  std::string option;  ///< e.g. "--metrics" (for the message)
  std::filesystem::path path;
  Kind kind = Kind::kDirectory;
};

/// The first problem with `paths`, or "" when every one can be written:
/// a directory that exists as a file, a path through a file ("'a/b' is not
/// a directory"), a file option that names a directory, a file whose
/// directory does not exist (unless it is one of the kDirectory entries,
/// which the job creates), and a nearest existing directory that this
/// process cannot write (read-only file system, or permissions; checked
/// with access(2), which sees EROFS for root too). Creates nothing.
[[nodiscard]] std::string check_write_paths(std::span<const WritePath> paths);

/// A problem if `written` (an output or state dir) and an input argument
/// lie inside one another (a run would read its own outputs, or put its
/// lock file into its inputs), else "".
[[nodiscard]] std::string overlap_with_inputs(const std::string& option,
                                              const std::filesystem::path& written,
                                              std::span<const std::filesystem::path> inputs);

}  // namespace bloomshard::app
