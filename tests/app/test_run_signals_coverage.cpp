// The stop signal, the fault pause and the watchdog's lease heartbeat, in
// process, so that the coverage build counts them: the tests that make
// them through the binary (faults.signal_*, faults.double_submit) end their
// ranks by a kill or an _exit, which writes no counters. The signal tests
// run in a death-test child (a handler installed for SIGTERM and SIGINT
// must not outlive the test in the test process) that ends by std::exit,
// which does write them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "app/run/fault_pause.hpp"
#include "app/run/stop_signal.hpp"
#include "app/run/watchdog.hpp"

namespace bloomshard::app {
namespace {

using Clock = std::chrono::steady_clock;

// Exit codes of the children below: which expectation failed.
constexpr int kOk = 0;
constexpr int kStopBeforeSignal = 10;
constexpr int kNoStopAfterSignal = 11;
constexpr int kNotTheFirstSignal = 12;
constexpr int kPausedTooLong = 13;
constexpr int kPausedTooShort = 14;
constexpr int kNotSaidOnce = 15;

TEST(StopSignalCoverage, TheFirstOfSeveralStopSignalsIsTheOneReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const int first : {SIGUSR1, SIGTERM, SIGINT}) {
    EXPECT_EXIT(
        {
          install_stop_signal_handlers();
          if (stop_requested() || stop_signal_number() != 0) std::exit(kStopBeforeSignal);
          std::raise(first);
          // A second signal (a Ctrl-C after the launcher's SIGUSR1) keeps
          // the first one's number: the exit message names what stopped it.
          std::raise(first == SIGINT ? SIGUSR1 : SIGINT);
          if (!stop_requested()) std::exit(kNoStopAfterSignal);
          std::exit(stop_signal_number() == first ? kOk : kNotTheFirstSignal);
        },
        ::testing::ExitedWithCode(kOk), "")
        << "first signal " << first;
  }
}

TEST(FaultPauseCoverage, AnUntilStopPauseEndsAtTheStopRequestAndOthersDoNotPause) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // Captured here rather than matched by EXPECT_EXIT: a coverage
        // build's libgcov may add its own lines to the child's stderr at exit.
        ::testing::internal::CaptureStderr();
        ::setenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH", kPauseAfterFirstCheckpoint, 1);
        install_stop_signal_handlers();
        // Another point than the variable names, or no variable: no pause.
        Clock::time_point t = Clock::now();
        fault_pause_in_finish(kPauseBeforeJoin, 0);
        fault_pause_until_stop(kPauseBeforeJoin, 0);
        ::unsetenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH");
        fault_pause_until_stop(kPauseAfterFirstCheckpoint, 0);
        ::setenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH", kPauseAfterFirstCheckpoint, 1);
        if (Clock::now() - t > std::chrono::seconds(5)) std::exit(kPausedTooLong);
        // The named point on rank 0 (says so), paused until the stop a
        // thread sends 0.3 s later; then on rank 1 (says nothing), the stop
        // already there: each returns at the stop request, not after its 60 s.
        t = Clock::now();
        std::thread stopper([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          std::raise(SIGUSR1);
        });
        fault_pause_until_stop(kPauseAfterFirstCheckpoint, 0);
        const Clock::duration paused = Clock::now() - t;
        stopper.join();
        if (paused < std::chrono::milliseconds(250)) std::exit(kPausedTooShort);
        fault_pause_until_stop(kPauseAfterFirstCheckpoint, 1);
        if (Clock::now() - t > std::chrono::seconds(5)) std::exit(kPausedTooLong);
        const bool said_once_by_rank0 = ::testing::internal::GetCapturedStderr() ==
                                        "bloomshard dedup: fault pause at after-first-checkpoint\n";
        std::exit(said_once_by_rank0 ? kOk : kNotSaidOnce);
      },
      ::testing::ExitedWithCode(kOk), "");
}

TEST(FaultPauseCoverage, ARoundPauseHoldsOnlyItsOwnRoundUntilTheStopRequest) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::testing::internal::CaptureStderr();
        install_stop_signal_handlers();
        // Other rounds (a prefix or an extension of the number too) and the
        // bare point name: no pause (each would hold 60 s without a stop).
        Clock::time_point t = Clock::now();
        ::setenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH", kPauseBeforeRoundAgreement, 1);
        fault_pause_before_agreement(4, 0);
        ::setenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH", "before-round-agreement:4", 1);
        for (const std::uint64_t other : {0UL, 3UL, 5UL, 40UL, 14UL})
          fault_pause_before_agreement(other, 0);
        fault_pause_until_stop(kPauseAfterFirstCheckpoint, 0);
        if (Clock::now() - t > std::chrono::seconds(5)) std::exit(kPausedTooLong);
        // Round 4 holds until the stop a thread sends 0.3 s later.
        t = Clock::now();
        std::thread stopper([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          std::raise(SIGUSR1);
        });
        fault_pause_before_agreement(4, 0);
        const Clock::duration paused = Clock::now() - t;
        stopper.join();
        if (paused < std::chrono::milliseconds(250)) std::exit(kPausedTooShort);
        if (paused > std::chrono::seconds(5)) std::exit(kPausedTooLong);
        const bool said_once = ::testing::internal::GetCapturedStderr() ==
                               "bloomshard dedup: fault pause at before-round-agreement:4\n";
        std::exit(said_once ? kOk : kNotSaidOnce);
      },
      ::testing::ExitedWithCode(kOk), "");
}

TEST(WatchdogCoverage, ALeaseHeartbeatFailureIsReportedOnceWhileTheBeatsGoOn) {
  std::atomic<int> failing_beats{0};
  std::atomic<int> good_beats{0};
  ::testing::internal::CaptureStderr();
  {
    Watchdog w(0);  // no stall check: only the periodic call
    w.set_periodic(
        [&] {
          ++good_beats;
          return std::string();
        },
        0.01);
    const Clock::time_point until = Clock::now() + std::chrono::seconds(10);
    while (good_beats < 2 && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    w.set_periodic(
        [&] {
          ++failing_beats;
          return std::string("the lease was taken over (epoch 3 > 2)");
        },
        0.01);
    while (failing_beats < 3 && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    w.set_periodic(nullptr, 0);
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_GE(good_beats.load(), 2);
  ASSERT_GE(failing_beats.load(), 3) << "the watchdog stopped beating after a failure";
  EXPECT_EQ(err,
            "bloomshard dedup: warning: lease heartbeat: the lease was taken over (epoch 3 > 2)\n");
}

}  // namespace
}  // namespace bloomshard::app
