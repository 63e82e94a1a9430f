#include "comm/node_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/mpi_error.hpp"

namespace bloomshard::comm {
namespace {

// Per-step int counts; a step larger than 2 GiB cannot be one MPI call.
int to_int_count(std::uint64_t n, const char* what) {
  if (n > static_cast<std::uint64_t>(INT_MAX)) {
    throw std::length_error(std::string("node exchange: ") + what + " of " + std::to_string(n) +
                            " bytes exceeds MPI's 2 GiB int counts; lower --max-exchange-bytes");
  }
  return static_cast<int>(n);
}

std::vector<int> exclusive_prefix(const std::vector<int>& counts) {
  std::vector<int> displs(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  return displs;
}

// The sizes of node_alltoallv's two steps on this rank: per local peer
// (step 1, inside the node) and per node (step 2, across nodes), with
// their prefix sums, and what each local peer sends for each node.
struct TwoStepPlan {
  std::vector<int> counts_in;  // [i * N + b]: local i's block for (node b, me)
  std::vector<int> s1, r1, s2, r2;
  std::vector<int> s1d, r1d, s2d, r2d;
  std::uint64_t s1_total = 0, r1_total = 0, r2_total = 0;
};

// Collective over the node: step 1's counts, for local peer j my block
// sizes for (b, j), b = 0..N-1.
std::vector<int> exchange_block_counts(const NodeTopology& t, std::span<const int> send_counts) {
  const int nodes = t.num_nodes();
  const int locals = t.ranks_per_node();
  const auto cells = static_cast<std::size_t>(nodes) * static_cast<std::size_t>(locals);
  std::vector<int> counts_out(cells);
  for (int j = 0; j < locals; ++j) {
    for (int b = 0; b < nodes; ++b) {
      counts_out[static_cast<std::size_t>(j * nodes + b)] =
          send_counts[static_cast<std::size_t>(t.world_rank(b, j))];
    }
  }
  std::vector<int> counts_in(cells);
  check_mpi(MPI_Alltoall(counts_out.data(), nodes, MPI_INT, counts_in.data(), nodes, MPI_INT,
                         t.node_comm()),
            "MPI_Alltoall");
  return counts_in;
}

// Sizes of the four buffers (step-1 send/recv, step-2 send/recv); throws
// std::length_error for a block or buffer over MPI's int counts.
void size_steps(const NodeTopology& t, std::span<const int> send_counts,
                std::span<const int> recv_counts, TwoStepPlan& p) {
  const int nodes = t.num_nodes();
  const int locals = t.ranks_per_node();
  const auto un = static_cast<std::size_t>(nodes);
  const auto ul = static_cast<std::size_t>(locals);
  p.s1.assign(ul, 0);
  p.r1.assign(ul, 0);
  p.s2.assign(un, 0);
  p.r2.assign(un, 0);
  for (int j = 0; j < locals; ++j) {
    std::uint64_t n = 0;
    for (int b = 0; b < nodes; ++b) {
      n += static_cast<std::uint64_t>(send_counts[static_cast<std::size_t>(t.world_rank(b, j))]);
    }
    p.s1[static_cast<std::size_t>(j)] = to_int_count(n, "a step-1 block");
    p.s1_total += n;
  }
  std::vector<std::uint64_t> s2_wide(un, 0);
  for (int i = 0; i < locals; ++i) {
    std::uint64_t n = 0;
    for (int b = 0; b < nodes; ++b) {
      const auto c =
          static_cast<std::uint64_t>(p.counts_in[static_cast<std::size_t>(i * nodes + b)]);
      n += c;
      s2_wide[static_cast<std::size_t>(b)] += c;
    }
    p.r1[static_cast<std::size_t>(i)] = to_int_count(n, "a step-1 block");
    p.r1_total += n;
  }
  for (std::size_t b = 0; b < un; ++b) p.s2[b] = to_int_count(s2_wide[b], "a step-2 block");
  for (int a = 0; a < nodes; ++a) {
    std::uint64_t n = 0;
    for (int i = 0; i < locals; ++i) {
      n += static_cast<std::uint64_t>(recv_counts[static_cast<std::size_t>(t.world_rank(a, i))]);
    }
    p.r2[static_cast<std::size_t>(a)] = to_int_count(n, "a step-2 block");
    p.r2_total += n;
  }
  p.s1d = exclusive_prefix(p.s1);
  p.r1d = exclusive_prefix(p.r1);
  p.s2d = exclusive_prefix(p.s2);
  p.r2d = exclusive_prefix(p.r2);
  to_int_count(p.s1_total, "a step-1 buffer");
  to_int_count(p.r1_total, "a step-1 buffer");
  to_int_count(p.r1_total, "a step-2 buffer");  // step 2 sends what step 1 received
  to_int_count(p.r2_total, "a step-2 buffer");
}

// Step 1's send buffer: for local peer j my blocks for (0, j), (1, j), ...
void pack_step1(const NodeTopology& t, const char* send, std::span<const int> send_counts,
                std::span<const int> send_displs, char* out) {
  for (int j = 0; j < t.ranks_per_node(); ++j) {
    for (int b = 0; b < t.num_nodes(); ++b) {
      const auto w = static_cast<std::size_t>(t.world_rank(b, j));
      const auto n = static_cast<std::size_t>(send_counts[w]);
      if (n > 0) std::memcpy(out, send + send_displs[w], n);
      out += n;
    }
  }
}

// Step 2's send buffer from step 1's receive buffer: for node b, the blocks
// of local 0, 1, ... for (b, me), in order.
void regroup_for_step2(const NodeTopology& t, const TwoStepPlan& p, const char* r1_buf, char* out) {
  const int nodes = t.num_nodes();
  const int locals = t.ranks_per_node();
  std::vector<std::size_t> block_start(p.counts_in.size());  // [i * N + b] inside r1_buf
  for (int i = 0; i < locals; ++i) {
    auto at = static_cast<std::size_t>(p.r1d[static_cast<std::size_t>(i)]);
    for (int b = 0; b < nodes; ++b) {
      block_start[static_cast<std::size_t>(i * nodes + b)] = at;
      at += static_cast<std::size_t>(p.counts_in[static_cast<std::size_t>(i * nodes + b)]);
    }
  }
  for (int b = 0; b < nodes; ++b) {
    for (int i = 0; i < locals; ++i) {
      const auto k = static_cast<std::size_t>(i * nodes + b);
      const auto n = static_cast<std::size_t>(p.counts_in[k]);
      if (n > 0) std::memcpy(out, r1_buf + block_start[k], n);
      out += n;
    }
  }
}

// Step 2's receive buffer unpacked: from node a, the blocks of its locals
// 0, 1, ... go to their world ranks' places.
void unpack_step2(const NodeTopology& t, const char* r2_buf, std::span<const int> recv_counts,
                  std::span<const int> recv_displs, char* recv) {
  for (int a = 0; a < t.num_nodes(); ++a) {
    for (int i = 0; i < t.ranks_per_node(); ++i) {
      const auto w = static_cast<std::size_t>(t.world_rank(a, i));
      const auto n = static_cast<std::size_t>(recv_counts[w]);
      if (n > 0) std::memcpy(recv + recv_displs[w], r2_buf, n);
      r2_buf += n;
    }
  }
}

}  // namespace

NodeTopology NodeTopology::discover(const Communicator& world, int ranks_per_node) {
  NodeTopology t;
  const int r = world.rank();
  if (ranks_per_node > 0) {
    check_mpi(MPI_Comm_split(world.mpi_comm(), r / ranks_per_node, r, &t.node_comm_),
              "MPI_Comm_split");
  } else {
    check_mpi(MPI_Comm_split_type(world.mpi_comm(), MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL,
                                  &t.node_comm_),
              "MPI_Comm_split_type");
  }
  int local_size = 1;
  check_mpi(MPI_Comm_rank(t.node_comm_, &t.my_local_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(t.node_comm_, &local_size), "MPI_Comm_size");
  int leader = r;  // a node is named by its lowest world rank
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, t.node_comm_),
            "MPI_Allreduce");

