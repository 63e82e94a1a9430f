// Typed exceptions of the io layer. InputError means an input file cannot be
// read on (truncated or corrupt compressed data, unreadable file, a resume
// cursor that does not match the file); OutputError means an output or reject
// file cannot be written. Both carry the path so the failing rank can report
// which file broke.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace bloomshard::io {

/// An input cannot be read on. line() is the 1-based line being read when the
/// error happened (0 when not known); offset() the decompressed byte offset
/// reached; reason() the cause without the location.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::uint64_t line, std::uint64_t offset, std::string reason);

  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] std::uint64_t line() const noexcept { return line_; }
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string file_;
  std::uint64_t line_;
  std::uint64_t offset_;
  std::string reason_;
};

/// An output (kept records or rejects) cannot be created, written, synced or
/// truncated; also thrown for output paths that would escape the output dir.
class OutputError : public std::runtime_error {
 public:
  OutputError(std::string path, std::string reason);

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

}  // namespace bloomshard::io
