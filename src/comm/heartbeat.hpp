// The job's heartbeat: a process-wide "last moment of progress" that long
// operations (rounds, checkpoint batches, loads) beat, and that a stall
// watchdog (app layer) reads from another thread. Lock-free and cheap
// (one relaxed atomic store of a steady-clock reading, ~20 ns), so it may
// be called once per write batch or per round, not per key.
#pragma once

#include <cstdint>

namespace bloomshard::comm {

/// Records that this process made progress now. Thread-safe, noexcept.
void heartbeat() noexcept;

/// Steady-clock nanoseconds of the last heartbeat() (0: none yet).
[[nodiscard]] std::int64_t last_heartbeat_ns() noexcept;

}  // namespace bloomshard::comm
