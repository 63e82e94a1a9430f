// The pure checks of untrusted checkpoint metadata (checkpoint_validate.hpp):
// overflow-safe sizes, monotonic offsets, sane run lists; each refusal
// names the value. MPI- and HDF5-free, as a fuzzer will call them.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint_error.hpp"
#include "io/checkpoint/checkpoint_validate.hpp"

namespace bloomshard::io {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::string message_of(const auto& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CheckpointValidate, ExtentsArePrefixSums) {
  const std::vector<std::uint64_t> keys{3, 0, 5};
  const std::vector<std::uint64_t> bytes{30, 0, 7};
  const Tier2Extents e = tier2_extents(keys, bytes, "f");
  EXPECT_EQ(e.key_start, (std::vector<std::uint64_t>{0, 3, 3, 8}));
  EXPECT_EQ(e.byte_start, (std::vector<std::uint64_t>{0, 30, 30, 37}));
  EXPECT_EQ(e.keys, 8U);
  EXPECT_EQ(e.bytes, 37U);
}

TEST(CheckpointValidate, OverflowingSizesAreRefusedNamingThem) {
  const std::vector<std::uint64_t> two{kMax, 2};
  const std::vector<std::uint64_t> zero{0, 0};
  EXPECT_NE(message_of([&] { (void)tier2_extents(two, zero, "run-1"); }).find("key counts"),
            std::string::npos);
  EXPECT_NE(message_of([&] { (void)tier2_extents(zero, two, "run-1"); }).find("byte counts"),
            std::string::npos);
  // keys * 8 overflows although the sum does not.
  const std::vector<std::uint64_t> big{kMax / 4};
  const std::vector<std::uint64_t> one{0};
  EXPECT_NE(message_of([&] { (void)tier2_extents(big, one, "g"); }).find("fingerprint bytes"),
            std::string::npos);
  EXPECT_THROW((void)tier2_extents(one, two, "g"), CheckpointError);  // lengths differ
  EXPECT_THROW((void)checked_mul(kMax, 2, "x"), CheckpointError);
  EXPECT_THROW((void)checked_add(kMax, 1, "x"), CheckpointError);
  EXPECT_EQ(checked_mul(1U << 20, 1U << 20, "x"), std::uint64_t{1} << 40);
}

TEST(CheckpointValidate, OffsetsMustBeMonotonicAndSpanTheBytes) {
  const std::vector<std::uint64_t> good{0, 2, 2, 5};
  EXPECT_EQ(check_offsets(good, 5), "");
  const std::vector<std::uint64_t> down{0, 4, 3, 5};
  EXPECT_NE(check_offsets(down, 5).find("decrease at key 1"), std::string::npos);
  const std::vector<std::uint64_t> first{1, 2, 5};
  EXPECT_NE(check_offsets(first, 5).find("first offset"), std::string::npos);
  EXPECT_NE(check_offsets(good, 6).find("last offset"), std::string::npos);
  EXPECT_NE(check_offsets({}, 0).find("no offsets"), std::string::npos);
}

TEST(CheckpointValidate, RunLists) {
  const std::vector<std::uint64_t> ids{1, 2}, levels{1, 0}, keys{10, 3}, bytes{100, 30};
  EXPECT_NO_THROW(check_run_list(ids, levels, keys, bytes));
  const std::vector<std::uint64_t> dup{2, 2};
  EXPECT_NE(message_of([&] { check_run_list(dup, levels, keys, bytes); }).find("twice"),
            std::string::npos);
  const std::vector<std::uint64_t> bad_level{1, std::uint64_t{1} << 33};
  EXPECT_NE(message_of([&] { check_run_list(ids, bad_level, keys, bytes); }).find("level"),
            std::string::npos);
  const std::vector<std::uint64_t> short_col{1};
  EXPECT_THROW(check_run_list(ids, short_col, keys, bytes), CheckpointError);
  const std::vector<std::uint64_t> huge{kMax, 1};
  EXPECT_THROW(check_run_list(ids, levels, huge, bytes), CheckpointError);
  std::vector<std::uint64_t> many(kMaxRunsPerGeneration + 1);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = i;
  const std::vector<std::uint64_t> zeros(many.size(), 0);
  EXPECT_NE(message_of([&] { check_run_list(many, zeros, zeros, zeros); }).find("runs"),
            std::string::npos);
}

}  // namespace
}  // namespace bloomshard::io
