// The one order across inputs (core/order/file_order.hpp, OrderScope::
// kAcrossInputs): the kept copy of a key is its first copy in (input,
// position) order, whatever order the copies reach the owner in, with the
// owner's memory bounded by the watermark.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "core/order/file_order.hpp"

// Its own namespace: its helpers share names with test_file_order.cpp and
// test_window_input_order.cpp (unity batches, cmake/check_unity_names.py).
namespace bloomshard::core::input_order_tests {
namespace {

OrderTag order_tag_of(std::uint64_t input, std::uint64_t offset, bool later_range = false) {
  return *order_tag_base(input, std::uint64_t{1} << 30, later_range) | offset;
}

// One record: its key and its place in the one order.
struct Copy {
  std::string key;
  OrderTag tag;
};

// A reader: the records of one whole input or one range, in order.
struct Reader {
  std::vector<Copy> records;
  std::size_t next = 0;
  [[nodiscard]] bool done() const { return next >= records.size(); }
};

// Random inputs, some cut into ranges (each range a reader of its own).
std::vector<Reader> make_readers(std::mt19937_64& rng, std::map<std::string, OrderTag>& first) {
  std::vector<Reader> readers;
  const std::uint64_t inputs = 2 + rng() % 5;
  for (std::uint64_t input = 0; input < inputs; ++input) {
    const std::size_t ranges = rng() % 3 == 0 ? 2 + rng() % 3 : 1;
    std::uint64_t offset = 0;
    for (std::size_t r = 0; r < ranges; ++r) {
      Reader reader;
      const int n = 50 + static_cast<int>(rng() % 200);
      for (int i = 0; i < n; ++i) {
        Copy c{"k" + std::to_string(rng() % 400), order_tag_of(input, offset, r > 0)};
        first.emplace(c.key, c.tag);  // inputs and offsets are walked in order
        reader.records.push_back(c);
        offset += 10 + rng() % 50;
      }
      readers.push_back(std::move(reader));
    }
  }
  return readers;
}

// The watermark every rank would agree on: the first record no reader has
// handed over yet (readers are in order, so the smallest next record).
std::uint64_t watermark_of(const std::vector<Reader>& readers) {
  std::uint64_t w = ~std::uint64_t{0};
  for (const Reader& r : readers) {
    if (!r.done()) w = std::min(w, order_position(r.records[r.next].tag));
  }
  return w;
}

// Readers hand over batches at random (each keeps its own order); the
// owner decides each round sorted by tag, settles, and forgets before the
// watermark. Kept copies less the retracted ones must be exactly the first
// copy of each key in the one order.
// With `restarts`, at random rounds the owners' tables are saved
// (remembered() and the watermark) and restored into 1-4 fresh owners, each
// taking the entries of its keys (by hash), as a resume on another rank
// count does; every round's keys go to their owner by hash.
void check_random_arrival(std::uint64_t seed, bool sort_rounds, bool use_watermark,
                          bool restarts = false) {
  std::mt19937_64 rng(seed);
  std::size_t total_resumes = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::map<std::string, OrderTag> first;
    std::vector<Reader> readers = make_readers(rng, first);
    std::vector<std::unique_ptr<FileOrder>> owners;
    owners.push_back(std::make_unique<FileOrder>(OrderScope::kAcrossInputs));
    const auto owner_of = [&](const KeyHash& h) { return h.hi % owners.size(); };
    std::size_t resumes = 0;
    std::set<std::string> tier2;
    std::set<OrderTag> kept;  // less the retracted ones
    std::map<OrderTag, std::string> key_of;
    std::vector<OrderTag> retracted;
    std::size_t most_remembered = 0;
    for (;;) {
      std::vector<Copy> round;  // a round: several readers' batches
      for (Reader& r : readers) {
        if (r.done() || rng() % 2 == 0) continue;
        const std::size_t take = 1 + rng() % 40;
        for (std::size_t j = 0; j < take && !r.done(); ++j) round.push_back(r.records[r.next++]);
      }
      if (round.empty()) {
        if (std::all_of(readers.begin(), readers.end(), [](const Reader& r) { return r.done(); })) {
          break;
        }
        continue;
      }
      std::vector<OrderTag> tags;
      for (const Copy& c : round) tags.push_back(c.tag);
      std::vector<std::uint32_t> at;
      if (sort_rounds) {
        order_by_tag(tags, at);
      } else {
        for (std::uint32_t i = 0; i < round.size(); ++i) at.push_back(i);
      }
      std::vector<KeyRef> keys;
      std::vector<OrderTag> sorted_tags;
      std::vector<Verdict> verdicts;
      for (const std::uint32_t i : at) {
        keys.push_back({hash_key(round[i].key), round[i].key});
        sorted_tags.push_back(round[i].tag);
        verdicts.push_back(tier2.insert(round[i].key).second ? Verdict::kNew : Verdict::kDuplicate);
      }
      const std::size_t retracted_before = retracted.size();
      std::vector<CrossInputRetraction> across;
      for (std::size_t o = 0; o < owners.size(); ++o) {  // each owner its share, in order
        std::vector<std::size_t> mine;
        std::vector<KeyRef> owned_keys;
        std::vector<OrderTag> owned_tags;
        std::vector<Verdict> owned_verdicts;
        for (std::size_t j = 0; j < keys.size(); ++j) {
          if (owner_of(keys[j].hash) != o) continue;
          mine.push_back(j);
          owned_keys.push_back(keys[j]);
          owned_tags.push_back(sorted_tags[j]);
          owned_verdicts.push_back(verdicts[j]);
        }
        owners[o]->settle(owned_keys, owned_tags, owned_verdicts, retracted, &across);
        for (std::size_t j = 0; j < mine.size(); ++j) verdicts[mine[j]] = owned_verdicts[j];
      }
      for (const CrossInputRetraction& r : across) {
        // The hash names the key; the line is found by it in its input's output.
        ASSERT_EQ(r.hash, hash_key(key_of.count(r.tag) ? key_of.at(r.tag) : std::string("?")));
        retracted.push_back(r.tag);
      }
      for (std::size_t j = 0; j < at.size(); ++j) {
        if (is_kept(verdicts[j])) kept.insert(sorted_tags[j]);
        key_of[sorted_tags[j]] = round[at[j]].key;
      }
      for (std::size_t j = retracted_before; j < retracted.size(); ++j) {
        // In sorted rounds a retraction only names a copy of an earlier round.
        if (sort_rounds) {
          ASSERT_EQ(std::count(sorted_tags.begin(), sorted_tags.end(), retracted[j]), 0);
        }
        ASSERT_EQ(kept.erase(retracted[j]), 1u) << "retracted a copy that was not kept";
      }
      std::size_t remembered = 0;
      for (const auto& o : owners) remembered += o->size();
      most_remembered = std::max(most_remembered, remembered);
      if (use_watermark) {
        const std::uint64_t w = watermark_of(readers);
        for (const auto& o : owners) o->forget_before(w);
        for (const OrderTag t : kept) {
          if (order_position(t) >= w) break;
          // A kept copy before the watermark is final: it is the first copy.
          ASSERT_EQ(first.at(key_of.at(t)), t);
        }
      }
      if (restarts && rng() % 3 == 0) {  // a checkpoint, and a resume on 1-4 owners
        std::vector<CrossInputRetraction> saved;
        for (const auto& o : owners) {
          const std::vector<CrossInputRetraction> part = o->remembered();
          ASSERT_EQ(part.size(), o->size());
          saved.insert(saved.end(), part.begin(), part.end());
        }
        const std::uint64_t w = owners.front()->watermark();
        owners.clear();
        const std::size_t n = 1 + rng() % 4;
        for (std::size_t o = 0; o < n; ++o) {
          owners.push_back(std::make_unique<FileOrder>(OrderScope::kAcrossInputs));
          owners.back()->forget_before(w);
        }
        for (const CrossInputRetraction& e : saved) owners[owner_of(e.hash)]->restore(e);
        ++resumes;
      }
    }
    total_resumes += resumes;
    std::set<OrderTag> expected;
    for (const auto& [key, t] : first) expected.insert(t);
    ASSERT_EQ(kept, expected) << "trial " << trial;
    if (use_watermark) {
      for (const auto& o : owners) {
        EXPECT_EQ(o->size(), 0u) << "everything was read: nothing to remember";
      }
    }
    EXPECT_LE(most_remembered, first.size());
  }
  if (restarts) {
    EXPECT_GE(total_resumes, 40u) << "the resumes the case is about";
  }
}

TEST(InputOrder, KeepsTheFirstCopyInInputOrderForAnyArrival) {
  check_random_arrival(21, false, false);
}

TEST(InputOrder, KeepsTheFirstCopyWhenRoundsAreSortedAndTheWatermarkForgets) {
  check_random_arrival(22, true, true);
}

// A resume on another owner count: the saved tables, restored at the
// owners of their keys, keep deciding as one table would.
TEST(InputOrder, SavedTablesRestoredOnOtherOwnerCountsKeepTheFirstCopy) {
  check_random_arrival(23, true, true, true);
  check_random_arrival(24, false, false, true);
}

// restore() keeps what the watermark makes final out, and refuses what
// no saved table holds.
TEST(InputOrder, RestoreSkipsFinalCopiesAndRefusesBadEntries) {
  FileOrder order(OrderScope::kAcrossInputs);
  order.forget_before(order_position(order_tag_of(2, 100)));
  order.restore({order_tag_of(1, 5), hash_key("before")});         // before the watermark
  order.restore({order_tag_of(2, 50, true), hash_key("behind")});  // so is this later range's copy
  order.restore({order_tag_of(2, 150), hash_key("same")});         // the watermark's input: final
  order.restore({order_tag_of(2, 150, true), hash_key("later")});  // a later range of it: kept
  order.restore({order_tag_of(3, 0), hash_key("next")});
  EXPECT_EQ(order.size(), 2u);
  std::vector<CrossInputRetraction> saved = order.remembered();
  std::sort(saved.begin(), saved.end(),
            [](const CrossInputRetraction& a, const CrossInputRetraction& b) {
              return order_position(a.tag) < order_position(b.tag);
            });
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[0].hash, hash_key("later"));
  EXPECT_EQ(saved[1].hash, hash_key("next"));
  EXPECT_THROW(order.restore({0, hash_key("x")}), std::invalid_argument);
  FileOrder within;
  EXPECT_THROW(within.restore({order_tag_of(0, 1, true), hash_key("x")}), std::invalid_argument);
  EXPECT_TRUE(within.remembered().empty());
}

