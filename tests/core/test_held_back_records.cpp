// Kept records held back until the watermark passes them (input order):
// what goes out, in which order, what a retraction drops, and what the
// budget lets out early.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/order/held_back_records.hpp"

namespace bloomshard::core {
namespace {

OrderTag tag_of(std::uint64_t input, std::uint64_t offset) {
  return *order_tag_base(input, 1 << 20, false) | offset;
}

// Every output's bytes as the sink received them.
struct Outputs {
  std::map<std::uint32_t, std::string> bytes;
  HeldBackRecords::Sink sink() {
    return [this](std::uint32_t slot, std::span<const std::string_view> pieces) {
      for (std::string_view p : pieces) bytes[slot] += p;
    };
  }
};

TEST(HeldBackRecords, RecordsBeforeTheWatermarkGoOutInOrderAndTheRestWait) {
  HeldBackRecords held(1 << 20);
  held.hold(0, tag_of(0, 0), "a0\n");
  held.hold(0, tag_of(0, 3), "a1\n");
  held.hold(1, tag_of(2, 0), "c0\n");
  held.hold(1, tag_of(2, 3), "c1\n");
  Outputs out;
  held.release(order_position(tag_of(2, 3)), out.sink());
  EXPECT_EQ(out.bytes[0], "a0\na1\n");
  EXPECT_EQ(out.bytes[1], "c0\n");
  ASSERT_TRUE(held.first_slot());
  EXPECT_EQ(*held.first_slot(), 1u);
  EXPECT_EQ(held.bytes(), 3u);
  held.release(~std::uint64_t{0}, out.sink());
  EXPECT_EQ(out.bytes[1], "c0\nc1\n");
  EXPECT_FALSE(held.first_slot());
  EXPECT_EQ(held.peak_bytes(), 12u);
  EXPECT_EQ(held.written_over_budget(), 0u);
}

TEST(HeldBackRecords, ARetractedHeldRecordIsNeverWritten) {
  HeldBackRecords held(1 << 20);
  held.hold(3, tag_of(5, 10), "x\n");
  held.hold(3, tag_of(5, 12), "yy\n");
  held.hold(3, tag_of(5, 15), "z\n");
  std::uint64_t bytes = 0;
  EXPECT_EQ(held.retract(tag_of(5, 12), bytes), RetractedHere::kDropped);
  EXPECT_EQ(bytes, 3u);
  EXPECT_EQ(held.retract(tag_of(5, 12), bytes), RetractedHere::kNotHere);  // once only
  EXPECT_EQ(held.retract(tag_of(5, 11), bytes), RetractedHere::kNotHere);  // no such record
  EXPECT_EQ(held.retract(tag_of(4, 12), bytes), RetractedHere::kNotHere);  // another input's
  Outputs out;
  held.release(~std::uint64_t{0}, out.sink());
  EXPECT_EQ(out.bytes[3], "x\nz\n");
  EXPECT_EQ(held.bytes(), 0u);
}

TEST(HeldBackRecords, OverTheBudgetTheOldestGoOutAndTheirRetractionIsTheEndPasss) {
  HeldBackRecords held(4);  // two 2-byte records
  held.hold(0, tag_of(1, 0), "a\n");
  held.hold(0, tag_of(1, 2), "b\n");
  held.hold(0, tag_of(1, 4), "c\n");
  held.hold(1, tag_of(2, 0), "d\n");
  Outputs out;
  held.release(order_position(tag_of(0, 0)), out.sink());  // nothing final yet
  EXPECT_EQ(out.bytes[0], "a\nb\n");
  EXPECT_EQ(held.written_over_budget(), 2u);
  EXPECT_EQ(held.bytes(), 4u);
  std::uint64_t bytes = 0;
  EXPECT_EQ(held.retract(tag_of(1, 2), bytes), RetractedHere::kInOutput);
  EXPECT_EQ(held.retract(tag_of(1, 4), bytes), RetractedHere::kDropped);
  // Once the watermark passed them, written records are final: not ours.
  held.release(order_position(tag_of(1, 3)), out.sink());
  EXPECT_EQ(held.retract(tag_of(1, 2), bytes), RetractedHere::kNotHere);
  held.release(~std::uint64_t{0}, out.sink());
  EXPECT_EQ(out.bytes[0], "a\nb\n");
  EXPECT_EQ(out.bytes[1], "d\n");
}

TEST(HeldBackRecords, UntaggedRecordsWaitBehindHeldOnesAndAreNeverRetracted) {
  HeldBackRecords held(1 << 20);
  held.hold(0, tag_of(0, 7), "t\n");
  held.hold(1, 0, "u\n");
  Outputs out;
  held.release(order_position(tag_of(0, 7)), out.sink());  // the tagged one waits
  EXPECT_TRUE(out.bytes.empty());
  std::uint64_t bytes = 0;
  EXPECT_EQ(held.retract(tag_of(0, 7), bytes), RetractedHere::kDropped);
  held.release(order_position(tag_of(0, 8)), out.sink());
  EXPECT_EQ(out.bytes[1], "u\n");
  EXPECT_FALSE(out.bytes.contains(0));
}

TEST(HeldBackRecords, RecordsOutOfOrderAreRefused) {
  HeldBackRecords held(1 << 20);
  held.hold(0, tag_of(3, 100), "a\n");
  EXPECT_THROW(held.hold(0, tag_of(3, 99), "b\n"), std::invalid_argument);
  EXPECT_THROW(held.hold(0, tag_of(2, 500), "b\n"), std::invalid_argument);
}

// Random holds, retractions and releases against a model: every output
// gets exactly its records that were not dropped, in order, whatever the
// budget, and a retraction is dropped, in an output or not here as the
// model says.
TEST(HeldBackRecords, RandomRunsMatchAModel) {
  enum class State { kHeld, kDropped, kWrittenBeyond, kFinal };
  struct Record {
    OrderTag tag;
    std::uint32_t slot;
    std::string bytes;
    State state = State::kHeld;
  };
  std::mt19937_64 rng(11);
  for (int run = 0; run < 300; ++run) {
    const std::uint64_t budget = rng() % 3 == 0 ? 0 : rng() % 64;
    HeldBackRecords held(budget);
    Outputs out;
    std::vector<Record> records;
    std::uint64_t watermark = 0;
    std::uint64_t input = 0;
    std::uint64_t offset = 0;
    const auto model_release = [&] {
      std::uint64_t held_bytes = 0;
      for (Record& r : records) {
        const bool final_now = order_position(r.tag) < watermark;
        if (r.state == State::kHeld && final_now) r.state = State::kFinal;
        if (r.state == State::kWrittenBeyond && final_now) r.state = State::kFinal;
        if (r.state == State::kHeld) held_bytes += r.bytes.size();
      }
      for (Record& r : records) {
        if (held_bytes <= budget) break;
        if (r.state != State::kHeld) continue;
        r.state = State::kWrittenBeyond;
        held_bytes -= r.bytes.size();
      }
    };
    for (int step = 0; step < 80; ++step) {
      const auto what = rng() % 4;
      if (what <= 1) {  // read a record
        if (rng() % 5 == 0) {
          ++input;
          offset = 0;
        }
        const std::string bytes = std::to_string(rng() % 1000) + "\n";
        records.push_back({tag_of(input, offset), static_cast<std::uint32_t>(input), bytes});
        held.hold(records.back().slot, records.back().tag, bytes);
        offset += bytes.size();
      } else if (what == 2 && !records.empty()) {  // a retraction
        Record& r = records[rng() % records.size()];
        std::uint64_t bytes = 0;
        const RetractedHere got = held.retract(r.tag, bytes);
        if (r.state == State::kHeld) {
          EXPECT_EQ(got, RetractedHere::kDropped);
          EXPECT_EQ(bytes, r.bytes.size());
          r.state = State::kDropped;
        } else if (r.state == State::kWrittenBeyond) {
          EXPECT_EQ(got, RetractedHere::kInOutput);
        } else {
          EXPECT_EQ(got, RetractedHere::kNotHere);
        }
      } else if (!records.empty()) {  // the watermark moves into what was read
        watermark =
            std::max(watermark, order_position(records[rng() % records.size()].tag) + rng() % 2);
        held.release(watermark, out.sink());
        model_release();
      }
    }
    held.release(~std::uint64_t{0}, out.sink());
    std::map<std::uint32_t, std::string> want;
    for (const Record& r : records) {
      if (r.state != State::kDropped) want[r.slot] += r.bytes;
    }
    for (auto& [slot, bytes] : out.bytes) {
      if (bytes.empty()) continue;
      EXPECT_EQ(bytes, want[slot]) << "run " << run << " slot " << slot;
    }
    for (const auto& [slot, bytes] : want) EXPECT_EQ(out.bytes[slot], bytes) << "run " << run;
    EXPECT_EQ(held.bytes(), 0u);
  }
}

}  // namespace
}  // namespace bloomshard::core
