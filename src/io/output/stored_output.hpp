// Outputs written stored, for the input order's end pass to compress once
// (OutputOptions::stored): a gzip member of stored deflate blocks is
// libdeflate's level 0; a zstd frame of raw blocks is written here, since
// libzstd has no level that stores. Both are valid files of their codec,
// written at about memcpy speed plus a checksum, at their plain size. The
// probes below tell such an output from a compressed one by its first
// block: the file says it itself, so no checkpoint records which outputs
// still need compressing, whichever attempt and rank count wrote them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

#include "io/records/input_file.hpp"

namespace bloomshard::io {

/// The most bytes write_zstd_raw_frame() can need for `in_bytes`.
[[nodiscard]] std::size_t zstd_raw_frame_bound(std::size_t in_bytes) noexcept;

/// Writes `in` into `out` (at least zstd_raw_frame_bound(in.size()) bytes)
/// as one complete zstd frame (RFC 8878): a single-segment header with the
/// content size, raw blocks of at most 128 KiB (one empty block for an
/// empty `in`), and the content checksum (XXH64's low 32 bits), so that a
/// damaged stored output fails its reader as a compressed one does.
/// Returns its length.
std::size_t write_zstd_raw_frame(std::span<const char> in, std::span<char> out) noexcept;

/// True when the first block of `path`'s first gzip member (RFC 1952: its
/// header, with any FEXTRA, FNAME, FCOMMENT and FHCRC fields, skipped) or
/// zstd frame (RFC 8878) is stored: BTYPE 00, or Block_Type Raw. An output
/// written stored starts so from its first byte; a compressed one starts
/// with a Huffman or compressed block, except where its codec found the
/// first block incompressible (random bytes) and stored it: such an output
/// is taken for a stored one and compressed again, to the same text. False
/// for an empty file, a zstd file that starts with a skippable frame, and
/// an uncompressed `compression`. Throws std::runtime_error naming the file
/// if it cannot be read or does not start as its codec's files do.
[[nodiscard]] bool output_starts_stored(const std::filesystem::path& path, Compression compression);

}  // namespace bloomshard::io