  // Every rank learns (leader, local rank, node size) of every rank.
  const int mine[3] = {leader, t.my_local_, local_size};
  std::vector<int> all(3 * world.usize());
  check_mpi(MPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, world.mpi_comm()),
            "MPI_Allgather");
  std::vector<int> leaders;
  bool uniform = true;
  for (std::size_t w = 0; w < world.usize(); ++w) {
    if (all[3 * w] == static_cast<int>(w)) leaders.push_back(static_cast<int>(w));
    uniform &= all[3 * w + 2] == local_size;
  }
  t.num_nodes_ = static_cast<int>(leaders.size());
  t.ranks_per_node_ = local_size;
  t.my_node_ =
      static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), leader) - leaders.begin());
  t.uniform_ = uniform;
  if (!uniform) return t;  // the caller falls back to the flat exchange

  t.world_of_.assign(world.usize(), -1);
  for (std::size_t w = 0; w < world.usize(); ++w) {
    const auto node =
        std::lower_bound(leaders.begin(), leaders.end(), all[3 * w]) - leaders.begin();
    t.world_of_[static_cast<std::size_t>(node * local_size + all[3 * w + 1])] = static_cast<int>(w);
  }
  // Ranks of one local index, ordered by node: the cross-node step.
  check_mpi(MPI_Comm_split(world.mpi_comm(), t.my_local_, t.my_node_, &t.cross_comm_),
            "MPI_Comm_split");
  return t;
}

