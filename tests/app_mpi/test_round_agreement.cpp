// The round's agreement (app/round/round_agreement.hpp) on real ranks: every
// field of the table reduced as a sum, one rank's error or stop seen by all,
// and the table covering every member of the struct.
#include <gtest/gtest.h>

#include <cstdint>

#include "app/round/round_agreement.hpp"
#include "comm/communicator.hpp"

namespace bloomshard::app {
namespace {

// A member left out of the table would never be reduced: the struct is
// nothing but the table's fields.
static_assert(sizeof(RoundAgreement) == std::size(kAgreementFields) * sizeof(std::uint64_t));

TEST(RoundAgreement, EveryFieldIsSummedOverRanks) {
  const comm::Communicator world;
  const std::uint64_t r = world.urank();
  const std::uint64_t n = world.usize();
  RoundAgreement mine;
  std::uint64_t i = 0;
  for (const AgreementField& f : kAgreementFields) mine.*f.member = (r + 1) * 1000 + ++i;
  const RoundAgreement all = agree(world, mine);
  i = 0;
  for (const AgreementField& f : kAgreementFields) {
    ++i;
    // sum over r of ((r + 1) * 1000 + i)
    EXPECT_EQ(all.*f.member, 1000 * n * (n + 1) / 2 + n * i) << f.name;
  }
}

TEST(RoundAgreement, OneRanksErrorAndStopAreSeenByAll) {
  const comm::Communicator world;
  const bool last = world.rank() == world.size() - 1;
  RoundAgreement mine;
  mine.ranks_reading = world.rank() == 0 ? 1U : 0U;
  mine.input_errors = last ? 1U : 0U;
  mine.stop_requests = last ? 1U : 0U;
  mine.checkpoint_due = world.rank() == 0 ? 1U : 0U;
  const RoundAgreement all = agree(world, mine);
  EXPECT_EQ(all.input_errors, 1U);
  EXPECT_EQ(all.stop_requests, 1U);
  EXPECT_EQ(all.checkpoint_due, 1U);
  EXPECT_EQ(all.ranks_reading, 1U);
  EXPECT_FALSE(all.finished());  // rank 0 still reads
  mine.ranks_reading = 0;
  EXPECT_TRUE(agree(world, mine).finished());
}

TEST(RoundAgreement, FieldNamesAreUnique) {
  for (std::size_t a = 0; a < std::size(kAgreementFields); ++a) {
    for (std::size_t b = a + 1; b < std::size(kAgreementFields); ++b) {
      EXPECT_STRNE(kAgreementFields[a].name, kAgreementFields[b].name);
      EXPECT_NE(kAgreementFields[a].member, kAgreementFields[b].member);
    }
  }
}

}  // namespace
}  // namespace bloomshard::app
