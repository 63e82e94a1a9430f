// Communicator collectives and the Environment, at any rank count.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/environment.hpp"

namespace bloomshard::comm {
namespace {

TEST(Communicator, ScalarReductions) {
  Communicator comm;
  const auto r = static_cast<std::uint64_t>(comm.rank());
  const auto n = static_cast<std::uint64_t>(comm.size());
  EXPECT_EQ(comm.allreduce_sum(r + 1), n * (n + 1) / 2);
  EXPECT_EQ(comm.allreduce_max(r * 10), (n - 1) * 10);
  EXPECT_DOUBLE_EQ(comm.allreduce_max(-1.5 * static_cast<double>(r)), 0.0);
  EXPECT_DOUBLE_EQ(comm.allreduce_sum(0.5), 0.5 * static_cast<double>(n));
}

TEST(Communicator, VectorReductions) {
  Communicator comm;
  const auto r = static_cast<std::uint64_t>(comm.rank());
  const auto n = static_cast<std::uint64_t>(comm.size());
  const std::vector<std::uint64_t> local = {1, r, 1ULL << 40, 100 - r};
  const std::vector<std::uint64_t> sum = comm.allreduce_sum(local);
  const std::vector<std::uint64_t> max = comm.allreduce_max(local);
  EXPECT_EQ(sum,
            (std::vector<std::uint64_t>{n, n * (n - 1) / 2, n << 40, 100 * n - n * (n - 1) / 2}));
  EXPECT_EQ(max, (std::vector<std::uint64_t>{1, n - 1, 1ULL << 40, 100}));
  EXPECT_TRUE(comm.allreduce_sum(std::vector<std::uint64_t>{}).empty());
}

TEST(Communicator, AllgatherConcatenatesInRankOrder) {
  Communicator comm;
  const auto r = static_cast<std::uint64_t>(comm.rank());
  const auto n = static_cast<std::uint64_t>(comm.size());
  // Rank r gives r values (rank 0 none): r*100, r*100 + 1, ...
  std::vector<std::uint64_t> mine;
  for (std::uint64_t i = 0; i < r; ++i) mine.push_back(r * 100 + i);
  std::vector<std::uint64_t> expected;
  for (std::uint64_t q = 0; q < n; ++q) {
    for (std::uint64_t i = 0; i < q; ++i) expected.push_back(q * 100 + i);
  }
  EXPECT_EQ(comm.allgather(mine), expected);
  EXPECT_TRUE(comm.allgather(std::vector<std::uint64_t>{}).empty());
}

TEST(Communicator, AlltoallvDeliversEachRanksShareInRankOrder) {
  Communicator comm;
  const auto r = static_cast<std::uint64_t>(comm.rank());
  const auto n = static_cast<std::uint64_t>(comm.size());
  // Rank q sends rank d (q + d) % 3 values: q*1000 + d*10 + i; so some
  // pairs send nothing, and a rank's share to itself travels too.
  std::vector<std::vector<std::uint64_t>> to(n);
  for (std::uint64_t d = 0; d < n; ++d) {
    for (std::uint64_t i = 0; i < (r + d) % 3; ++i) to[d].push_back(r * 1000 + d * 10 + i);
  }
  std::vector<std::uint64_t> expected;
  for (std::uint64_t q = 0; q < n; ++q) {
    for (std::uint64_t i = 0; i < (q + r) % 3; ++i) expected.push_back(q * 1000 + r * 10 + i);
  }
  EXPECT_EQ(comm.alltoallv(to), expected);
  EXPECT_TRUE(comm.alltoallv(std::vector<std::vector<std::uint64_t>>(n)).empty());
  EXPECT_THROW((void)comm.alltoallv(std::vector<std::vector<std::uint64_t>>(n + 1)),
               std::invalid_argument);
}

TEST(Communicator, GatherToRankZeroConcatenatesInRankOrderThereOnly) {
  Communicator comm;
  const auto r = static_cast<std::uint64_t>(comm.rank());
  const auto n = static_cast<std::uint64_t>(comm.size());
  // Rank r gives r + 1 values: r*100 + 7, r*100 + 8, ... (rank 0's too).
  std::vector<std::uint64_t> mine;
  for (std::uint64_t i = 0; i <= r; ++i) mine.push_back(r * 100 + 7 + i);
  std::vector<std::uint64_t> expected;
  if (r == 0) {
    for (std::uint64_t q = 0; q < n; ++q) {
      for (std::uint64_t i = 0; i <= q; ++i) expected.push_back(q * 100 + 7 + i);
    }
  }
  EXPECT_EQ(comm.gather_to_rank0(mine), expected) << "rank " << r;
  EXPECT_TRUE(comm.gather_to_rank0(std::vector<std::uint64_t>{}).empty());
}

TEST(Communicator, AnyAndAll) {
  Communicator comm;
  const bool last = comm.rank() == comm.size() - 1;
  EXPECT_TRUE(comm.any(last));
  EXPECT_FALSE(comm.any(false));
  EXPECT_TRUE(comm.all(true));
  EXPECT_EQ(comm.all(last), comm.size() == 1);
  EXPECT_FALSE(comm.all(false));
}

TEST(Communicator, AnyWithinAgreesLikeAnyWhenEveryRankComes) {
  Communicator c;
  const bool last_fails = c.rank() == c.size() - 1;
  EXPECT_EQ(c.any_within(last_fails, 30.0), std::optional<bool>(true));
  EXPECT_EQ(c.any_within(false, 30.0), std::optional<bool>(false));
  // A rank that comes late is waited for, within the bound.
  if (c.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(c.any_within(c.rank() == 0, 30.0), std::optional<bool>(true));
}

TEST(Communicator, BroadcastFromRootOnly) {
  Communicator comm;
  const std::string text = std::string("options\0with nul", 16) + std::string(10000, 'x');
  EXPECT_EQ(comm.broadcast(comm.rank() == 0 ? text : std::string("ignored")), text);
  EXPECT_EQ(comm.broadcast(comm.rank() == 0 ? "" : "ignored"), "");
  const int last = comm.size() - 1;
  EXPECT_EQ(comm.broadcast("from " + std::to_string(comm.rank()), last),
            "from " + std::to_string(last));
  const std::vector<std::byte> bytes = {std::byte{0}, std::byte{255}, std::byte{7}};
  const std::vector<std::byte> got =
      comm.broadcast_bytes(comm.rank() == 0 ? bytes : std::vector<std::byte>{});
  EXPECT_EQ(got, bytes);
  comm.barrier();
}

TEST(Environment, SecondEnvironmentAdoptsAndDoesNotFinalize) {
  EXPECT_TRUE(Environment::initialized());
  EXPECT_FALSE(Environment::finalized());
  {
    Environment nested;
    EXPECT_FALSE(nested.owns_mpi());
    Communicator comm;
    EXPECT_EQ(nested.rank(), comm.rank());
    EXPECT_EQ(nested.size(), comm.size());
  }
  EXPECT_FALSE(Environment::finalized());
  Communicator().barrier();  // MPI still usable
}

}  // namespace
}  // namespace bloomshard::comm
