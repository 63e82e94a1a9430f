// Process resource readings for metrics and benchmarks (Linux).
#pragma once

#include <cstdint>

namespace bloomshard::app {

/// Peak resident set size of this process in bytes (getrusage ru_maxrss).
[[nodiscard]] std::uint64_t peak_rss_bytes() noexcept;

/// Current anonymous resident memory (RssAnon of /proc/self/status) in
/// bytes: heap and stacks, without the evictable page cache of mapped files.
/// 0 if the file cannot be read.
[[nodiscard]] std::uint64_t rss_anon_bytes() noexcept;

}  // namespace bloomshard::app
