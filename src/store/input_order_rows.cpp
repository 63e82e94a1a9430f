// The input order's saved memory as per-slice rows (store/input_order_rows.hpp).
#include "bloomshard/store/input_order_rows.hpp"

#include <xxhash.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::store {
namespace {

bool before(const InputOrderRow& a, const InputOrderRow& b) {
  return std::tie(a.tag, a.hash.hi, a.hash.lo) < std::tie(b.tag, b.hash.hi, b.hash.lo);
}

}  // namespace

std::uint64_t input_order_slice_checksum(std::span<const InputOrderRow> rows) noexcept {
  // The struct is the stored row (3 u64, host = little-endian order, as
  // every other checksum of the format assumes).
  return XXH3_64bits(rows.data(), rows.size_bytes());
}

InputOrderSlices group_input_order_rows(std::span<const InputOrderRow> copies,
                                        std::uint32_t num_slices) {
  if (num_slices == 0) throw std::invalid_argument("input-order rows: 0 slices");
  InputOrderSlices out;
  out.rows.assign(copies.begin(), copies.end());
  for (const InputOrderRow& r : out.rows) {
    if (r.tag == 0) throw std::invalid_argument("input-order rows: a row of tag 0");
  }
  // Slice first, then (tag, hi, lo): the rows of a slice end up together,
  // each slice in the order a resume restores them.
  const auto key = [num_slices](const InputOrderRow& r) {
    return std::make_tuple(core::slice_of(r.hash, num_slices), r.tag, r.hash.hi, r.hash.lo);
  };
  std::sort(out.rows.begin(), out.rows.end(),
            [&](const InputOrderRow& a, const InputOrderRow& b) { return key(a) < key(b); });
  out.rows.erase(std::unique(out.rows.begin(), out.rows.end()), out.rows.end());
  out.offsets.assign(std::size_t{num_slices} + 1, 0);
  for (const InputOrderRow& r : out.rows) ++out.offsets[core::slice_of(r.hash, num_slices) + 1];
  for (std::uint32_t s = 0; s < num_slices; ++s) out.offsets[s + 1] += out.offsets[s];
  out.checksums.resize(num_slices);
  for (std::uint32_t s = 0; s < num_slices; ++s) {
    out.checksums[s] = input_order_slice_checksum(
        std::span(out.rows).subspan(out.offsets[s], out.offsets[s + 1] - out.offsets[s]));
  }
  return out;
}

std::string check_input_order_offsets(std::span<const std::uint64_t> offsets, std::uint64_t rows,
                                      std::uint32_t num_slices, const std::string& where,
                                      const InputOrderTable& t) {
  const std::string name = where + ": dataset " + t.offsets;
  if (offsets.size() != std::size_t{num_slices} + 1) {
    return name + " holds " + std::to_string(offsets.size()) + " values, not " +
           std::to_string(std::uint64_t{num_slices} + 1) + " (one per slice and the end)";
  }
  if (offsets[0] != 0) return name + " does not start at 0 (" + std::to_string(offsets[0]) + ")";
  for (std::uint32_t s = 0; s < num_slices; ++s) {
    if (offsets[s + 1] < offsets[s]) {
      return name + ": tier-2 slice " + std::to_string(s) + " ends at row " +
             std::to_string(offsets[s + 1]) + ", before its start " + std::to_string(offsets[s]);
    }
  }
  if (offsets[num_slices] != rows) {
    return name + " ends at row " + std::to_string(offsets[num_slices]) + ", but " + t.rows +
           " holds " + std::to_string(rows) + " rows";
  }
  return {};
}

std::string check_input_order_slice(std::span<const InputOrderRow> rows, std::uint32_t s,
                                    std::uint32_t num_slices, std::uint64_t stored,
                                    const std::string& where, const InputOrderTable& t) {
  const std::string name = where + " " + t.label + " of tier-2 slice " + std::to_string(s);
  const std::uint64_t got = input_order_slice_checksum(rows);
  if (got != stored) {
    return name + ": XXH3 checksum mismatch over " + t.rows + " (stored " + std::to_string(stored) +
           ", computed " + std::to_string(got) + ")";
  }
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const std::string row = name + ": row " + std::to_string(j) + " of " + t.rows;
    if (rows[j].tag == 0) return row + " has tag 0";
    if (core::slice_of(rows[j].hash, num_slices) != s) return row + " belongs to another slice";
    if (j > 0 && !before(rows[j - 1], rows[j])) return row + " is out of (tag, hash) order";
  }
  return {};
}

}  // namespace bloomshard::store
