// First copy in file order without MPI: order tags on the wire,
// and the join's plan of an output part without its retracted records,
// walked beside a real input file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/split/order_tag_wire.hpp"
#include "app/split/retracted_lines.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

TEST(OrderTagWire, TagsTravelAfterTheKeyAndComeOffAgain) {
  const std::vector<std::string> names = {"alpha", "", std::string(1000, 'x')};
  std::vector<core::KeyRef> keys;
  for (const std::string& n : names) keys.push_back({core::hash_key(n), n});
  const std::vector<core::OrderTag> tags = {0, 42, ~std::uint64_t{0}};
  std::vector<char> buffer;
  std::vector<core::KeyRef> wire;
  append_order_tags(keys, tags, buffer, wire);
  ASSERT_EQ(wire.size(), 3u);
  EXPECT_EQ(wire[1].bytes.size(), kOrderTagWireBytes);
  std::vector<core::KeyRef> back;
  std::vector<core::OrderTag> back_tags;
  split_order_tags(wire, back, back_tags);
  EXPECT_EQ(back_tags, tags);
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(back[i].bytes, names[i]);
    EXPECT_EQ(back[i].hash, keys[i].hash);
  }
  EXPECT_THROW(append_order_tags(keys, std::span(tags).first(2), buffer, wire),
               std::invalid_argument);
  const std::vector<core::KeyRef> short_key = {{core::hash_key("a"), "abc"}};
  EXPECT_THROW(split_order_tags(short_key, back, back_tags), std::invalid_argument);
}

TEST(OrderTagWire, OnlyTheEarliestCopyOfEachInputTravels) {
  // Copies of "hot": input 1 at offsets 100, 50 (a batch may hold two
  // ranges of one input, the later one first) and 300; input 2 at 7 and 3;
  // one untagged. Of input 1 only @50 travels, of input 2 only @3; the
  // untagged copy travels (the router combines untagged keys), and so does
  // "x" twice untagged.
  const std::vector<std::string> names = {"hot", "hot", "hot", "hot", "hot", "x", "x", "hot"};
  std::vector<core::KeyRef> keys;
  for (const std::string& n : names) keys.push_back({core::hash_key(n), n});
  const core::OrderTag in1 = *core::order_tag_base(1, 1 << 20, true);
  const core::OrderTag in2 = *core::order_tag_base(2, 1 << 20, true);
  const std::vector<core::OrderTag> tags = {in1 | 100, in1 | 50, in1 | 300, in2 | 7,
                                            0,         0,        0,         in2 | 3};
  CombineScratch scratch;
  std::vector<std::uint32_t> routed;
  EXPECT_EQ(combine_in_file_order(keys, tags, scratch, routed), 3u);
  EXPECT_EQ(routed, (std::vector<std::uint32_t>{1, 4, 5, 6, 7}));
  // An untagged first copy: the tagged copies still combine per input.
  const std::vector<core::OrderTag> untagged_first = {0, in1 | 50, in1 | 30, in1 | 70, 0, 0, 0, 0};
  EXPECT_EQ(combine_in_file_order(keys, untagged_first, scratch, routed), 2u);
  EXPECT_EQ(routed, (std::vector<std::uint32_t>{0, 2, 4, 5, 6, 7}));
  // No key twice: everything travels.
  EXPECT_EQ(
      combine_in_file_order(std::span(keys).first(1), std::span(tags).first(1), scratch, routed),
      0u);
  EXPECT_EQ(routed, (std::vector<std::uint32_t>{0}));
  EXPECT_THROW((void)combine_in_file_order(keys, std::span(tags).first(2), scratch, routed),
               std::invalid_argument);
}

