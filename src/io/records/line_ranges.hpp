// Cutting one uncompressed input into line-aligned byte ranges:
// nominal cut points moved forward to the next line start, so every line
// lies in exactly one range and ranges read back to back give the file.
// Used once, at a run's first start; the ranges then live in the manifest.
// No MPI.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace bloomshard::io {

/// Bytes [begin, end) of a file; begin is a line start (0 or just after a
/// '\n'), end is the next range's begin or the file size.
struct ByteRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

/// How many ranges a file of `file_bytes` is cut into when the run's
/// inputs hold `total_bytes` and it starts on `ranks` ranks: ranges of about
/// total_bytes / (4 * ranks), never smaller than `min_bytes`, so that
/// longest-first assignment over all ranges balances within ~1/4 of a
/// rank's share; a count of `ranks` or more is rounded down to a multiple
/// of `ranks` (one big file alone then spreads evenly). 1 (not split) when
/// the file is not larger than min_bytes.
/// Pure. Throws std::invalid_argument unless ranks >= 1 and min_bytes >= 1.
[[nodiscard]] std::uint64_t range_count_for(std::uint64_t file_bytes, std::uint64_t total_bytes,
                                            int ranks, std::uint64_t min_bytes);

/// Cuts the file at `path` (`size` bytes, uncompressed) into at most
/// `count` ranges: cut k starts at size * k / count and moves forward to
/// just after the next '\n' (CR LF ends with '\n' too). A range left empty
/// (a line longer than a range, or no newline after a cut) is dropped, so
/// the result may be shorter; it always covers [0, size) without gaps and
/// holds at least one range (one [0, 0) for an empty file). Reads the file
/// only near the cuts: a few KiB each, or the rest of a line that spans a
/// cut (never more than the whole file in total). Throws InputError when
/// the file cannot be read.
[[nodiscard]] std::vector<ByteRange> line_aligned_ranges(const std::filesystem::path& path,
                                                         std::uint64_t size, std::uint64_t count);

/// Cuts the file at `path` (`size` bytes, uncompressed) into line-aligned
/// blocks of about `block_bytes`: block k holds the lines that start in
/// [k * block_bytes, (k + 1) * block_bytes), so each cut k * block_bytes
/// moves forward to the next line start as line_aligned_ranges() moves its
/// cuts. Blocks left empty (a line longer than a block) are dropped; the
/// result covers [0, size) without gaps, and is empty for an empty file.
/// Reads only near the cuts (as line_aligned_ranges()). Throws InputError
/// when the file cannot be read, std::invalid_argument for block_bytes 0.
[[nodiscard]] std::vector<ByteRange> line_aligned_blocks(const std::filesystem::path& path,
                                                         std::uint64_t size,
                                                         std::uint64_t block_bytes);

}  // namespace bloomshard::io
