#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "core/order/file_order.hpp"

namespace bloomshard::core {
namespace {

// One record of a split input: its key and the byte offset of its line.
struct Copy {
  std::string key;
  std::uint64_t offset;
  std::size_t range;
};

TEST(FileOrder, TagFieldsRoundTripAndLimits) {
  const OrderTag base = *order_tag_base(7, 1 << 20, true);
  const OrderTag t = base | 123456;
  EXPECT_EQ(order_input(t), 7u);
  EXPECT_EQ(order_offset(t), 123456u);
  EXPECT_TRUE(order_later_range(t));
  EXPECT_FALSE(order_later_range(*order_tag_base(0, 10, false) | 5));
  EXPECT_EQ(order_input(*order_tag_base(0, 10, false)), 0u);
  EXPECT_NE(*order_tag_base(0, 10, false), 0u) << "tag 0 means: not from a split input";
  EXPECT_TRUE(order_tag_base(kOrderMaxInput, kOrderMaxOffset + 1, true).has_value());
  EXPECT_FALSE(order_tag_base(kOrderMaxInput + 1, 10, true).has_value());
  EXPECT_FALSE(order_tag_base(0, kOrderMaxOffset + 2, true).has_value());
}

// Copies arrive in an order that keeps each range's own order (each range
// has one reader) but interleaves the ranges at random; tier 2 is a set
// (first arrival new, later ones duplicates). The kept copies less the
// retracted ones must be exactly the first copy of each key in the file.
TEST(FileOrder, KeepsTheFirstCopyInTheFileForAnyInterleavingOfRanges) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t ranges = 2 + rng() % 4;
    std::vector<std::vector<Copy>> by_range(ranges);
    std::uint64_t offset = 0;
    std::map<std::string, std::uint64_t> first_in_file;
    for (std::size_t r = 0; r < ranges; ++r) {
      for (int i = 0; i < 400; ++i) {
        Copy c{"k" + std::to_string(rng() % 300), offset, r};
        first_in_file.emplace(c.key, c.offset);
        by_range[r].push_back(c);
        offset += 10 + rng() % 50;
      }
    }
    std::vector<Copy> arrival;
    std::vector<std::size_t> next(ranges, 0);
    for (;;) {
      std::vector<std::size_t> open;
      for (std::size_t r = 0; r < ranges; ++r) {
        if (next[r] < by_range[r].size()) open.push_back(r);
      }
      if (open.empty()) break;
      const std::size_t r = open[rng() % open.size()];
      const std::size_t take = 1 + rng() % 30;  // a batch of this range
      for (std::size_t j = 0; j < take && next[r] < by_range[r].size(); ++j) {
        arrival.push_back(by_range[r][next[r]++]);
      }
    }
    FileOrder order;
    std::set<std::string> tier2;
    std::set<std::uint64_t> kept;
    std::vector<OrderTag> retracted;
    // Decided in batches of up to 64, as an owner gets them.
    for (std::size_t at = 0; at < arrival.size(); at += 64) {
      const std::size_t n = std::min<std::size_t>(64, arrival.size() - at);
      std::vector<KeyRef> keys;
      std::vector<OrderTag> tags;
      std::vector<Verdict> verdicts;
      for (std::size_t j = at; j < at + n; ++j) {
        const Copy& c = arrival[j];
        keys.push_back({hash_key(c.key), c.key});
        tags.push_back(*order_tag_base(3, 1 << 30, c.range > 0) | c.offset);
        verdicts.push_back(tier2.insert(c.key).second ? Verdict::kNew : Verdict::kDuplicate);
      }
      order.settle(keys, tags, verdicts, retracted);
      for (std::size_t j = 0; j < n; ++j) {
        if (is_kept(verdicts[j])) kept.insert(arrival[at + j].offset);
      }
    }
    for (const OrderTag t : retracted) {
      ASSERT_TRUE(order_later_range(t)) << "a range-0 copy was retracted";
      ASSERT_EQ(kept.erase(order_offset(t)), 1u) << "retracted a copy that was not kept";
    }
    std::set<std::uint64_t> expected;
    for (const auto& [key, first] : first_in_file) expected.insert(first);
    ASSERT_EQ(kept, expected) << "trial " << trial;
  }
}

TEST(FileOrder, CopiesOfAnotherInputKeepTheArrivalOrder) {
  // Input 1's later range keeps "a" first; input 2's copy (earlier offset)
  // and an untagged copy are duplicates like between whole files.
  FileOrder order;
  std::vector<OrderTag> retracted;
  const std::vector<KeyRef> keys(3, KeyRef{hash_key("a"), "a"});
  const std::vector<OrderTag> tags = {*order_tag_base(1, 1 << 20, true) | 900,
                                      *order_tag_base(2, 1 << 20, false) | 5, 0};
  std::vector<Verdict> verdicts = {Verdict::kNew, Verdict::kDuplicate, Verdict::kDuplicate};
  order.settle(keys, tags, verdicts, retracted);
  EXPECT_EQ(verdicts[1], Verdict::kDuplicate);
  EXPECT_EQ(verdicts[2], Verdict::kDuplicate);
  EXPECT_TRUE(retracted.empty());
  // An earlier copy of the same input wins, once; a false positive kept
  // as new counts as a kept copy too.
  std::vector<Verdict> again = {Verdict::kDuplicate};
  const std::vector<OrderTag> earlier = {*order_tag_base(1, 1 << 20, true) | 100};
  order.settle(std::span(keys).first(1), earlier, again, retracted);
  EXPECT_EQ(again[0], Verdict::kNew);
  ASSERT_EQ(retracted.size(), 1u);
  EXPECT_EQ(order_offset(retracted[0]), 900u);
  EXPECT_EQ(order.size(), 1u);
}

TEST(FileOrder, RemembersManyKeysAcrossGrowth) {
  FileOrder order;
  std::vector<OrderTag> retracted;
  std::vector<std::string> names;
  for (int i = 0; i < 20'000; ++i) names.push_back("key-" + std::to_string(i));
  std::vector<KeyRef> keys;
  std::vector<OrderTag> tags;
  for (int i = 0; i < 20'000; ++i) {
    const std::string& name = names[static_cast<std::size_t>(i)];
    keys.push_back({hash_key(name), name});
    tags.push_back(*order_tag_base(0, 1 << 30, true) | (1'000'000 + static_cast<std::uint64_t>(i)));
  }
  std::vector<Verdict> verdicts(keys.size(), Verdict::kNewAfterFalsePositive);
  order.settle(keys, tags, verdicts, retracted);
  EXPECT_EQ(order.size(), keys.size());
  for (OrderTag& t : tags) t = (t & ~kOrderMaxOffset) | (order_offset(t) - 500'000);
  std::fill(verdicts.begin(), verdicts.end(), Verdict::kDuplicate);
  order.settle(keys, tags, verdicts, retracted);
  EXPECT_EQ(std::count(verdicts.begin(), verdicts.end(), Verdict::kNew), 20'000);
  EXPECT_EQ(retracted.size(), 20'000u);
  EXPECT_THROW(order.settle(keys, std::span(tags).first(3), verdicts, retracted),
               std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::core
