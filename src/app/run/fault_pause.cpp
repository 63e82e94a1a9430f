#include "app/run/fault_pause.hpp"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "app/report/stderr_line.hpp"
#include "app/run/stop_signal.hpp"
#include "comm/heartbeat.hpp"

namespace bloomshard::app {

namespace {

const char* wanted_point() { return std::getenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH"); }

// BLOOMSHARD_FAULT_PAUSE_RELEASE=<path>: the pause also ends once that
// file exists, so a test that only needs the job held until it has set up a
// fault (tests/e2e/split_join_eio.sh) lets it go on at once instead of
// waiting out the 60 s.
bool released() {
  const char* path = std::getenv("BLOOMSHARD_FAULT_PAUSE_RELEASE");
  struct stat st {};
  return path != nullptr && *path != '\0' && ::stat(path, &st) == 0;
}

void hold(const std::string& point, int rank, bool until_stop) {
  if (rank == 0) write_stderr_line("bloomshard dedup: fault pause at " + point);
  // Beating keeps the stall watchdog quiet: the pause is the test's, not a hang.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !(until_stop && stop_requested()) &&
         !released()) {
    comm::heartbeat();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void pause_at(const char* point, int rank, bool until_stop) {
  const char* wanted = wanted_point();
  if (wanted == nullptr || std::strcmp(wanted, point) != 0) return;
  hold(point, rank, until_stop);
}

}  // namespace

void fault_pause_in_finish(const char* point, int rank) { pause_at(point, rank, false); }

void fault_pause_until_stop(const char* point, int rank) { pause_at(point, rank, true); }

void fault_pause_before_agreement(std::uint64_t round, int rank) {
  const char* wanted = wanted_point();
  if (wanted == nullptr) return;
  const std::string point = std::string(kPauseBeforeRoundAgreement) + ":" + std::to_string(round);
  if (point == wanted) hold(point, rank, true);
}

}  // namespace bloomshard::app
