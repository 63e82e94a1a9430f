// CPU seconds of the calling process, for the bench programs that print
// them beside the wall time: on a shared machine the wall time also holds
// the time other work had the core.
#pragma once

#include <time.h>

namespace bloomshard::bench {

inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace bloomshard::bench
