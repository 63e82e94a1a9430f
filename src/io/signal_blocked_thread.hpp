// Background threads of the io layer (an output's compression, an input's
// read-ahead) start here, with the asynchronous signals blocked, so that a
// stop signal (SIGUSR1, SIGTERM, SIGINT) is handled on one of the rank's
// own threads as it was before any of them existed; faults of the thread
// itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP) stay
// deliverable to it.
#pragma once

#include <functional>
#include <thread>

namespace bloomshard::io {

/// Starts `body` on a new thread whose signal mask blocks every signal but
/// the synchronous ones above; the caller's own mask is unchanged when this
/// returns. Throws std::system_error if the thread cannot start.
[[nodiscard]] std::thread start_with_signals_blocked(std::function<void()> body);

}  // namespace bloomshard::io
