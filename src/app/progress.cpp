#include "bloomshard/app/progress.hpp"

#include <cstdio>
#include <ostream>
#include <string>

namespace bloomshard::app {

ProgressReporter::ProgressReporter(double interval_seconds, std::ostream& out)
    : interval_(interval_seconds), out_(out), start_(Clock::now()), last_(start_) {}

void ProgressReporter::maybe_report(const ProgressSnapshot& s) {
  if (interval_ <= 0) return;
  const Clock::time_point now = Clock::now();
  if (std::chrono::duration<double>(now - last_).count() < interval_) return;
  last_ = now;
  out_ << format_line(s, std::chrono::duration<double>(now - start_).count()) << std::flush;
}

std::string ProgressReporter::format_line(const ProgressSnapshot& s, double elapsed) {
  const double rate = elapsed > 0 ? static_cast<double>(s.records) / elapsed : 0.0;
  const double dup =
      s.records ? 100.0 * static_cast<double>(s.dropped) / static_cast<double>(s.records) : 0.0;
  const double done = s.input_bytes_total ? static_cast<double>(s.input_bytes_done) /
                                                static_cast<double>(s.input_bytes_total)
                                          : 0.0;
  char eta[32] = "?";
  if (done > 0.0 && done < 1.0) {
    std::snprintf(eta, sizeof eta, "%.0fs", elapsed * (1.0 - done) / done);
  } else if (done >= 1.0) {
    std::snprintf(eta, sizeof eta, "0s");
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "progress: %llu records, %.0f rec/s, dup %.2f%%, rejected %llu, "
                "input %.1f/%.1f MiB (%.1f%%), elapsed %.0fs, ETA %s\n",
                static_cast<unsigned long long>(s.records), rate, dup,
                static_cast<unsigned long long>(s.rejected),
                static_cast<double>(s.input_bytes_done) / 1048576.0,
                static_cast<double>(s.input_bytes_total) / 1048576.0, 100.0 * done, elapsed, eta);
  return line;
}

}  // namespace bloomshard::app
