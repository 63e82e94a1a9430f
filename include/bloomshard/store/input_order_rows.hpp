// The input order's saved memory as rows grouped by tier-2 slice: the
// serial, pure half of the generation's /input_order datasets
// (docs/checkpoint-format.md "The input order's saved memory"). Two tables
// of one format: the remembered kept copies (states with the input-order/v2
// or v3 mark) and the retractions waiting for the end pass (v3 only). Each
// row is one copy (order tag, key hash hi, lo: 3 u64); the rows of slice
// s = slice_of(hash, P) lie in
// [offsets[s], offsets[s+1]) ascending by (tag, hi, lo), and each slice's
// rows carry an XXH3-64 (seed 0) over their bytes as stored (little-endian,
// tag, hi, lo a row), like every other slice of a checkpoint. A rank that
// owns slices [a, b) reads rows[offsets[a], offsets[b]) and nothing else.
// The collective write and read are io/checkpoint/checkpoint_input_order.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::store {

/// Datasets of a generation holding the kept copies (input-order/v2, v3).
inline constexpr const char* kInputOrderRows = "/input_order/rows";            ///< u64 [3 N]
inline constexpr const char* kInputOrderOffsets = "/input_order/offsets";      ///< u64 [P + 1]
inline constexpr const char* kInputOrderChecksums = "/input_order/checksums";  ///< u64 [P]
/// Datasets holding the retractions waiting for the end pass (input-order/v3).
inline constexpr const char* kInputOrderRetractedRows = "/input_order/retracted_rows";
inline constexpr const char* kInputOrderRetractedOffsets = "/input_order/retracted_offsets";
inline constexpr const char* kInputOrderRetractedChecksums = "/input_order/retracted_checksums";

/// One table of rows grouped by slice: its three datasets, what refusals
/// call its rows, and the normalization mark that first carried it (named
/// when a file holds the table without a mark that has it).
struct InputOrderTable {
  const char* rows;
  const char* offsets;
  const char* checksums;
  const char* label;  ///< "input-order rows", "input-order retracted rows"
  const char* since;  ///< "input-order/v2", "input-order/v3"
};
/// The remembered kept copies.
inline constexpr InputOrderTable kKeptTable{kInputOrderRows, kInputOrderOffsets,
                                            kInputOrderChecksums, "input-order rows",
                                            "input-order/v2"};
/// The kept copies retracted for an earlier copy in another input, not yet
/// left out of their outputs (each on the owner of its key's slice).
inline constexpr InputOrderTable kRetractedTable{
    kInputOrderRetractedRows, kInputOrderRetractedOffsets, kInputOrderRetractedChecksums,
    "input-order retracted rows", "input-order/v3"};

/// One remembered kept copy (core::FileOrder::remembered()) or one retraction.
struct InputOrderRow {
  std::uint64_t tag = 0;  ///< its order tag (never 0)
  core::KeyHash hash;     ///< its key's hash
  friend bool operator==(const InputOrderRow&, const InputOrderRow&) = default;
};
static_assert(sizeof(InputOrderRow) == 24, "a row is stored as 3 u64, no padding");

/// Rows grouped by slice, with the offset table and the slices' checksums.
struct InputOrderSlices {
  std::vector<InputOrderRow> rows;       ///< slice after slice
  std::vector<std::uint64_t> offsets;    ///< P + 1 entries, offsets[0] = 0
  std::vector<std::uint64_t> checksums;  ///< P entries
};

/// XXH3-64 (seed 0) of one slice's rows as stored.
[[nodiscard]] std::uint64_t input_order_slice_checksum(
    std::span<const InputOrderRow> rows) noexcept;

/// Groups `copies` (any order; duplicates kept once) into the `num_slices`
/// slices of a filter. Pure; O(N log N) time, one copy of the rows.
/// Throws std::invalid_argument for num_slices 0 or a row with tag 0.
[[nodiscard]] InputOrderSlices group_input_order_rows(std::span<const InputOrderRow> copies,
                                                      std::uint32_t num_slices);

/// "" or what is wrong with the offset table `offsets` of table `t` in a
/// file `where` holding `rows` rows for `num_slices` slices ("<where>:
/// dataset /input_order/offsets ..."): not P + 1 entries, not starting at
/// 0, a slice whose end lies before its start (named), or an end that is
/// not the row count. Check it before any slice's rows are looked at.
[[nodiscard]] std::string check_input_order_offsets(std::span<const std::uint64_t> offsets,
                                                    std::uint64_t rows, std::uint32_t num_slices,
                                                    const std::string& where,
                                                    const InputOrderTable& t = kKeptTable);

/// "" or what is wrong with `rows` of table `t`, slice `s` of `num_slices`,
/// in the file `where` ("<where> input-order rows of tier-2 slice <s>:
/// ..."): their XXH3 differs from `stored` (named: dataset
/// /input_order/rows), a row of tag 0, of another slice, or out of (tag,
/// hi, lo) order.
[[nodiscard]] std::string check_input_order_slice(std::span<const InputOrderRow> rows,
                                                  std::uint32_t s, std::uint32_t num_slices,
                                                  std::uint64_t stored, const std::string& where,
                                                  const InputOrderTable& t = kKeptTable);

}  // namespace bloomshard::store
