#include "comm/heartbeat.hpp"

#include <atomic>
#include <chrono>

namespace bloomshard::comm {
namespace {

std::atomic<std::int64_t> g_last_beat_ns{0};

}  // namespace

void heartbeat() noexcept {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  g_last_beat_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                       std::memory_order_relaxed);
}

std::int64_t last_heartbeat_ns() noexcept { return g_last_beat_ns.load(std::memory_order_relaxed); }

}  // namespace bloomshard::comm