TEST(OrderTagWire, AHotKeyOfManyCopiesLeavesOneCopyPerInput) {
  // 200,000 copies of one key from one input, in descending file order (the
  // worst case for "earliest so far"), plus 1,000 other inputs' copies: one
  // copy per input travels.
  const std::string hot = "hot";
  std::vector<core::KeyRef> keys(201000, core::KeyRef{core::hash_key(hot), hot});
  std::vector<core::OrderTag> tags;
  const core::OrderTag in1 = *core::order_tag_base(1, 1 << 30, true);
  for (std::uint64_t i = 0; i < 200000; ++i) tags.push_back(in1 | (200000 - i));
  for (std::uint64_t n = 0; n < 1000; ++n)
    tags.push_back(*core::order_tag_base(2 + n, 64, true) | 1);
  CombineScratch scratch;
  std::vector<std::uint32_t> routed;
  EXPECT_EQ(combine_in_file_order(keys, tags, scratch, routed), 200000u - 1);
  ASSERT_EQ(routed.size(), 1001u);
  EXPECT_EQ(routed.front(), 199999u);
}

class PartPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-part-plan-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  static std::string apply(const std::string& part, const PartWithoutRetracted& plan) {
    std::string out;
    for (const auto& [from, to] : plan.keep) out += part.substr(from, to - from);
    return out;
  }
  fs::path dir_;
};

TEST_F(PartPlan, LeavesOutExactlyTheRetractedLines) {
  // A range [8, end) of an input; its part holds the kept lines. Equal
  // lines: the first of them is the written one (same key, decided first).
  const std::string head = "skip me\n";  // range 0's line, 8 bytes
  const std::vector<std::string> lines = {"a\n", "b\r\n", "a\n", "c\n", "d\n", "e"};
  std::string input = head;
  std::vector<std::uint64_t> at;
  for (const std::string& l : lines) {
    at.push_back(input.size());
    input += l;
  }
  const fs::path in = write("in.txt", input);
  // Kept: a(0) b c e; "a"(2) and d were duplicates.
  const std::string part = "a\nb\r\nc\ne";
  const fs::path out = write("part", part);
  // c and the last line (no newline) were retracted.
  PartWithoutRetracted plan =
      plan_part_without_retracted(in, 8, input.size(), out, part.size(), std::vector{at[3], at[5]});
  EXPECT_EQ(apply(part, plan), "a\nb\r\n");
  EXPECT_EQ(plan.removed_lines, 2u);
  EXPECT_EQ(plan.removed_bytes, 3u);
  EXPECT_EQ(plan.kept_bytes(), part.size() - 3);
  // The first "a" (written) retracted.
  plan = plan_part_without_retracted(in, 8, input.size(), out, part.size(), std::vector{at[0]});
  EXPECT_EQ(apply(part, plan), "b\r\nc\ne");
  // Nothing retracted: the whole part, without reading anything.
  plan = plan_part_without_retracted(dir_ / "absent", 8, input.size(), out, part.size(), {});
  EXPECT_EQ(apply(part, plan), part);
  // Offsets that are no written line's start are refused, naming the input.
  for (const std::uint64_t bad : {at[2], at[4], at[1] + 1, std::uint64_t{3}}) {
    try {
      (void)plan_part_without_retracted(in, 8, input.size(), out, part.size(), std::vector{bad});
      ADD_FAILURE() << "offset " << bad << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("in.txt"), std::string::npos) << e.what();
    }
  }
}

TEST_F(PartPlan, WalkGivesEveryWrittenLineItsInputOffsetAndRefusesAForeignLine) {
  const std::string input = "x1\nx2\nx3\nx4\n";
  const fs::path in = write("in.txt", input);
  const fs::path part = write("part", "x2\nx4\n");
  std::vector<std::uint64_t> offsets;
  for_each_written_line(in, 0, input.size(), part, 6,
                        [&](std::string_view line, std::uint64_t, std::uint64_t offset) {
                          EXPECT_EQ(input.substr(offset, line.size()), line);
                          offsets.push_back(offset);
                          return true;
                        });
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{3, 9}));
  const fs::path foreign = write("foreign", "x2\ny\n");
  EXPECT_THROW(
      for_each_written_line(in, 0, input.size(), foreign, 5,
                            [](std::string_view, std::uint64_t, std::uint64_t) { return true; }),
      std::runtime_error);
}

}  // namespace
}  // namespace bloomshard::app
