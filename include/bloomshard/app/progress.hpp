// Progress lines on rank 0: one plain line every --progress seconds
// (records, rate, duplicate %, input bytes done / total, ETA). Plain
// newlines only, never carriage returns, so Slurm logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>

namespace bloomshard::app {

/// Job-wide counts at one round boundary.
struct ProgressSnapshot {
  std::uint64_t records = 0;
  std::uint64_t dropped = 0;
  std::uint64_t rejected = 0;
  std::uint64_t input_bytes_done = 0;
  std::uint64_t input_bytes_total = 0;
};

class ProgressReporter {
 public:
  /// interval_seconds <= 0 disables the reporter.
  ProgressReporter(double interval_seconds, std::ostream& out);

  /// Prints a line if the interval has passed since the last one.
  void maybe_report(const ProgressSnapshot& s);

  /// The line for `s` after `elapsed` seconds (exposed for tests).
  [[nodiscard]] static std::string format_line(const ProgressSnapshot& s, double elapsed);

 private:
  using Clock = std::chrono::steady_clock;
  double interval_;
  std::ostream& out_;
  Clock::time_point start_;
  Clock::time_point last_;
};

}  // namespace bloomshard::app
