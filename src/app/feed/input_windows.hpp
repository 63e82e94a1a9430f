// Window digests of inputs: a cheap check that a started input is still
// the file a run read, where size and mtime alone would call it unchanged
// (a copy that restored the mtime, `touch -d`, a replaced file of the same
// length). Each checkpoint saves, per started input, an XXH3-64 of two
// bounded windows of its raw bytes (compressed bytes for .gz/.zst): the
// file's first kInputWindowBytes and the kInputWindowBytes just before
// where reading stopped. A resume reads the same windows again and refuses
// the input when they differ (docs/inputs.md "Replaced inputs").
//
// Cost: two pread()s of at most 4 KiB per started input, on rank 0, when
// a checkpoint moves that input's cursor and once per started input at a
// start; nothing on the read path. Limits: bytes outside both windows are
// not compared (an edit in the middle of a file that keeps size and mtime
// passes); for a compressed input that is not finished, the second window
// ends at its saved frame start (none for a single-frame file: only the
// first window; its resume re-reads from byte 0 and checks the prefix
// digest instead).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "app/run/run_manifest.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// Version of the window digests, saved as the manifest's `input_windows`.
inline constexpr std::uint32_t kInputWindowsVersion = 1;

/// Bytes per window: 4 KiB, one page (one small read each).
inline constexpr std::uint64_t kInputWindowBytes = 4096;

/// The raw byte offset the second window of `p` ends at: the file size
/// for a finished input, the cursor for a plain one (the furthest range
/// cursor of a split one), the saved frame start (or 0) for an unfinished
/// compressed one.
[[nodiscard]] std::uint64_t input_window_end(const InputProgress& p);

/// XXH3-64 of bytes [0, min(W, size)) and [max(min(W, size), end - W), end)
/// of `path`, W = kInputWindowBytes, `size` the file size the run saw.
/// Throws std::runtime_error naming the file if it cannot be read or is
/// shorter than the windows.
[[nodiscard]] std::uint64_t input_window_digest(const std::filesystem::path& path,
                                                std::uint64_t size, std::uint64_t end);

/// Rank 0, before a checkpoint's manifest is written: gives every started
/// input the window of its cursor (computed only when its end moved; a
/// small cache keeps those of inputs finished earlier in the segment) and
/// marks the manifest with kInputWindowsVersion. An input that cannot be
/// read now gets no window (its resume checks size and mtime only).
void refresh_input_windows(RunManifest& m);

/// "" if `now` (same size and mtime as `then`) still has the windows saved
/// for `then`, else what differs, e.g. "its first 4096 bytes or the 4096
/// before byte 81920 differ from those read". "" when `then` has no window.
[[nodiscard]] std::string window_difference(const InputProgress& then, const io::InputFile& now);

}  // namespace bloomshard::app
