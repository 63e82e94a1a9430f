// The input list travels from rank 0 (the only rank that walks the
// filesystem: N ranks listing one tree would hammer a parallel file
// system's metadata server) to every rank as bytes.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// Length-prefixed binary encoding of the list (paths may hold any byte).
[[nodiscard]] std::string encode_inputs(std::span<const io::InputFile> files);

/// Inverse of encode_inputs. Throws std::runtime_error on malformed bytes.
[[nodiscard]] std::vector<io::InputFile> decode_inputs(std::string_view bytes);

}  // namespace bloomshard::app