NodeTopology::NodeTopology(NodeTopology&& other) noexcept { *this = std::move(other); }

NodeTopology& NodeTopology::operator=(NodeTopology&& other) noexcept {
  if (this != &other) {
    release();
    uniform_ = other.uniform_;
    num_nodes_ = other.num_nodes_;
    ranks_per_node_ = other.ranks_per_node_;
    my_node_ = other.my_node_;
    my_local_ = other.my_local_;
    world_of_ = std::move(other.world_of_);
    node_comm_ = std::exchange(other.node_comm_, MPI_COMM_NULL);
    cross_comm_ = std::exchange(other.cross_comm_, MPI_COMM_NULL);
  }
  return *this;
}

NodeTopology::~NodeTopology() { release(); }

void NodeTopology::release() noexcept {
  // MPI_Comm_free after MPI_Finalize is an error: a topology that outlives
  // MPI (a leak at exit) is left alone.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (cross_comm_ != MPI_COMM_NULL) MPI_Comm_free(&cross_comm_);
  if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
}

void node_alltoallv(const NodeTopology& t, const char* send, std::span<const int> send_counts,
                    std::span<const int> send_displs, char* recv, std::span<const int> recv_counts,
                    std::span<const int> recv_displs, std::vector<char>& scratch) {
  if (!t.uniform()) throw std::logic_error("node_alltoallv needs the same rank count per node");
  TwoStepPlan p;
  p.counts_in = exchange_block_counts(t, send_counts);
  size_steps(t, send_counts, recv_counts, p);
  scratch.resize(p.s1_total + 2 * p.r1_total + p.r2_total);
  char* const s1_buf = scratch.data();
  char* const r1_buf = s1_buf + p.s1_total;
  char* const s2_buf = r1_buf + p.r1_total;
  char* const r2_buf = s2_buf + p.r1_total;

  pack_step1(t, send, send_counts, send_displs, s1_buf);
  check_mpi(MPI_Alltoallv(s1_buf, p.s1.data(), p.s1d.data(), MPI_BYTE, r1_buf, p.r1.data(),
                          p.r1d.data(), MPI_BYTE, t.node_comm()),
            "MPI_Alltoallv");
  regroup_for_step2(t, p, r1_buf, s2_buf);
  check_mpi(MPI_Alltoallv(s2_buf, p.s2.data(), p.s2d.data(), MPI_BYTE, r2_buf, p.r2.data(),
                          p.r2d.data(), MPI_BYTE, t.cross_comm()),
            "MPI_Alltoallv");
  unpack_step2(t, r2_buf, recv_counts, recv_displs, recv);
}

}  // namespace bloomshard::comm
