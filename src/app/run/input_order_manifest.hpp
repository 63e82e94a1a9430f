// The run manifest's "input_order" object (docs/checkpoint-format.md): the
// owners' remembered kept copies, the retractions waiting for the end pass
// and the end pass's cut outputs of a `--kept-copy first` run. Apart from
// run_manifest.cpp because it is checked against the inputs as a whole:
// every tag must name a record of an input, every cut output a done input.
#pragma once

#include <simdjson.h>

#include <string>

#include "app/run/run_manifest.hpp"

namespace bloomshard::app {

/// Version of the "input_order" object this build writes and reads.
inline constexpr std::uint64_t kInputOrderVersion = 1;

/// Appends `,"input_order":{...}` for `p` to the manifest text `out`.
/// Numbers only: 3 per kept copy or retraction (tag, hash hi, hash lo),
/// 2 per cut output (input, length).
void put_input_order(std::string& out, const InputOrderProgress& p);

/// Reads the "input_order" object `e` of a manifest whose inputs are `m`'s
/// (read before it). Throws std::runtime_error naming the field and the
/// entry for another version, an odd-sized list, a tag that names no
/// record an input had read at the cut (input index, offset past its
/// cursor or its ranges' cursors), a kept copy
/// before the watermark, lists out of order, or a cut output of an input
/// that is not done or whose output_length is not the cut length.
[[nodiscard]] InputOrderProgress read_input_order(simdjson::dom::element e, const RunManifest& m);

}  // namespace bloomshard::app
