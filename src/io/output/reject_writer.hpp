// Reject file: one JSON object per rejected line,
//   {"file":"...","line":N,"reason":"...","raw":"..."}
// plus "raw_truncated":true when raw was cut (at max_raw_bytes, default
// 4 KiB, backed off to a UTF-8 sequence start, or by the reader for a
// too-long line) and, when the raw bytes are not valid UTF-8,
// "raw_invalid_utf8":true and "raw_base64":"..." holding the exact (possibly
// truncated) bytes. In that case "raw" shows each invalid byte as U+FFFD, so
// "raw" is always valid UTF-8 JSON and nothing is lost. Control characters,
// '"' and '\' are escaped per RFC 8259; "file" is escaped the same way (its
// invalid bytes become U+FFFD). Counts by reason feed the job metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "io/output/output_writer.hpp"
// Kept while users of the escaping still reach it through this header.
#include "io/output/json_escape.hpp"

namespace bloomshard::io {

/// Reject counts keyed by reason (heterogeneous lookup: no allocation for a
/// reason seen before).
using RejectCounts = std::map<std::string, std::uint64_t, std::less<>>;

inline constexpr std::size_t kDefaultMaxRawBytes = 4096;

/// Appends one reject line (with its trailing '\n') to `out`.
void append_reject_json(std::string& out, std::string_view file, std::uint64_t line,
                        std::string_view reason, std::string_view raw, bool raw_truncated,
                        std::size_t max_raw_bytes = kDefaultMaxRawBytes);

class RejectWriter {
 public:
  RejectWriter() noexcept = default;

  /// Creates (or truncates) an uncompressed reject file (its entry made
  /// durable with `options.sync_entries`). Throws OutputError.
  [[nodiscard]] static RejectWriter create(const std::filesystem::path& path,
                                           std::size_t max_raw_bytes = kDefaultMaxRawBytes,
                                           OutputOptions options = {});

  /// Truncates to `committed_length` and appends; `counts` restores the
  /// counts saved with that length. Throws OutputError.
  [[nodiscard]] static RejectWriter open_for_resume(
      const std::filesystem::path& path, std::uint64_t committed_length, RejectCounts counts,
      std::size_t max_raw_bytes = kDefaultMaxRawBytes);

  /// Records one reject and counts it under `reason`. `raw_truncated` says
  /// the caller already holds only a prefix (a too-long line).
  void write(std::string_view file, std::uint64_t line, std::string_view reason,
             std::string_view raw, bool raw_truncated = false);

  /// Appends reject lines written elsewhere (whole JSONL lines, each with
  /// its '\n'), not counting them: they were counted where first written.
  void append_lines(std::string_view lines);
  [[nodiscard]] const RejectCounts& counts() const noexcept { return counts_; }
  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }

  /// Flushes and fsyncs; returns the committed file length. Throws OutputError.
  std::uint64_t flush_and_sync() { return out_.flush_and_sync(); }
  /// Flushes without the fsync (OutputWriter::flush). Throws OutputError.
  std::uint64_t flush() { return out_.flush(); }
  /// Flushes and closes. Throws OutputError.
  void close() { out_.close(); }

 private:
  OutputWriter out_;
  std::size_t max_raw_bytes_ = kDefaultMaxRawBytes;
  RejectCounts counts_;
  std::uint64_t total_ = 0;
  std::string scratch_;  // one reject line, reused
};

}  // namespace bloomshard::io
