// The lock file's branches no job run takes on a healthy machine
// (docs/coverage.md, src/app/run): a record that is not ours word by word,
// a holder named with another process's lock, a lease handed over while a
// start waits, a record overwritten by something unreadable, a lease moved
// over another, a lock file that cannot be opened. Real files and real
// fcntl locks; the "other attempt" is a forked child where the lock is per
// process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <system_error>

#include "app/run/run_lease.hpp"
#include "lease_dir_test.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class RunLeaseCoverageTest : public LeaseDirTest {
 protected:
  void overwrite_lock_file(const std::string& text) const {
    std::ofstream(file_, std::ios::trunc) << text << '\n';
  }
};

// Every word of the record is checked: a line that differs in any one of
// them is not a lease record (another tool's file, or a future format).
TEST(LeaseRecordCoverage, ALineThatDiffersInAnyOneKeywordIsNotARecord) {
  const std::string good = format_lease({3, "node3", 77, 100, 200, "fcntl"});
  ASSERT_TRUE(parse_lease(good));
  for (const std::string word :
       {"bloomshard-lease", "v1", "epoch", "host", "pid", "since", "heartbeat", "mode"}) {
    std::string bad = good;
    const std::size_t at = bad.find(word);
    ASSERT_NE(at, std::string::npos) << word;
    bad.replace(at, word.size(), word + "x");
    EXPECT_FALSE(parse_lease(bad)) << "changed: " << word << " -> " << bad;
  }
  EXPECT_FALSE(
      parse_lease("bloomshard-lease v1 epoch seven host h pid 1 since 2 heartbeat 3 "
                  "mode fcntl"));  // a number that is not one
}

// The holder's description names the process holding the lock when it is
// not the one the record names (another rank of it, maybe an orphan), and
// says nothing of it otherwise.
TEST(LeaseRecordCoverage, TheHolderNamesAnotherProcessHoldingTheLockOnly) {
  LeaseRecord r{5, "node5", 1000, 0, 0, "fcntl"};
  EXPECT_EQ(describe_holder(r).find("the lock is now held"), std::string::npos);
  r.lock_pid = 1000;
  EXPECT_EQ(describe_holder(r).find("the lock is now held"), std::string::npos);
  r.lock_pid = 1001;
  EXPECT_NE(describe_holder(r).find("the lock is now held by its pid 1001 (another rank of it"),
            std::string::npos)
      << describe_holder(r);
  EXPECT_NE(describe_holder(r).find("since 1970-01-01 00:00:00 UTC (epoch 5)"), std::string::npos)
      << describe_holder(r);
  // A start time no calendar holds (a damaged record): named "?", not a crash.
  r.since_unix = std::numeric_limits<std::int64_t>::max();
  EXPECT_NE(describe_holder(r).find(", since ? (epoch 5)"), std::string::npos)
      << describe_holder(r);
}

std::optional<RunLease>* g_holder_to_end = nullptr;
int g_waits = 0;

// acquire's on_wait: counts the wait and ends the holder, as a job that
// finishes while the next start waits.
void end_the_holder() {
  ++g_waits;
  if (g_holder_to_end != nullptr) g_holder_to_end->reset();
}

// A lease-mode start waits while the holder beats, calling back each time it
// waits; the holder handing the lease back lets it through, one epoch on.
// The wait allowed is long: the start ends at the hand-back, not by time.
TEST_F(RunLeaseCoverageTest, AStartWaitingInLeaseModeTakesTheLeaseHandedBack) {
  LeaseRecord holder;
  std::optional<RunLease> first = RunLease::acquire(file_, FencingMode::kLease, 0, holder);
  ASSERT_TRUE(first);
  g_holder_to_end = &first;
  g_waits = 0;
  std::optional<RunLease> next =
      RunLease::acquire(file_, FencingMode::kLease, 60, holder, &end_the_holder);
  g_holder_to_end = nullptr;
  ASSERT_TRUE(next);
  EXPECT_EQ(g_waits, 1);
  EXPECT_EQ(next->epoch(), 2U);
  EXPECT_EQ(holder.pid, ::getpid());  // the holder it waited for, named
  EXPECT_FALSE(next->uses_fcntl());
}

