// Message formatting of the io exceptions.
#include "io/errors.hpp"

#include <utility>

namespace bloomshard::io {
namespace {

std::string input_message(const std::string& file, std::uint64_t line, std::uint64_t offset,
                          const std::string& reason) {
  std::string msg = file;
  if (line != 0) msg += ": line " + std::to_string(line);
  msg += " (decompressed offset " + std::to_string(offset) + "): " + reason;
  return msg;
}

}  // namespace

InputError::InputError(std::string file, std::uint64_t line, std::uint64_t offset,
                       std::string reason)
    : std::runtime_error(input_message(file, line, offset, reason)),
      file_(std::move(file)),
      line_(line),
      offset_(offset),
      reason_(std::move(reason)) {}

OutputError::OutputError(std::string path, std::string reason)
    : std::runtime_error(path + ": " + reason),
      path_(std::move(path)),
      reason_(std::move(reason)) {}

}  // namespace bloomshard::io
