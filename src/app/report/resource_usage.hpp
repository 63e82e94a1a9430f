// Process resource readings for metrics and benchmarks (Linux).
#pragma once

#include <cstdint>

namespace bloomshard::app {

/// Peak resident set size of this process in bytes (getrusage ru_maxrss).
[[nodiscard]] std::uint64_t peak_rss_bytes() noexcept;

/// CPU seconds the calling thread has spent in the kernel (getrusage
/// RUSAGE_THREAD ru_stime): system calls and page faults. Linux samples the
/// user/system split at the scheduler tick (4 ms at HZ=250) and scales it to
/// the thread's exact run time, so a difference is meaningful when summed
/// over many rounds, not for one short interval. 0 on failure.
[[nodiscard]] double thread_system_seconds() noexcept;

/// Current anonymous resident memory (RssAnon of /proc/self/status) in
/// bytes: heap and stacks, without the evictable page cache of mapped files.
/// 0 if the file cannot be read.
[[nodiscard]] std::uint64_t rss_anon_bytes() noexcept;

}  // namespace bloomshard::app
