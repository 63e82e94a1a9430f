// The end pass of the one input order on an uncompressed output: the
// retracted copies' lines are cut out by byte ranges instead of parsing
// every line for its key. A retraction carries the retracted record's input
// offset (its order tag); the output holds the input's kept lines in order
// and byte for byte, so walking the input beside the output
// (app/split/retracted_lines.hpp, memchr and memcmp, no JSON) gives each
// retracted line's place in the output. Only the cut lines are parsed, to
// check that each holds the key the owner retracted: a mismatch is an
// error naming the output, never a silently removed wrong line. The kept
// byte ranges are copied with copy_file_range (in the kernel, no user
// buffer) into a temporary file renamed over the output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

#include "app/split/retracted_lines.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {

/// A retracted kept copy of one input: where its record starts in the input
/// and the hash of its key.
struct RetractedLine {
  std::uint64_t input_offset = 0;
  core::KeyHash hash;
};

/// The key hash of one output line (terminator included; the line is
/// followed by io::kLinePaddingBytes readable bytes), or nullopt when it has
/// no key.
using LineKeyHash = std::function<std::optional<core::KeyHash>(std::string_view line)>;

/// Plans `output` (uncompressed, its first `output_length` bytes: the kept
/// lines of `input`, `input_size` bytes, in order) without the lines of
/// `retracted` (ascending input_offset, no offset twice). Walks the input
/// only up to the last retracted record. Throws std::runtime_error naming
/// the output and the byte when a retracted offset is not the start of a
/// line the output holds, or when a cut line's key hash (`hash_of`) is not
/// the retracted one. Cost: one read of the input and of the output up to
/// the last cut, one memcmp per written line, one key parse per cut line.
[[nodiscard]] PartWithoutRetracted plan_output_without_retracted(
    const std::filesystem::path& input, std::uint64_t input_size,
    const std::filesystem::path& output, std::uint64_t output_length,
    std::span<const RetractedLine> retracted, const LineKeyHash& hash_of);

/// Where the end pass writes an output cut of its retracted copies before
/// renaming it over the output: `output` + ".retracted-tmp".
[[nodiscard]] std::filesystem::path cut_output_temp_path(const std::filesystem::path& output);

/// Writes the `keep` byte ranges of `output` into cut_output_temp_path(output)
/// (copy_file_range; pread/pwrite where the kernel or file system cannot),
/// fsynced when `durable`; the output is left as it is. Returns the
/// temporary file's length. Throws std::runtime_error naming the file on an
/// I/O error (the temporary file removed).
std::uint64_t write_cut_output(const std::filesystem::path& output,
                               const PartWithoutRetracted& plan, bool durable);

/// Renames cut_output_temp_path(output) over `output` (the folder fsynced
/// when `durable`; not durable, `output` is removed first: see the source
/// for why). Throws std::filesystem::filesystem_error naming both.
void commit_cut_output(const std::filesystem::path& output, bool durable);

/// write_cut_output() and commit_cut_output() at once.
/// Writes the `keep` byte ranges of `output` into `output` + ".retracted-tmp"
/// (copy_file_range; pread/pwrite where the kernel or file system cannot),
/// fsynced when `durable`, and renames it over `output` (the folder fsynced
/// when `durable`). Throws std::runtime_error naming the file on an I/O
/// error (the temporary file removed).
void write_output_without_retracted(const std::filesystem::path& output,
                                    const PartWithoutRetracted& plan, bool durable);

}  // namespace bloomshard::app
