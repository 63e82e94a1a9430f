#include "app/run/stop_signal.hpp"

#include <csignal>

namespace bloomshard::app {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signo) {
  if (g_stop_signal == 0) g_stop_signal = signo;
}

}  // namespace

void install_stop_signal_handlers() noexcept {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in flight carry on
  sigaction(SIGUSR1, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // Ctrl-C of a run without a launcher, or SIGINT sent to the ranks: ranks
  // sit in process groups of their own, so a terminal's SIGINT reaches
  // mpirun, never them (`bloomshard launch` turns it into SIGUSR1).
  sigaction(SIGINT, &action, nullptr);
}

bool stop_requested() noexcept { return g_stop_signal != 0; }

int stop_signal_number() noexcept { return g_stop_signal; }

}  // namespace bloomshard::app
