// Wall-clock helpers of a job: seconds since a point, and one stretch of a
// round timed (its wall time and the calling thread's kernel time: page
// faults, system calls) added to a phase's totals.
#pragma once

#include <chrono>

#include "app/report/resource_usage.hpp"

namespace bloomshard::app {

/// Seconds of wall time since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class PhaseTimer {
 public:
  using Clock = std::chrono::steady_clock;

  PhaseTimer() : wall_(Clock::now()), system_(thread_system_seconds()) {}

  /// Adds the seconds since construction to `wall` and `system`.
  void add_to(double& wall, double& system) const {
    wall += std::chrono::duration<double>(Clock::now() - wall_).count();
    system += thread_system_seconds() - system_;
  }

 private:
  Clock::time_point wall_;
  double system_;
};

}  // namespace bloomshard::app
