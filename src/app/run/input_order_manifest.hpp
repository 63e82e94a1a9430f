// The run manifest's "input_order" object (docs/checkpoint-format.md): the
// owners' remembered kept copies, the retractions waiting for the end pass
// and the end pass's cut outputs of a `--kept-copy first` run. Apart from
// run_manifest.cpp because it is checked against the inputs as a whole:
// every tag must name a record of an input, every cut output a done input.
#pragma once

#include <simdjson.h>

#include <string>

#include "app/run/run_manifest.hpp"
#include "bloomshard/store/header.hpp"

namespace bloomshard::app {

/// Version of the "input_order" object this build writes: 3, its kept
/// copies and its retractions in the generation's /input_order rows.
/// Version 2 (the kept copies rows, the retractions the manifest's
/// `retracted` list) and 1 (both lists in the manifest) are still read.
inline constexpr std::uint64_t kInputOrderVersion = 3;
inline constexpr std::uint64_t kInputOrderRowsVersion = 2;
inline constexpr std::uint64_t kInputOrderListVersion = 1;

/// Whether an input_order object of `version` keeps its kept copies as rows
/// (2 and 3), and its retractions too (3).
[[nodiscard]] constexpr bool kept_as_rows(std::uint64_t version) noexcept {
  return version >= kInputOrderRowsVersion;
}
[[nodiscard]] constexpr bool retracted_as_rows(std::uint64_t version) noexcept {
  return version >= kInputOrderVersion;
}

/// Appends `,"input_order":{...}` for `p` to the manifest text `out`, in
/// `p.version`'s form (1 and 2 only for tests and old states' fixtures).
/// Numbers only: 3 per kept copy (version 1) or retraction (versions 1, 2;
/// tag, hash hi, hash lo), 2 per cut output (input, length); versions 2
/// and 3 name the kept rows' dataset and count them instead of listing the
/// kept copies, version 3 the retracted rows' dataset and count too.
/// Throws std::logic_error for a list given to a version that keeps rows.
void put_input_order(std::string& out, const InputOrderProgress& p);

/// "" or why the kept copy `c` (a version-2 row of tier-2 slice `slice`
/// in the generation `where`) cannot be one of `m`'s at the watermark
/// `watermark`: its tag names no record an input had read at the cut, or
/// it lies before the watermark. Names the file, the dataset, the slice
/// and the tag.
[[nodiscard]] std::string kept_row_problem(const core::CrossInputRetraction& c,
                                           const RunManifest& m, std::uint64_t watermark,
                                           std::uint32_t slice, const std::string& where);

/// "" or why the retraction `c` (a version-3 row of tier-2 slice `slice`
/// in the generation `where`) cannot be one of `m`'s: its tag names no
/// record an input had read at the cut. Names the file, the dataset
/// (/input_order/retracted_rows), the slice and the tag. (No watermark
/// check: a retraction waits for the end pass, whatever was read since.)
[[nodiscard]] std::string retracted_row_problem(const core::CrossInputRetraction& c,
                                                const RunManifest& m, std::uint32_t slice,
                                                const std::string& where);

/// "" or why the manifest `m` and the header `h` of one generation disagree
/// on the input order: an input_order object without the input-order mark
/// or the mark without one, or an object of version N under another mark
/// than input-order/vN (naming both).
[[nodiscard]] std::string input_order_mark_problem(const store::CheckpointHeader& h,
                                                   const RunManifest& m);

/// Reads the "input_order" object `e` of a manifest whose inputs are `m`'s
/// (read before it). Throws std::runtime_error naming the field and the
/// entry for another version, an odd-sized list, a tag that names no
/// record an input had read at the cut (input index, offset past its
/// cursor or its ranges' cursors), a kept copy
/// before the watermark, lists out of order, or a cut output of an input
/// that is not done or whose output_length is not the cut length.
[[nodiscard]] InputOrderProgress read_input_order(simdjson::dom::element e, const RunManifest& m);

}  // namespace bloomshard::app
