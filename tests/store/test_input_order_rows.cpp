// The input order's kept copies as per-slice rows (store/input_order_rows.hpp):
// grouping puts each row in its key's slice, in (tag, hash) order, with an
// offset table that tiles the rows; a reader of any slice range finds its
// rows and their checksums; a flipped byte, a row of another slice, rows out
// of order and a damaged offset table are each refused naming the file, the
// dataset and the slice.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/input_order_rows.hpp"

// Its own namespace: its helpers share names with sample_generation.hpp's users (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::store::input_order_rows_tests {
namespace {

constexpr std::uint32_t kSlices = 8;
const std::string kWhere = "/state/ckpt-3.h5";

// 40 copies with hashes spread over the slices, in reverse order, one twice.
std::vector<InputOrderRow> copies() {
  std::vector<InputOrderRow> v;
  for (std::uint64_t i = 40; i > 0; --i) {
    v.push_back({(i << 20) | 7, {i * 0x9E3779B97F4A7C15ULL, i * 31}});
  }
  v.push_back(v[5]);
  return v;
}

std::span<const InputOrderRow> slice_rows(const InputOrderSlices& g, std::uint32_t s) {
  return std::span(g.rows).subspan(g.offsets[s], g.offsets[s + 1] - g.offsets[s]);
}

TEST(InputOrderRows, GroupsEachRowInItsSliceInTagOrder) {
  const InputOrderSlices g = group_input_order_rows(copies(), kSlices);
  ASSERT_EQ(g.rows.size(), 40U);  // the duplicate kept once
  ASSERT_EQ(g.offsets.size(), kSlices + 1);
  EXPECT_EQ(g.offsets.front(), 0U);
  EXPECT_EQ(g.offsets.back(), 40U);
  ASSERT_EQ(g.checksums.size(), kSlices);
  std::uint32_t non_empty = 0;
  for (std::uint32_t s = 0; s < kSlices; ++s) {
    const auto rows = slice_rows(g, s);
    non_empty += rows.empty() ? 0U : 1U;
    for (std::size_t j = 0; j < rows.size(); ++j) {
      EXPECT_EQ(core::slice_of(rows[j].hash, kSlices), s);
      if (j > 0) {
        EXPECT_LT(rows[j - 1].tag, rows[j].tag);
      }
    }
    EXPECT_EQ(g.checksums[s], input_order_slice_checksum(rows));
    EXPECT_EQ(check_input_order_slice(rows, s, kSlices, g.checksums[s], kWhere), "");
  }
  EXPECT_GT(non_empty, kSlices / 2);  // the test spreads over the slices
  EXPECT_EQ(check_input_order_offsets(g.offsets, g.rows.size(), kSlices, kWhere), "");
}

// A resume on any rank count reads its slice range and finds every row of
// its keys: the ranges of 1..4 ranks together give back the input, once.
TEST(InputOrderRows, AnyRankCountReadsItsRangeAndAllTogetherGiveEveryRow) {
  const InputOrderSlices g = group_input_order_rows(copies(), kSlices);
  for (std::uint32_t ranks = 1; ranks <= 4; ++ranks) {
    std::vector<InputOrderRow> all;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const core::SliceRange owned = core::slices_of_rank(r, ranks, kSlices);
      for (std::uint64_t j = g.offsets[owned.first]; j < g.offsets[owned.last]; ++j) {
        EXPECT_TRUE(owned.contains(core::slice_of(g.rows[j].hash, kSlices)));
        all.push_back(g.rows[j]);
      }
    }
    EXPECT_EQ(all, g.rows) << ranks << " ranks";
  }
}

