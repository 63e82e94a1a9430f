#include "comm/communicator.hpp"

#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "comm/mpi_error.hpp"
#include "comm/resting_wait.hpp"

namespace bloomshard::comm {
namespace {

template <typename T>
T reduce_one(MPI_Comm comm, T value, MPI_Datatype type, MPI_Op op) {
  T result{};
  check_mpi(MPI_Allreduce(&value, &result, 1, type, op, comm), "MPI_Allreduce");
  return result;
}

std::vector<std::uint64_t> reduce_vector(MPI_Comm comm, std::span<const std::uint64_t> values,
                                         MPI_Op op) {
  if (values.size() > static_cast<std::size_t>(INT_MAX)) {
    throw std::length_error("allreduce of more than 2^31-1 counters");
  }
  std::vector<std::uint64_t> result(values.size());
  check_mpi(MPI_Allreduce(values.data(), result.data(), static_cast<int>(values.size()),
                          MPI_UINT64_T, op, comm),
            "MPI_Allreduce");
  return result;
}

// Root sends the length first so that every rank can size its buffer and,
// if the payload is too large for an int count, all ranks throw together.
template <typename Out>
Out broadcast_impl(MPI_Comm comm, int my_rank, const void* data, std::size_t size, int root) {
  std::uint64_t length = my_rank == root ? size : 0;
  check_mpi(MPI_Bcast(&length, 1, MPI_UINT64_T, root, comm), "MPI_Bcast");
  if (length > static_cast<std::uint64_t>(INT_MAX)) {
    throw std::length_error("broadcast of " + std::to_string(length) +
                            " bytes exceeds the 2 GiB MPI count limit");
  }
  Out out(static_cast<std::size_t>(length), typename Out::value_type{});
  if (my_rank == root && length > 0) std::memcpy(out.data(), data, out.size());
  if (length > 0) {
    check_mpi(MPI_Bcast(out.data(), static_cast<int>(length), MPI_BYTE, root, comm), "MPI_Bcast");
  }
  return out;
}

}  // namespace

Communicator::Communicator() : Communicator(MPI_COMM_WORLD) {}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

void Communicator::barrier() const { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

std::uint64_t Communicator::allreduce_sum(std::uint64_t value) const {
  return reduce_one(comm_, value, MPI_UINT64_T, MPI_SUM);
}

std::uint64_t Communicator::allreduce_max(std::uint64_t value) const {
  return reduce_one(comm_, value, MPI_UINT64_T, MPI_MAX);
}

double Communicator::allreduce_max(double value) const {
  return reduce_one(comm_, value, MPI_DOUBLE, MPI_MAX);
}

double Communicator::allreduce_sum(double value) const {
  return reduce_one(comm_, value, MPI_DOUBLE, MPI_SUM);
}

std::vector<std::uint64_t> Communicator::allreduce_sum(
    std::span<const std::uint64_t> values) const {
  return reduce_vector(comm_, values, MPI_SUM);
}

std::vector<std::uint64_t> Communicator::allreduce_max(
    std::span<const std::uint64_t> values) const {
  return reduce_vector(comm_, values, MPI_MAX);
}

namespace {

// Every rank's count (MPI_Allgather), as the int counts and displacements
// of a v-collective; `total` their sum. Throws std::length_error on every
// rank alike past 2^31-1 values (`what` names the collective).
struct GatherLayout {
  std::vector<int> counts;
  std::vector<int> displs;
  std::uint64_t total = 0;
};

GatherLayout gather_layout(MPI_Comm comm, int size, std::uint64_t mine, const char* what) {
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&mine, 1, MPI_UINT64_T, counts.data(), 1, MPI_UINT64_T, comm),
            "MPI_Allgather");
  GatherLayout l;
  l.counts.resize(counts.size());
  l.displs.resize(counts.size());
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (l.total + counts[r] > static_cast<std::uint64_t>(INT_MAX)) {
      throw std::length_error(std::string(what) + " of more than 2^31-1 values");
    }
    l.displs[r] = static_cast<int>(l.total);
    l.counts[r] = static_cast<int>(counts[r]);
    l.total += counts[r];
  }
  return l;
}

}  // namespace

