// A thin, checked view of an MPI communicator with the few collectives the
// job driver needs: agreeing that everyone is done, reducing metrics
// counters, and broadcasting validated options or an error text from rank 0.
// Every failed call throws MpiError (see mpi_error.hpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bloomshard::comm {

/// Non-owning handle: never frees the MPI_Comm. Cheap to copy.
/// Requires an initialized MPI (see Environment).
class Communicator {
 public:
  /// MPI_COMM_WORLD.
  Communicator();
  /// Wraps `comm`; the caller keeps it alive and has set MPI_ERRORS_RETURN
  /// on it (communicators derived from MPI_COMM_WORLD inherit it).
  explicit Communicator(MPI_Comm comm);

  [[nodiscard]] MPI_Comm mpi_comm() const noexcept { return comm_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// rank() and size() as unsigned, for indexing.
  [[nodiscard]] std::uint32_t urank() const noexcept { return static_cast<std::uint32_t>(rank_); }
  [[nodiscard]] std::uint32_t usize() const noexcept { return static_cast<std::uint32_t>(size_); }

  /// Collective: MPI_Barrier.
  void barrier() const;

  /// Collective: sum / max of one value over all ranks, result on every rank.
  [[nodiscard]] std::uint64_t allreduce_sum(std::uint64_t value) const;
  [[nodiscard]] std::uint64_t allreduce_max(std::uint64_t value) const;
  [[nodiscard]] double allreduce_max(double value) const;
  [[nodiscard]] double allreduce_sum(double value) const;

  /// Collective: element-wise sum / max of a vector of counters, result on
  /// every rank. Every rank must pass the same length (< 2^31 elements).
  [[nodiscard]] std::vector<std::uint64_t> allreduce_sum(
      std::span<const std::uint64_t> values) const;
  [[nodiscard]] std::vector<std::uint64_t> allreduce_max(
      std::span<const std::uint64_t> values) const;

  /// Collective: every rank's `values`, concatenated in rank order, on every
  /// rank (MPI_Allgather of the counts, then MPI_Allgatherv). Lengths may
  /// differ; the total must stay below 2^31 elements (else every rank
  /// throws std::length_error).
  [[nodiscard]] std::vector<std::uint64_t> allgather(std::span<const std::uint64_t> values) const;

  /// Collective: `to[r]` goes to rank r (`to` has size() entries); returns
  /// what every rank sent this one, concatenated in rank order
  /// (MPI_Alltoall of the counts, then MPI_Alltoallv). What a rank sends
  /// and receives must each stay below 2^31 values (else every rank throws
  /// std::length_error: the counts are agreed before any data moves).
  [[nodiscard]] std::vector<std::uint64_t> alltoallv(
      std::span<const std::vector<std::uint64_t>> to) const;

  /// Collective: as allgather(), but the concatenation lands on rank 0 only
  /// (the other ranks get an empty vector): for what only rank 0 writes, so
  /// that no other rank holds every rank's share (MPI_Allgather of the
  /// counts, so that every rank sees the same total and throws the same
  /// std::length_error past 2^31-1 values, then MPI_Gatherv).
  [[nodiscard]] std::vector<std::uint64_t> gather_to_rank0(
      std::span<const std::uint64_t> values) const;

  /// Collective: true if `flag` is true on any rank / on every rank.
  [[nodiscard]] bool any(bool flag) const;
  [[nodiscard]] bool all(bool flag) const;
  /// Collective: as all(), for a point where ranks arrive far apart (after
  /// each rank's share of the end pass): an early rank sleeps between polls
  /// (MPI_Iallreduce, comm/resting_wait.hpp) instead of holding a core.
  [[nodiscard]] bool all_resting(bool flag) const;

  /// Collective: as any(), but waits at most `seconds` for the other ranks
  /// (MPI_Iallreduce, polled every millisecond); nullopt when they did not
  /// arrive in time. For a rank that failed between the steps of a
  /// collective sequence: the others may be waiting in another collective
  /// and never come, so the caller reports and ends the job instead of
  /// hanging. The abandoned request is never completed; only call this on
  /// the way to abort_job when it returns nullopt.
  [[nodiscard]] std::optional<bool> any_within(bool flag, double seconds) const;

  /// Collective: every rank returns root's `text` (other ranks' argument is
  /// ignored). Two broadcasts: the length, then the bytes (< 2 GiB; larger
  /// texts throw std::length_error on every rank).
  [[nodiscard]] std::string broadcast(std::string_view text, int root = 0) const;
  /// Collective: as broadcast(), for raw bytes.
  [[nodiscard]] std::vector<std::byte> broadcast_bytes(std::span<const std::byte> bytes,
                                                       int root = 0) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace bloomshard::comm
