// Input discovery: which files a job reads, in which order, how each is
// decoded, and under which relative path its kept records are mirrored into
// the output directory. Pure filesystem inspection, no MPI.
//
// Decisions (documented contract):
// - A path given directly that is a regular file (or a symlink to one) is an
//   input whose relative path is its file name.
// - A directory is walked recursively. Symlinks to regular files are followed
//   (the content read is the target's; the relative path is the link's).
//   Entries whose name starts with '_' or '.' (files and whole folders) are
//   skipped during the walk, as Hadoop and Spark do: they hold bookkeeping
//   such as _SUCCESS, .crc files, or bloomshard's own _rejects/ and run
//   marker. A file named directly is read whatever its name.
//   Symlinks to directories are NOT descended (no cycles, no escaping the
//   tree); FIFOs, sockets, devices and dangling links are skipped.
// - Relative paths: when exactly one path is given and it is a directory, a
//   file's relative path is its path below that directory (in/a/b.jsonl ->
//   a/b.jsonl). Otherwise every input is prefixed by the name of the
//   argument it came from (dirs x, y -> x/..., y/...; a file -> its name).
//   Two inputs that would map to the same relative path (e.g. dirs a/data and
//   b/data, or the same file given twice) are refused with InputError rather
//   than silently merged or overwritten.
// - Relative paths use '/' separators and never contain "." / ".." / empty
//   components, so output_path_for() accepts every one of them.
// - The result is sorted by relative path (bytewise), so every rank and every
//   run sees the same order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bloomshard::io {

/// How lines are turned into keys: kPlainLines = the whole line is the key;
/// kJsonLines = each line is one JSON object and the key is one of its fields.
enum class Format : std::uint8_t { kPlainLines = 0, kJsonLines = 1 };

/// Compression of a file's byte stream (inputs and outputs).
enum class Compression : std::uint8_t { kNone = 0, kGzip = 1, kZstd = 2 };

/// "plain" or "jsonl".
[[nodiscard]] std::string_view format_name(Format f) noexcept;
/// "none", "gz" or "zst".
[[nodiscard]] std::string_view compression_name(Compression c) noexcept;
/// Parses "none" / "gz" / "gzip" / "zst" / "zstd"; throws std::invalid_argument.
[[nodiscard]] Compression parse_compression(std::string_view name);

/// One input file as found by discover_inputs().
struct InputFile {
  std::filesystem::path absolute_path;  // absolute, lexically normal; symlinks kept as given
  std::string relative_path;            // '/'-separated mirror path (see banner)
  std::uint64_t size = 0;               // bytes on disk (compressed size for .gz/.zst)
  std::int64_t mtime_ns = 0;            // modification time, ns since the Unix epoch
  Format format = Format::kPlainLines;
  Compression compression = Compression::kNone;
};

/// Format and compression of a file name, from its extension (ASCII
/// case-insensitive): a trailing ".gz" / ".zst" gives the compression, then
/// ".jsonl" / ".ndjson" / ".json" before it gives kJsonLines; anything else
/// is kPlainLines. Magic bytes are not sniffed.
struct FileKind {
  Format format = Format::kPlainLines;
  Compression compression = Compression::kNone;
};
[[nodiscard]] FileKind classify_path(std::string_view file_name) noexcept;

/// Finds the inputs named by `paths` (files and directories, see banner),
/// sorted by relative path. Throws InputError when a path does not exist, is
/// neither a regular file nor a directory, cannot be listed, or when two
/// inputs map to the same relative path; std::invalid_argument when `paths`
/// is empty.
[[nodiscard]] std::vector<InputFile> discover_inputs(std::span<const std::filesystem::path> paths);

}  // namespace bloomshard::io
