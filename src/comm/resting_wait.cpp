#include "comm/resting_wait.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>

#include "comm/mpi_error.hpp"

namespace bloomshard::comm {

void wait_resting(MPI_Request& request, const char* call) {
  int done = 0;
  const auto spin_until =
      std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicroseconds);
  do {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call);
    if (done) return;
  } while (std::chrono::steady_clock::now() < spin_until);
  long sleep_us = 20;
  while (true) {
    // nanosleep, not std::this_thread::sleep_for: the same call, without a
    // clock read to convert the duration.
    const timespec pause{0, sleep_us * 1000};
    nanosleep(&pause, nullptr);
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call);
    if (done) return;
    if (sleep_us < kMaxSleepMicroseconds)
      sleep_us = std::min<long>(2 * sleep_us, kMaxSleepMicroseconds);
  }
}

}  // namespace bloomshard::comm
