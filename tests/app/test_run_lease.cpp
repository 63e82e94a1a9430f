// Fencing and the watchdog, in real processes: fcntl locks are per process,
// so the "other attempt" is a forked child; the watchdog's _exit is checked
// with death tests.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "app/run/run_lease.hpp"
#include "app/run/watchdog.hpp"
#include "comm/heartbeat.hpp"
#include "lease_dir_test.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class RunLeaseTest : public LeaseDirTest {};

TEST(LeaseRecord, FormatsAndParsesBack) {
  LeaseRecord r{7, "node7", 4242, 1796114927, 1796114930, "lease"};
  const std::optional<LeaseRecord> back = parse_lease(format_lease(r) + "   \n");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->epoch, 7U);
  EXPECT_EQ(back->host, "node7");
  EXPECT_EQ(back->pid, 4242);
  EXPECT_EQ(back->since_unix, 1796114927);
  EXPECT_EQ(back->heartbeat_unix, 1796114930);
  EXPECT_EQ(back->mode, "lease");
  EXPECT_FALSE(parse_lease(""));
  EXPECT_FALSE(parse_lease("bloomshard-lease v2 epoch 1"));
  EXPECT_NE(describe_holder(r).find("host node7, pid 4242, since 2026-"), std::string::npos);
}

TEST(LeaseRecord, ParsesModes) {
  EXPECT_EQ(parse_fencing_mode("auto"), FencingMode::kAuto);
  EXPECT_EQ(parse_fencing_mode("fcntl"), FencingMode::kFcntl);
  EXPECT_EQ(parse_fencing_mode("lease"), FencingMode::kLease);
  EXPECT_FALSE(parse_fencing_mode("flock"));
  EXPECT_EQ(lock_file_for("s", "o"), fs::path("s") / "LOCK");
  EXPECT_EQ(lock_file_for("", "o"), fs::path("o") / kOutputLockName);
}

TEST_F(RunLeaseTest, FcntlHolderBlocksAnotherProcessUntilItEnds) {
  LeaseRecord holder;
  std::optional<RunLease> mine = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(mine);
  EXPECT_TRUE(mine->uses_fcntl());
  EXPECT_EQ(mine->epoch(), 1U);
  // Another process waits 0.5 s, then gives up naming us.
  const int refused = in_child([&] {
    LeaseRecord h;
    const auto t0 = std::chrono::steady_clock::now();
    const bool got = RunLease::acquire(file_, FencingMode::kFcntl, 0.5, h).has_value();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (got) return 10;
    if (waited < 0.45) return 11;
    if (h.pid != ::getppid() || h.epoch != 1) return 12;
    return 0;
  });
  EXPECT_EQ(refused, 0);
  // A reader (another rank of our attempt) joins; the epoch checks out.
  EXPECT_EQ(in_child([&] {
              try {
                RunLease r = RunLease::join(file_, true, 1);
                r.check();
                return 0;
              } catch (...) {
                return 1;
              }
            }),
            0);
  mine.reset();  // our process "ends": the next attempt gets epoch 2
  std::optional<RunLease> next = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->epoch(), 2U);
}