std::vector<std::uint64_t> Communicator::allgather(std::span<const std::uint64_t> values) const {
  const GatherLayout l = gather_layout(comm_, size_, values.size(), "allgather");
  std::vector<std::uint64_t> all(l.total);
  check_mpi(MPI_Allgatherv(values.data(), static_cast<int>(values.size()), MPI_UINT64_T, all.data(),
                           l.counts.data(), l.displs.data(), MPI_UINT64_T, comm_),
            "MPI_Allgatherv");
  return all;
}

std::vector<std::uint64_t> Communicator::alltoallv(
    std::span<const std::vector<std::uint64_t>> to) const {
  if (to.size() != static_cast<std::size_t>(size_)) {
    throw std::invalid_argument("alltoallv: " + std::to_string(to.size()) + " destinations for " +
                                std::to_string(size_) + " ranks");
  }
  const auto n = static_cast<std::size_t>(size_);
  std::vector<std::uint64_t> send_counts(n);
  std::vector<std::uint64_t> send;
  for (std::size_t r = 0; r < n; ++r) send_counts[r] = to[r].size();
  std::vector<std::uint64_t> recv_counts(n);
  check_mpi(
      MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm_),
      "MPI_Alltoall");
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (std::size_t r = 0; r < n; ++r) {
    sent += send_counts[r];
    received += recv_counts[r];
  }
  // Every rank throws alike, before any data moves.
  const bool too_many =
      sent > static_cast<std::uint64_t>(INT_MAX) || received > static_cast<std::uint64_t>(INT_MAX);
  if (any(too_many))
    throw std::length_error("alltoallv of more than 2^31-1 values to or from a rank");
  std::vector<int> scounts(n), sdispls(n), rcounts(n), rdispls(n);
  send.reserve(sent);
  std::uint64_t in = 0;
  for (std::size_t r = 0; r < n; ++r) {
    scounts[r] = static_cast<int>(send_counts[r]);
    sdispls[r] = static_cast<int>(send.size());
    send.insert(send.end(), to[r].begin(), to[r].end());
    rcounts[r] = static_cast<int>(recv_counts[r]);
    rdispls[r] = static_cast<int>(in);
    in += recv_counts[r];
  }
  std::vector<std::uint64_t> all(received);
  check_mpi(MPI_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_UINT64_T, all.data(),
                          rcounts.data(), rdispls.data(), MPI_UINT64_T, comm_),
            "MPI_Alltoallv");
  return all;
}

std::vector<std::uint64_t> Communicator::gather_to_rank0(
    std::span<const std::uint64_t> values) const {
  const GatherLayout l = gather_layout(comm_, size_, values.size(), "gather");
  std::vector<std::uint64_t> all(rank_ == 0 ? l.total : 0);
  check_mpi(MPI_Gatherv(values.data(), static_cast<int>(values.size()), MPI_UINT64_T, all.data(),
                        l.counts.data(), l.displs.data(), MPI_UINT64_T, 0, comm_),
            "MPI_Gatherv");
  return all;
}

bool Communicator::any(bool flag) const {
  return reduce_one(comm_, flag ? 1 : 0, MPI_INT, MPI_LOR) != 0;
}

bool Communicator::all(bool flag) const {
  return reduce_one(comm_, flag ? 1 : 0, MPI_INT, MPI_LAND) != 0;
}

bool Communicator::all_resting(bool flag) const {
  int in = flag ? 1 : 0;
  int out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm_, &request), "MPI_Iallreduce");
  wait_resting(request, "MPI_Iallreduce");
  return out != 0;
}

std::string Communicator::broadcast(std::string_view text, int root) const {
  return broadcast_impl<std::string>(comm_, rank_, text.data(), text.size(), root);
}

std::vector<std::byte> Communicator::broadcast_bytes(std::span<const std::byte> bytes,
                                                     int root) const {
  return broadcast_impl<std::vector<std::byte>>(comm_, rank_, bytes.data(), bytes.size(), root);
}

std::optional<bool> Communicator::any_within(bool flag, double seconds) const {
  int in = flag ? 1 : 0;
  int out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LOR, comm_, &request), "MPI_Iallreduce");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return out != 0;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace bloomshard::comm
