// FileOrder's refusals (docs/coverage.md): settle() takes keys, tags and
// verdicts of one size, and across inputs it needs somewhere to put the
// retractions of other inputs; a refused call leaves the verdicts and the
// remembered copies as they were.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "core/order/file_order.hpp"

namespace bloomshard::core {
namespace {

OrderTag tag_of(std::uint64_t input, std::uint64_t offset) {
  return *order_tag_base(input, std::uint64_t{1} << 30, false) | offset;
}

// The std::invalid_argument message of `f`, or a marker.
template <class F>
std::string refusal_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no refusal)";
}

TEST(CoreCoverageFileOrder, SpansOfDifferentSizesAreRefused) {
  FileOrder order(OrderScope::kWithinInput);
  std::vector<OrderTag> retracted;
  const std::vector<KeyRef> keys(2, KeyRef{hash_key("a"), "a"});
  const std::vector<OrderTag> one_tag = {tag_of(0, 1)};
  const std::vector<OrderTag> two_tags = {tag_of(0, 1), tag_of(0, 2)};
  std::vector<Verdict> one_verdict = {Verdict::kNew};
  std::vector<Verdict> two_verdicts = {Verdict::kNew, Verdict::kDuplicate};
  const std::string refusal = "FileOrder::settle: keys, tags and verdicts differ in size";
  EXPECT_EQ(refusal_of([&] { order.settle(keys, one_tag, two_verdicts, retracted); }), refusal);
  EXPECT_EQ(refusal_of([&] { order.settle(keys, two_tags, one_verdict, retracted); }), refusal);
  EXPECT_EQ(order.size(), 0U);
  EXPECT_EQ(two_verdicts[1], Verdict::kDuplicate);
  EXPECT_NO_THROW(order.settle(keys, two_tags, two_verdicts, retracted));
}

TEST(CoreCoverageFileOrder, AcrossInputsTheOtherInputsListIsRequired) {
  FileOrder order(OrderScope::kAcrossInputs);
  std::vector<OrderTag> retracted;
  const std::vector<KeyRef> key(1, KeyRef{hash_key("a"), "a"});
  const std::vector<OrderTag> tag = {tag_of(4, 100)};
  std::vector<Verdict> v = {Verdict::kNew};
  EXPECT_EQ(refusal_of([&] { order.settle(key, tag, v, retracted); }),
            "FileOrder::settle: across inputs needs other_inputs");
  EXPECT_EQ(order.size(), 0U);
  std::vector<CrossInputRetraction> across;
  order.settle(key, tag, v, retracted, &across);
  EXPECT_EQ(order.size(), 1U);
}

// A table sized up front holds as many keys as one grown key by key, and
// keeps the kept copies it remembers.
TEST(CoreCoverageFileOrder, AReservedTableRemembersLikeAGrownOne) {
  FileOrder reserved(OrderScope::kAcrossInputs);
  FileOrder grown(OrderScope::kAcrossInputs);
  reserved.reserve(5000);
  reserved.reserve(10);  // smaller than held: no change
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back("k" + std::to_string(i));
  std::vector<KeyRef> keys;
  std::vector<OrderTag> tags;
  for (std::size_t i = 0; i < names.size(); ++i) {
    keys.push_back({hash_key(names[i]), names[i]});
    tags.push_back(tag_of(2, i + 1));
  }
  std::vector<Verdict> v1(keys.size(), Verdict::kNew), v2 = v1;
  std::vector<OrderTag> retracted;
  std::vector<CrossInputRetraction> across;
  reserved.settle(keys, tags, v1, retracted, &across);
  grown.settle(keys, tags, v2, retracted, &across);
  EXPECT_EQ(reserved.size(), 3000U);
  EXPECT_EQ(grown.size(), 3000U);
  // An earlier copy of key 7 from input 1 retracts the one kept in input 2.
  const std::vector<KeyRef> again(1, keys[7]);
  const std::vector<OrderTag> earlier = {tag_of(1, 1)};
  std::vector<Verdict> dup = {Verdict::kDuplicate};
  across.clear();
  reserved.settle(again, earlier, dup, retracted, &across);
  EXPECT_EQ(dup[0], Verdict::kNew);
  ASSERT_EQ(across.size(), 1U);
}

}  // namespace
}  // namespace bloomshard::core