TEST_F(RunLeaseTest, AnOrderlyEndRemovesTheFileAndAWaiterTakesTheNewOne) {
  LeaseRecord holder;
  std::optional<RunLease> mine = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(mine);
  // A waiter opened the file and polls for the lock (up to 10 s); once this
  // holder removes it, the waiter must not keep the unlinked file's lock:
  // it takes the file the path names (and so sees a third start's lock).
  const pid_t waiter = ::fork();
  if (waiter == 0) {
    LeaseRecord h;
    std::optional<RunLease> got = RunLease::acquire(file_, FencingMode::kFcntl, 10, h);
    if (!got) ::_exit(10);
    struct stat named {};
    if (::stat(file_.c_str(), &named) != 0) ::_exit(11);  // it holds a file no path names
    if (got->epoch() != 1) ::_exit(12);                   // a new file starts at epoch 1
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::_exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the waiter has the file open
  EXPECT_TRUE(mine->release_and_remove(file_));
  // The waiter holds the path's file now: a third start is refused.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_FALSE(RunLease::acquire(file_, FencingMode::kFcntl, 0, holder).has_value());
  int status = 0;
  ::waitpid(waiter, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(RunLeaseTest, NoRemovalWhileAnotherProcessReadsOrInLeaseMode) {
  LeaseRecord holder;
  std::optional<RunLease> mine = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(mine);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t reader = ::fork();
  if (reader == 0) {  // another rank that has not closed its lease yet
    RunLease r = RunLease::join(file_, true, 1);
    (void)::write(ready[1], "r", 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_FALSE(mine->release_and_remove(file_));
  EXPECT_TRUE(fs::exists(file_));
  ::waitpid(reader, nullptr, 0);
  std::optional<RunLease> lease = RunLease::acquire(file_, FencingMode::kLease, 0, holder);
  ASSERT_TRUE(lease);
  EXPECT_FALSE(lease->release_and_remove(file_));
  EXPECT_TRUE(fs::exists(file_));  // the handed-back beat lives there
}

TEST_F(RunLeaseTest, ReaderOfAnOldEpochIsFencedOut) {
  LeaseRecord holder;
  {
    std::optional<RunLease> first = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
    ASSERT_TRUE(first);
  }
  std::optional<RunLease> second = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(second);
  EXPECT_THROW((void)RunLease::join(file_, true, 1), FencedOut);
  EXPECT_NO_THROW(second->check());
}

TEST_F(RunLeaseTest, LeaseModeWaitsForAStaleBeatAndFencesTheOldHolder) {
  LeaseRecord holder;
  std::optional<RunLease> old = RunLease::acquire(file_, FencingMode::kLease, 0, holder);
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->uses_fcntl());
  EXPECT_EQ(old->beat(), "");
  // A fresh beat: another start is refused, naming the holder.
  EXPECT_FALSE(RunLease::acquire(file_, FencingMode::kLease, 0.3, holder));
  EXPECT_EQ(holder.pid, ::getpid());
  // Make the beat stale (as a frozen holder would): the next start takes over.
  LeaseRecord stale = holder;
  stale.heartbeat_unix -= static_cast<std::int64_t>(RunLease::kLeaseTimeoutSeconds) + 5;
  std::ofstream(file_, std::ios::trunc) << format_lease(stale) << '\n';
  std::optional<RunLease> next = RunLease::acquire(file_, FencingMode::kLease, 0, holder);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->epoch(), old->epoch() + 1);
  EXPECT_THROW(old->check(), FencedOut);
  EXPECT_NE(old->beat(), "");  // the old holder's beat does not overwrite the new one
  EXPECT_NO_THROW(next->check());
}

TEST_F(RunLeaseTest, ModesFenceEachOther) {
  LeaseRecord holder;
  // A live lease holder keeps an fcntl-mode start out, though no lock is held.
  std::optional<RunLease> lease = RunLease::acquire(file_, FencingMode::kLease, 0, holder);
  ASSERT_TRUE(lease);
  EXPECT_EQ(in_child([&] {
              LeaseRecord h;
              return RunLease::acquire(file_, FencingMode::kAuto, 0.3, h) ? 1 : 0;
            }),
            0);
  lease.reset();  // handed back: an fcntl-mode start goes ahead
  std::optional<RunLease> locked = RunLease::acquire(file_, FencingMode::kAuto, 0, holder);
  ASSERT_TRUE(locked);
  ASSERT_TRUE(locked->uses_fcntl());
  // A live fcntl holder keeps a lease-mode start out (F_GETLK sees it).
  EXPECT_EQ(in_child([&] {
              LeaseRecord h;
              return RunLease::acquire(file_, FencingMode::kLease, 0.3, h) ? 1 : 0;
            }),
            0);
}

TEST(WatchdogDeathTest, EndsAProcessWithoutProgress) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(1.0);
        set_activity("waiting in a test", 3);
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::exit(0);
      },
      ::testing::ExitedWithCode(kExitWatchdog),
      "no progress for 1 s.*waiting in a test in round 3");
}

TEST(WatchdogDeathTest, KeepsAProcessThatBeats) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(1.0);
        for (int i = 0; i < 12; ++i) {
          comm::heartbeat();
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        std::exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(WatchdogDeathTest, AllowsAKnownQuietPeriod) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(1.0);
        w.allow_quiet(3.0);
        std::this_thread::sleep_for(std::chrono::milliseconds(2000));
        std::exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(WatchdogDeathTest, EndsAnOrphanWhoseLauncherIsGone) {
  // "fast" (fork only): the report path below must be the same in the child.
  GTEST_FLAG_SET(death_test_style, "fast");
  // The death-test child forks a "rank" that looks launched, then exits
  // (the launcher dies); the rank must end itself within ~1 s. It reports
  // through a file, since its stderr outlives nobody who reads it.
  const fs::path report =
      fs::temp_directory_path() / ("bloomshard-orphan-" + std::to_string(::getpid()));
  fs::remove(report);
  EXPECT_EXIT(
      {
        const pid_t rank = ::fork();
        if (rank == 0) {
          ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
          ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
          std::FILE* out = std::freopen(report.c_str(), "w", stderr);
          (void)out;
          Watchdog w(0);
          for (int i = 0; i < 100; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
          std::fprintf(stderr, "still alive after 5 s\n");
          std::exit(0);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::exit(3);
      },
      ::testing::ExitedWithCode(3), "");
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream in(report);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("orphaned rank") != std::string::npos) {
      EXPECT_NE(text.find("rank 1 on "), std::string::npos) << text;
      fs::remove(report);
      return;
    }
  }
  std::ifstream in(report);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(report);
  FAIL() << "the orphan did not end itself within 4 s: '" << text << "'";
}

}  // namespace
}  // namespace bloomshard::app
