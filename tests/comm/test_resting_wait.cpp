// The resting collectives (comm/resting_wait.hpp) at any rank count: the
// same answers as the blocking ones, and a rank that waits for a late one
// sleeps through the wait instead of polling on its core.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/resting_wait.hpp"

namespace bloomshard::comm {
namespace {

// CPU seconds (user + system) of the calling thread.
double thread_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

TEST(RestingWait, AnswersAsTheBlockingCollectives) {
  Communicator comm;
  const auto r = static_cast<std::uint64_t>(comm.rank());
  const auto n = static_cast<std::uint64_t>(comm.size());
  EXPECT_TRUE(comm.all_resting(true));
  EXPECT_FALSE(comm.all_resting(comm.rank() != static_cast<int>(n) - 1));
  EXPECT_EQ(comm.all_resting(r % 2 == 0), comm.all(r % 2 == 0));
}

TEST(RestingWait, CompletesARequestAndClearsIt) {
  Communicator comm;
  int in = comm.rank();
  int out = -1;
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MAX, comm.mpi_comm(), &request), MPI_SUCCESS);
  wait_resting(request, "MPI_Iallreduce");
  EXPECT_EQ(out, comm.size() - 1);
  EXPECT_EQ(request, MPI_REQUEST_NULL);
}

// The point of it: rank 0 arrives 300 ms late, and the others wait for it
// at a CPU cost far below the wait's length (a polling wait costs all of
// it). Fails if the wait polls throughout.
TEST(RestingWait, AnEarlyRankSleepsWhileItWaits) {
  Communicator comm;
  constexpr auto kLate = std::chrono::milliseconds(300);
  comm.barrier();
  if (comm.rank() == 0) std::this_thread::sleep_for(kLate);
  const double cpu_before = thread_cpu_seconds();
  const auto wall_before = std::chrono::steady_clock::now();
  EXPECT_TRUE(comm.all_resting(true));
  const double cpu = thread_cpu_seconds() - cpu_before;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  if (comm.rank() != 0) {
    EXPECT_GE(wall, 0.2) << "rank " << comm.rank() << " did not wait for rank 0";
    EXPECT_LT(cpu, 0.25 * wall) << "rank " << comm.rank() << " used " << cpu
                                << " CPU-s in a wait of " << wall << " s";
  }
}

}  // namespace
}  // namespace bloomshard::comm
