// Two attempts of one run started with different --fencing modes, in
// process (counted by the coverage build): a live lease-mode holder (a
// fresh beat in LOCK, no fcntl lock) keeps an fcntl or auto start out,
// which names it; once its beat is stale, or it released the lock, the
// start goes ahead. (The reverse, an fcntl holder against a lease-mode
// start, is RunLeaseTest's.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "app/run/run_lease.hpp"
#include "lease_dir_test.hpp"

namespace bloomshard::app {
namespace {

class RunLeaseModesCoverageTest : public LeaseDirTest {};

TEST_F(RunLeaseModesCoverageTest, AFreshLeaseModeHolderKeepsAnFcntlOrAutoStartOut) {
  LeaseRecord none;
  std::optional<RunLease> lease = RunLease::acquire(file_, FencingMode::kLease, 0, none);
  ASSERT_TRUE(lease.has_value());
  ASSERT_FALSE(lease->uses_fcntl());
  for (const FencingMode mode : {FencingMode::kFcntl, FencingMode::kAuto}) {
    LeaseRecord holder;
    EXPECT_FALSE(RunLease::acquire(file_, mode, 0, holder).has_value())
        << "a start took the run while a lease-mode attempt beats";
    EXPECT_EQ(holder.mode, "lease");
    EXPECT_EQ(holder.epoch, lease->epoch());
  }
  // Handed back (a lease-mode lease hands its beat back in its destructor):
  // the next start takes it, with the next epoch.
  const std::uint64_t epoch = lease->epoch();
  lease.reset();
  LeaseRecord holder;
  std::optional<RunLease> next = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(next.has_value()) << "the handed-back lease still kept the start out";
  EXPECT_TRUE(next->uses_fcntl());
  EXPECT_EQ(next->epoch(), epoch + 1);
}

TEST_F(RunLeaseModesCoverageTest, AStaleLeaseModeRecordDoesNotKeepAnFcntlStartOut) {
  // A lease-mode holder that died: its record's beat is older than the
  // lease timeout, and it holds no lock.
  LeaseRecord dead{4, "node9", 999999, 1'700'000'000, 1'700'000'000, "lease"};
  {
    std::ofstream out(file_, std::ios::binary | std::ios::trunc);
    out << format_lease(dead);
  }
  LeaseRecord holder;
  std::optional<RunLease> lease = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(lease.has_value()) << "a dead lease-mode holder kept the run locked";
  EXPECT_EQ(lease->epoch(), 5U) << "the epoch does not follow the dead holder's";
}

}  // namespace
}  // namespace bloomshard::app
