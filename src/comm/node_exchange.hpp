// A node-aware all-to-all: MPI_Alltoallv's result in two steps, so that a
// rank sends L - 1 + N - 1 messages instead of R - 1 (L ranks per node, N
// nodes, R = N x L). Step 1 stays inside the node (shared memory): rank
// (a, i) hands local rank j everything it has for the ranks of local index j
// on every node. Step 2 crosses nodes between the ranks of one local index:
// (a, j) sends (b, j) what the ranks of node a have for it. Costs two more
// copies of the payload in memory and a small count exchange inside the
// node; wins when the per-message latency of R - 1 peers dominates the round
// (docs/scaling.md: from about R = 1000 at 8 MiB batches on InfiniBand).
// Needs the same number of ranks on every node; NodeTopology says whether
// that holds, and callers fall back to the flat exchange when it does not.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.hpp"

namespace bloomshard::comm {

/// Which ranks share a node, and the two communicators of the node-aware
/// exchange. Move-only; frees its communicators (before MPI_Finalize: keep
/// it inside the Environment's lifetime).
class NodeTopology {
 public:
  /// Collective over `world`. Nodes are the MPI_COMM_TYPE_SHARED groups, or,
  /// when ranks_per_node > 0, groups of that many consecutive world ranks
  /// (a stand-in for several nodes on one machine, for tests and
  /// benchmarks; the environment variable BLOOMSHARD_RANKS_PER_NODE sets it
  /// for the dedup job). Nodes are numbered by their lowest world rank.
  static NodeTopology discover(const Communicator& world, int ranks_per_node = 0);

  NodeTopology(NodeTopology&& other) noexcept;
  NodeTopology& operator=(NodeTopology&& other) noexcept;
  NodeTopology(const NodeTopology&) = delete;
  NodeTopology& operator=(const NodeTopology&) = delete;
  ~NodeTopology();

  /// True when every node has the same number of ranks (the exchange needs it).
  [[nodiscard]] bool uniform() const noexcept { return uniform_; }
  [[nodiscard]] int num_nodes() const noexcept { return num_nodes_; }
  [[nodiscard]] int ranks_per_node() const noexcept { return ranks_per_node_; }
  /// World rank of local rank `local` on node `node`.
  [[nodiscard]] int world_rank(int node, int local) const {
    return world_of_[static_cast<std::size_t>(node * ranks_per_node_ + local)];
  }
  [[nodiscard]] int my_node() const noexcept { return my_node_; }
  [[nodiscard]] int my_local() const noexcept { return my_local_; }
  [[nodiscard]] MPI_Comm node_comm() const noexcept { return node_comm_; }
  [[nodiscard]] MPI_Comm cross_comm() const noexcept { return cross_comm_; }

 private:
  NodeTopology() = default;
  void release() noexcept;

  bool uniform_ = false;
  int num_nodes_ = 1;
  int ranks_per_node_ = 1;
  int my_node_ = 0;
  int my_local_ = 0;
  std::vector<int> world_of_;  // [node * L + local] -> world rank (uniform only)
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm cross_comm_ = MPI_COMM_NULL;
};

/// Collective over the world communicator `topology` was made from, which
/// must be uniform(): the bytes of MPI_Alltoallv(send, send_counts,
/// send_displs, recv, recv_counts, recv_displs) over world ranks, by the two
/// steps above. Counts and displacements are per world rank, in bytes;
/// recv_counts must be known (as for MPI_Alltoallv). `scratch` is reused
/// across calls. Limit: each step's buffer < 2 GiB (int counts).
void node_alltoallv(const NodeTopology& topology, const char* send,
                    std::span<const int> send_counts, std::span<const int> send_displs, char* recv,
                    std::span<const int> recv_counts, std::span<const int> recv_displs,
                    std::vector<char>& scratch);

}  // namespace bloomshard::comm
