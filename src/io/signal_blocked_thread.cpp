#include "io/signal_blocked_thread.hpp"

#include <pthread.h>

#include <csignal>
#include <utility>

namespace bloomshard::io {

// The new thread inherits the mask in force when it is created: block, start,
// restore.
std::thread start_with_signals_blocked(std::function<void()> body) {
  sigset_t blocked;
  sigfillset(&blocked);
  for (const int sync_signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) {
    sigdelset(&blocked, sync_signal);
  }
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &blocked, &old);
  try {
    std::thread t(std::move(body));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return t;
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
}

}  // namespace bloomshard::io