// A record overwritten by bytes that do not parse fences the holder out,
// with a message that says so; a lease-mode beat then reports the loss and
// writes nothing over the new bytes.
TEST_F(RunLeaseCoverageTest, ARecordOverwrittenByGarbageFencesTheHolderOut) {
  LeaseRecord holder;
  std::optional<RunLease> lease = RunLease::acquire(file_, FencingMode::kLease, 0, holder);
  ASSERT_TRUE(lease);
  overwrite_lock_file("not a lease record");
  try {
    lease->check();
    ADD_FAILURE() << "check() passed on an unreadable record";
  } catch (const FencedOut& e) {
    EXPECT_NE(std::string(e.what()).find("the lock file names nobody readable"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(lease->beat(), "lease lost to a newer attempt");
  std::ifstream in(file_);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "not a lease record");
  lease.reset();  // its destructor must not hand back a lease it lost
  std::ifstream again(file_);
  std::getline(again, line);
  EXPECT_EQ(line, "not a lease record");
}

// fcntl mode has no beat to write: the lock itself is the lease. A record
// whose beat is 0 stays as it is (a beat would write the time).
TEST_F(RunLeaseCoverageTest, AnFcntlLeaseHasNoBeat) {
  LeaseRecord holder;
  std::optional<RunLease> lease = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(lease);
  ASSERT_TRUE(lease->uses_fcntl());
  LeaseRecord no_beat{lease->epoch(), "node", 1, 1, 0, "fcntl"};
  const std::string written = format_lease(no_beat);
  overwrite_lock_file(written);
  EXPECT_EQ(lease->beat(), "");
  std::ifstream in(file_);
  std::string after;
  std::getline(in, after);
  EXPECT_EQ(after, written);
}

// A lease moved over another releases the one it replaces (its lock ends:
// another process can take that run) and keeps the moved one held.
TEST_F(RunLeaseCoverageTest, ALeaseMovedOverAnotherReleasesTheReplacedLock) {
  const fs::path other_file = dir_ / "OTHER_LOCK";
  LeaseRecord holder;
  std::optional<RunLease> a = RunLease::acquire(file_, FencingMode::kFcntl, 0, holder);
  std::optional<RunLease> b = RunLease::acquire(other_file, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  const auto child_takes = [](const fs::path& f) {
    return in_child([&] {
      LeaseRecord h;
      return RunLease::acquire(f, FencingMode::kFcntl, 0, h) ? 1 : 0;
    });
  };
  ASSERT_EQ(child_takes(file_), 0);  // held by `a`
  *a = std::move(*b);
  EXPECT_EQ(child_takes(file_), 1);       // released by the assignment
  EXPECT_EQ(child_takes(other_file), 0);  // still held, now by `a`
  b.reset();                              // the moved-from lease holds nothing
  EXPECT_EQ(child_takes(other_file), 0);
  RunLease& self = *a;
  *a = std::move(self);  // self-assignment keeps the lock
  EXPECT_EQ(child_takes(other_file), 0);
  EXPECT_NO_THROW(a->check());
}

// A lock file that cannot be opened is an error naming it, on every path
// that opens one.
TEST_F(RunLeaseCoverageTest, ALockFileThatCannotBeOpenedIsNamed) {
  const fs::path missing = dir_ / "none" / "LOCK";
  try {
    (void)RunLease::join(missing, true, 1);
    ADD_FAILURE() << "join opened a missing lock file";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the lock file '" + missing.string() + "'"),
              std::string::npos)
        << e.what();
  }
  const fs::path dir_named_lock = dir_ / "DIRLOCK";
  fs::create_directories(dir_named_lock);
  LeaseRecord holder;
  try {
    (void)RunLease::acquire(dir_named_lock, FencingMode::kFcntl, 0, holder);
    ADD_FAILURE() << "acquire opened a directory as its lock file";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the lock file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace bloomshard::app