TEST(InputOrder, TagsCompareAsInputThenPosition) {
  EXPECT_LT(order_position(order_tag_of(0, 999'999)), order_position(order_tag_of(1, 0)));
  EXPECT_LT(order_position(order_tag_of(3, 5)), order_position(order_tag_of(3, 6)));
  // The later-range mark of a split input's range plays no part.
  const OrderTag later = *order_tag_base(3, 1 << 20, true) | 5;
  EXPECT_EQ(order_position(later), order_position(order_tag_of(3, 5)));
}

TEST(InputOrder, AnEarlierInputRetractsACopyKeptFromALaterOne) {
  FileOrder order(OrderScope::kAcrossInputs);
  std::vector<OrderTag> retracted;  // of the winner's own input: none here
  std::vector<CrossInputRetraction> across;
  const std::vector<KeyRef> key(1, KeyRef{hash_key("a"), "a"});
  std::vector<Verdict> v = {Verdict::kNew};
  const std::vector<OrderTag> in_input_4 = {order_tag_of(4, 100)};
  order.settle(key, in_input_4, v, retracted, &across);  // input 4's copy arrives first
  EXPECT_EQ(order.size(), 1u);
  v = {Verdict::kDuplicate};
  const std::vector<OrderTag> in_input_1 = {order_tag_of(1, 7'000)};
  order.settle(key, in_input_1, v, retracted, &across);
  EXPECT_EQ(v[0], Verdict::kNew) << "input 1 precedes input 4, whatever the offsets";
  ASSERT_EQ(across.size(), 1u);
  EXPECT_EQ(across[0].tag, order_tag_of(4, 100));
  EXPECT_EQ(across[0].hash, hash_key("a"));
  EXPECT_TRUE(retracted.empty());
  v = {Verdict::kDuplicate};
  const std::vector<OrderTag> in_input_2 = {order_tag_of(2, 0)};
  order.settle(key, in_input_2, v, retracted, &across);
  EXPECT_EQ(v[0], Verdict::kDuplicate) << "a copy after the kept one stays a duplicate";
  EXPECT_EQ(across.size(), 1u);
  EXPECT_THROW(order.settle(key, in_input_2, v, retracted), std::invalid_argument)
      << "across inputs, a retraction must have somewhere to go";
}

TEST(InputOrder, SortedRoundKeepsTheEarliestOfCopiesArrivingTogether) {
  // Rank 0 sends input 2's copy, rank 1 input 0's: in arrival order the
  // owner would keep input 2's and retract it at once.
  const std::vector<OrderTag> tags = {order_tag_of(2, 0), 0, order_tag_of(0, 50),
                                      order_tag_of(0, 10)};
  std::vector<std::uint32_t> at;
  order_by_tag(tags, at);
  EXPECT_EQ(at, (std::vector<std::uint32_t>{3, 2, 0, 1})) << "untagged keys last, in order";
  const std::vector<OrderTag> ascending = {order_tag_of(0, 1), order_tag_of(0, 2), 0, 0};
  order_by_tag(ascending, at);
  EXPECT_EQ(at, (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST(InputOrder, TheWatermarkForgetsFinalCopiesAndKeepsTheOthers) {
  FileOrder order(OrderScope::kAcrossInputs);
  std::vector<OrderTag> retracted;
  std::vector<CrossInputRetraction> across;
  std::vector<std::string> names;
  for (int i = 0; i < 10'000; ++i) names.push_back("key-" + std::to_string(i));
  std::vector<KeyRef> keys;
  std::vector<OrderTag> tags;
  for (std::size_t i = 0; i < names.size(); ++i) {
    keys.push_back({hash_key(names[i]), names[i]});
    tags.push_back(order_tag_of(i < 4'000 ? 1 : 2, i));  // 4,000 in input 1, 6,000 in input 2
  }
  std::vector<Verdict> verdicts(keys.size(), Verdict::kNew);
  order.settle(keys, tags, verdicts, retracted, &across);
  EXPECT_EQ(order.size(), 10'000u);
  order.forget_before(order_position(order_tag_of(2, 0)));  // inputs 0 and 1 fully read
  EXPECT_EQ(order.size(), 6'000u);
  order.forget_before(order_position(order_tag_of(1, 0)));  // never moves back
  EXPECT_EQ(order.watermark(), order_position(order_tag_of(2, 0)));
  // Input 2's copies are still remembered: an earlier copy (in input 2,
  // as a split input's range 0 would hold it) wins.
  std::vector<Verdict> again(1, Verdict::kDuplicate);
  const std::vector<OrderTag> earlier = {order_tag_of(2, 3)};
  std::vector<KeyRef> last(1, keys.back());
  order.settle(last, earlier, again, retracted, &across);
  EXPECT_EQ(again[0], Verdict::kNew);
  EXPECT_TRUE(across.empty()) << "same input: not a cross-input retraction";
  // A copy kept before the watermark is final: not remembered at all.
  std::vector<Verdict> fresh(1, Verdict::kNew);
  const std::vector<OrderTag> old = {order_tag_of(1, 77)};
  const std::string other = "other";
  const std::vector<KeyRef> other_key(1, KeyRef{hash_key(other), other});
  order.settle(other_key, old, fresh, retracted, &across);
  EXPECT_EQ(order.size(), 6'000u);
}

// forget_before() rebuilds the table in place: with forgotten and kept
// entries interleaved in the same probe runs (a table three-quarters
// full), every survivor must still be found and no forgotten one.
TEST(InputOrder, ForgettingInPlaceFindsEverySurvivorAndNoForgottenCopy) {
  FileOrder order(OrderScope::kAcrossInputs);
  order.reserve(30'000);
  const std::size_t table_bytes = order.table_bytes();
  std::vector<std::string> names;
  for (int i = 0; i < 30'000; ++i) names.push_back("k" + std::to_string(i));
  std::vector<KeyRef> keys;
  std::vector<OrderTag> tags;
  for (std::size_t i = 0; i < names.size(); ++i) {
    keys.push_back({hash_key(names[i]), names[i]});
    tags.push_back(order_tag_of(1 + i % 3, 1'000 + i));  // inputs 1, 2, 3 interleaved
  }
  std::vector<Verdict> verdicts(keys.size(), Verdict::kNew);
  std::vector<OrderTag> retracted;
  std::vector<CrossInputRetraction> across;
  order.settle(keys, tags, verdicts, retracted, &across);
  ASSERT_EQ(order.size(), 30'000u);
  order.forget_before(order_position(order_tag_of(2, 0)));
  EXPECT_EQ(order.size(), 20'000u) << "input 1's copies are final";
  EXPECT_EQ(order.table_bytes(), table_bytes) << "the same table, no second one";
  // An earlier copy of every key: it wins exactly where the kept copy is
  // still remembered (inputs 2 and 3).
  std::vector<OrderTag> earlier(keys.size(), order_tag_of(1, 0));
  std::vector<Verdict> again(keys.size(), Verdict::kDuplicate);
  order.settle(keys, earlier, again, retracted, &across);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const bool remembered = i % 3 != 0;
    ASSERT_EQ(again[i], remembered ? Verdict::kNew : Verdict::kDuplicate) << names[i];
  }
  EXPECT_EQ(across.size(), 20'000u);
}

// Every input before the watermark's is read, and the watermark's own input
// (whole, or its range 0) is read in order by one rank: a copy kept there is
// final at once. A later range of it, or a later input, may still be beaten.
TEST(InputOrder, CopiesInTheWatermarksOwnInputAreFinalAtOnce) {
  FileOrder order(OrderScope::kAcrossInputs);
  order.forget_before(order_position(order_tag_of(3, 100)));
  const std::vector<std::string> names = {"in-3", "in-3-range-1", "in-4", "in-2"};
  std::vector<KeyRef> keys;
  for (const std::string& n : names) keys.push_back({hash_key(n), n});
  const std::vector<OrderTag> tags = {order_tag_of(3, 200), order_tag_of(3, 300, true),
                                      order_tag_of(4, 0), order_tag_of(2, 5)};
  std::vector<Verdict> verdicts(keys.size(), Verdict::kNew);
  std::vector<OrderTag> retracted;
  std::vector<CrossInputRetraction> across;
  order.settle(keys, tags, verdicts, retracted, &across);
  EXPECT_EQ(order.size(), 2u) << "the later range's and input 4's copies only";
  // An earlier copy of input 3's range 0 still retracts the later range's.
  std::vector<Verdict> again(1, Verdict::kDuplicate);
  const std::vector<OrderTag> earlier = {order_tag_of(3, 150)};
  order.settle(std::span(keys).subspan(1, 1), earlier, again, retracted, &across);
  EXPECT_EQ(again[0], Verdict::kNew);
  ASSERT_EQ(retracted.size(), 1u);
  EXPECT_EQ(retracted[0], tags[1]);
}

TEST(InputOrder, WithinOneInputTheWatermarkIsIgnored) {
  FileOrder order;  // the split-input scope
  std::vector<OrderTag> retracted;
  const std::vector<KeyRef> key(1, KeyRef{hash_key("a"), "a"});
  std::vector<Verdict> v = {Verdict::kNew};
  const std::vector<OrderTag> later = {*order_tag_base(1, 1 << 20, true) | 900};
  order.settle(key, later, v, retracted);
  order.forget_before(~std::uint64_t{0});
  EXPECT_EQ(order.size(), 1u);
  EXPECT_EQ(order.watermark(), 0u);
}

// The plan's figure for an owner's order table: the table for the keys
// (24 B a slot, at most 3/4 full, a power of two), and 1.5x when it grew
// past its reserve (the half-size table beside it while rehashing).
TEST(InputOrder, OrderTablePeakBytesFollowTheTablesGrowth) {
  constexpr std::uint64_t kMiB = 1 << 20;
  // The 10M-record benchmark at 2 ranks: reserved 256K keys (512K slots,
  // 12 MiB), 437.5K keys remembered: 1M slots (24 MiB) + the 12 MiB it
  // grew from: the 24-36 MiB a rank measured.
  EXPECT_EQ(order_table_peak_bytes(kInputOrderMaxReserveKeys, 437500), 36 * kMiB);
  // Within the reserve: the reserved table alone.
  EXPECT_EQ(order_table_peak_bytes(kInputOrderMaxReserveKeys, 300000), 12 * kMiB);
  EXPECT_EQ(order_table_peak_bytes(kInputOrderMaxReserveKeys, 0), 12 * kMiB);
  // At most 3/4 full: 3072 keys fit 4096 slots, 3073 need 8192.
  EXPECT_EQ(order_table_peak_bytes(0, 3072), 4096u * 24);
  EXPECT_EQ(order_table_peak_bytes(0, 3073), 8192u * 24 + 4096u * 24);
  // What FileOrder really maps for a reserve.
  FileOrder order(OrderScope::kAcrossInputs);
  order.reserve(kInputOrderMaxReserveKeys);
  EXPECT_EQ(order.table_bytes(), order_table_peak_bytes(kInputOrderMaxReserveKeys, 0));
}

// The lockstep layout: two ranks read blocks of one input, so a kept copy
// in the watermark's own input may still meet an earlier copy of that input
// (another rank's block, a later sub-round). With set_inputs_read_by_many()
// it is remembered and the earlier copy wins, the retraction going to the
// end pass's list (other_inputs) even within one input; without it the
// earlier copy would stay a duplicate (the shortcut for one reader an input).
TEST(InputOrder, InputsReadByManyRememberCopiesInTheWatermarksInput) {
  for (const bool many : {true, false}) {
    FileOrder order(OrderScope::kAcrossInputs);
    if (many) order.set_inputs_read_by_many();
    order.forget_before(order_position(order_tag_of(0, 100)));  // the watermark in input 0
    const std::string key = "k";
    std::vector<KeyRef> keys{{hash_key(key), key}};
    std::vector<OrderTag> later{order_tag_of(0, 5000)};  // block 1's copy, decided first
    std::vector<Verdict> kept{Verdict::kNew};
    std::vector<OrderTag> retracted;
    std::vector<CrossInputRetraction> ends;
    order.settle(keys, later, kept, retracted, &ends);
    EXPECT_EQ(order.size(), many ? 1u : 0u);
    std::vector<OrderTag> earlier{order_tag_of(0, 200)};  // block 0's copy, a later sub-round
    std::vector<Verdict> dup{Verdict::kDuplicate};
    order.settle(keys, earlier, dup, retracted, &ends);
    EXPECT_TRUE(retracted.empty()) << "no join takes a lockstep block's retraction";
    if (many) {
      EXPECT_EQ(dup[0], Verdict::kNew) << "the earlier copy is the kept one";
      ASSERT_EQ(ends.size(), 1u);
      EXPECT_EQ(ends[0].tag, later[0]);
      EXPECT_EQ(ends[0].hash, keys[0].hash);
      order.forget_before(order_position(order_tag_of(0, 6000)));  // the round is final
      EXPECT_EQ(order.size(), 0u);
    } else {
      EXPECT_EQ(dup[0], Verdict::kDuplicate) << "why lockstep needs the flag";
      EXPECT_TRUE(ends.empty());
    }
  }
}

}  // namespace
}  // namespace bloomshard::core::input_order_tests