TEST(InputOrderRows, AFlippedByteIsRefusedNamingFileDatasetAndSlice) {
  InputOrderSlices g = group_input_order_rows(copies(), kSlices);
  std::uint32_t s = 0;
  while (g.offsets[s + 1] == g.offsets[s]) ++s;  // a slice with rows
  auto* bytes = reinterpret_cast<unsigned char*>(&g.rows[g.offsets[s]]);
  bytes[9] ^= 0x10;
  const std::string p =
      check_input_order_slice(slice_rows(g, s), s, kSlices, g.checksums[s], kWhere);
  EXPECT_NE(p.find(kWhere), std::string::npos) << p;
  EXPECT_NE(p.find("tier-2 slice " + std::to_string(s) + ":"), std::string::npos) << p;
  EXPECT_NE(p.find("/input_order/rows"), std::string::npos) << p;
  EXPECT_NE(p.find("checksum mismatch"), std::string::npos) << p;
}

TEST(InputOrderRows, RowsOfAnotherSliceOrOutOfOrderOrTagZeroAreRefused) {
  const InputOrderSlices g = group_input_order_rows(copies(), kSlices);
  std::uint32_t s = 0;
  while (g.offsets[s + 1] - g.offsets[s] < 2) ++s;  // a slice with 2 rows or more
  std::vector<InputOrderRow> rows(slice_rows(g, s).begin(), slice_rows(g, s).end());
  const auto refusal = [&](const std::vector<InputOrderRow>& v) {
    return check_input_order_slice(v, s, kSlices, input_order_slice_checksum(v), kWhere);
  };
  std::vector<InputOrderRow> swapped = rows;
  std::swap(swapped[0], swapped[1]);
  EXPECT_NE(refusal(swapped).find("row 1 of /input_order/rows is out of (tag, hash) order"),
            std::string::npos)
      << refusal(swapped);
  std::vector<InputOrderRow> zero = rows;
  zero[0].tag = 0;
  EXPECT_NE(refusal(zero).find("row 0 of /input_order/rows has tag 0"), std::string::npos);
  std::vector<InputOrderRow> foreign = rows;
  const std::uint64_t j = s == 0 ? g.offsets[1] : 0;  // the first row of another slice
  ASSERT_NE(core::slice_of(g.rows[j].hash, kSlices), s);
  foreign.back() = g.rows[j];
  foreign.back().tag = ~std::uint64_t{0};  // last in tag order: only its slice is wrong
  EXPECT_NE(refusal(foreign).find("belongs to another slice"), std::string::npos)
      << refusal(foreign);
}

TEST(InputOrderRows, ADamagedOffsetTableIsRefusedBeforeAnyRow) {
  const InputOrderSlices g = group_input_order_rows(copies(), kSlices);
  const std::uint64_t n = g.rows.size();
  const auto refusal = [&](std::vector<std::uint64_t> o) {
    const std::string p = check_input_order_offsets(o, n, kSlices, kWhere);
    EXPECT_NE(p.find(kWhere + ": dataset /input_order/offsets"), std::string::npos) << p;
    return p;
  };
  std::vector<std::uint64_t> o = g.offsets;
  o.pop_back();
  EXPECT_NE(refusal(o).find("holds 8 values, not 9"), std::string::npos);
  o = g.offsets;
  o[0] = 1;
  EXPECT_NE(refusal(o).find("does not start at 0"), std::string::npos);
  o = g.offsets;
  o[4] = o[5] + 1;  // slice 4 ends before it starts
  EXPECT_NE(refusal(o).find("tier-2 slice 4 ends at row"), std::string::npos) << refusal(o);
  o = g.offsets;
  o.back() = n - 1;
  o[kSlices - 1] = std::min(o[kSlices - 1], n - 1);
  EXPECT_NE(refusal(o).find("holds " + std::to_string(n) + " rows"), std::string::npos);
}

TEST(InputOrderRows, NoSlicesOrATagOfZeroCannotBeGrouped) {
  EXPECT_THROW((void)group_input_order_rows(copies(), 0), std::invalid_argument);
  std::vector<InputOrderRow> v = copies();
  v[3].tag = 0;
  EXPECT_THROW((void)group_input_order_rows(v, kSlices), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::store::input_order_rows_tests
