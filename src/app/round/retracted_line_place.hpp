// The end pass of the one input order on an uncompressed output that this
// process wrote whole from its first byte: each retracted line is placed
// by the output's offset map (core/order/output_offset_map.hpp, kept by
// the feed as it wrote) instead of by walking the input beside the output
// (retracted_line_cut.hpp). Only the retracted lines are read (pread), each
// checked to be a whole line of the output holding the retracted key. Any
// check that fails gives no plan: the caller then walks the output as
// before, which either places the line or refuses the output; the map never
// makes a cut the walk would not make.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

#include "app/round/retracted_line_cut.hpp"
#include "core/order/output_offset_map.hpp"

namespace bloomshard::app {

/// The plan of plan_output_without_retracted() for `output` (its first
/// `output_length` bytes), placed by `map`, or nullopt when a check fails:
/// the map's length is not output_length, a retracted offset (ascending,
/// no offset twice) was not written, its line does not start after a
/// newline, does not end (newline, or the output's end) within its written
/// run, or its key hash (`hash_of`) is not the retracted one. Throws
/// std::runtime_error naming the output on an I/O error. Cost: one pread
/// of about a page per retracted line and one key parse each, a pass over
/// the map; nothing of the input is read.
[[nodiscard]] std::optional<PartWithoutRetracted> plan_cut_by_offset_map(
    const std::filesystem::path& output, std::uint64_t output_length,
    const core::OutputOffsetMap& map, std::span<const RetractedLine> retracted,
    const LineKeyHash& hash_of);

}  // namespace bloomshard::app
