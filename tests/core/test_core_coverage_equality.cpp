// The defaulted comparisons of core's small value types
// (tests/coverage/reasons/core.txt): the whole-suite coverage run compared
// them only on equal values, so a member left out of a comparison would go
// unnoticed. A state's window that differs from the job's only in its slot
// size must not compare equal (window_refusal rests on it), and a records
// slot is never full before the records it started at.
#include <gtest/gtest.h>

#include <cstdint>

#include "bloomshard/core/key_hash.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "core/minhash/shingle.hpp"
#include "core/order/file_order.hpp"
#include "core/paragraph/paragraph_removal.hpp"
#include "core/tier2/run_compaction.hpp"
#include "core/window/slot_window.hpp"

namespace bloomshard::core {
namespace {

TEST(CoreCoverageEquality, WindowsDifferingInAnyMemberAreNotEqual) {
  const WindowSpec base{2, SlotRule::kRecords, 1000};
  EXPECT_EQ(base, (WindowSpec{2, SlotRule::kRecords, 1000}));
  EXPECT_NE(base, (WindowSpec{3, SlotRule::kRecords, 1000}));
  EXPECT_NE(base, (WindowSpec{2, SlotRule::kWallSeconds, 1000}));
  EXPECT_NE(base, (WindowSpec{2, SlotRule::kRecords, 2000}));  // only the slot size
}

TEST(CoreCoverageEquality, ARecordsSlotIsNeverFullBeforeItsStart) {
  EXPECT_FALSE(records_slot_full(50, 100, 10));  // not 50 - 100 wrapped past `every`
  EXPECT_TRUE(records_slot_full(110, 100, 10));
}

TEST(CoreCoverageEquality, EachMemberOfTheSmallValueTypesCounts) {
  EXPECT_NE((FormOrigin{1, 5}), (FormOrigin{2, 5}));
  EXPECT_NE((FormOrigin{1, 5}), (FormOrigin{1, 6}));
  EXPECT_NE((ShingleSpec{ShingleKind::kWord, 5}), (ShingleSpec{ShingleKind::kChar, 5}));
  EXPECT_NE((ShingleSpec{ShingleKind::kWord, 5}), (ShingleSpec{ShingleKind::kWord, 4}));
  const KeyHash h = hash_key("a");
  const KeyHash other = hash_key("b");
  EXPECT_NE((CrossInputRetraction{7, h}), (CrossInputRetraction{8, h}));
  EXPECT_NE((CrossInputRetraction{7, h}), (CrossInputRetraction{7, other}));
  EXPECT_NE((TextSpan{1, 4}), (TextSpan{2, 4}));
  EXPECT_NE((TextSpan{1, 4}), (TextSpan{1, 5}));
  EXPECT_NE((CompactionPlan{2, 1}), (CompactionPlan{3, 1}));
  EXPECT_NE((CompactionPlan{2, 1}), (CompactionPlan{2, 2}));
}

}  // namespace
}  // namespace bloomshard::core
