#include "app/report/resource_usage.hpp"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace bloomshard::app {

std::uint64_t peak_rss_bytes() noexcept {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

double thread_system_seconds() noexcept {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_stime.tv_usec);
}

std::uint64_t rss_anon_bytes() noexcept {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word) {
    if (word == "RssAnon:") {
      std::uint64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace bloomshard::app
