// Waiting for a nonblocking MPI request without holding a core.
//
// A blocking MPI call that waits for a late rank polls: Open MPI's progress
// loop runs on the waiting rank's core for as long as the wait lasts. On a
// node where ranks share cores with their own background threads (the
// output writers and compressors), that core is the one the late rank's
// writer needs. wait_resting() polls in a tight loop for the first
// kSpinMicroseconds (a partner that is nearly there costs no latency), then
// sleeps between polls, 20 us doubling up to kMaxSleepMicroseconds: a wait
// of milliseconds costs a few dozen wake-ups instead of a core, and ends at
// most one sleep after the request completes.
//
// Only for requests whose completion needs no further progress from this
// rank once the others have arrived: small collectives (counts, flags) that
// travel eagerly. A large transfer (rendezvous protocol) moves only while
// its ranks poll, and sleeping between polls would slow it down. And only
// where ranks arrive seconds apart, rarely (the end pass's agreement): in
// every round's collectives the wake-ups cost more wall time than the
// sleeping saves (docs/performance.md, "A waiting rank sleeps").
#pragma once

#include <mpi.h>

namespace bloomshard::comm {

inline constexpr int kSpinMicroseconds = 50;
inline constexpr int kMaxSleepMicroseconds = 200;

/// Completes `request` (MPI_Test, then sleeps as above) and sets it to
/// MPI_REQUEST_NULL. Throws MpiError naming `call` when a test fails.
void wait_resting(MPI_Request& request, const char* call);

}  // namespace bloomshard::comm
