// Whether a .gz file begins with a stored (uncompressed) deflate block: how
// the input order's end pass finds the outputs the rounds wrote stored
// (OutputOptions::gzip_stored), whichever attempt and rank count wrote
// them. The file says it itself, so nothing in a checkpoint records it.
#pragma once

#include <filesystem>

namespace bloomshard::io {

/// True when `path`'s first gzip member (RFC 1952: its header, with any
/// FEXTRA, FNAME, FCOMMENT and FHCRC fields, skipped) starts with a stored
/// block (BTYPE 00). An output the rounds wrote stored starts so from its
/// first byte; an output compressed at a level from 1 up starts with a
/// Huffman block, except where deflate found its first block incompressible
/// (random bytes), which libdeflate may store: such an output is taken for
/// a stored one and compressed again, to the same text. False for an empty
/// file. Throws std::runtime_error naming the file if it cannot be read or
/// does not start with a gzip header.
[[nodiscard]] bool gzip_starts_stored(const std::filesystem::path& path);

}  // namespace bloomshard::io
