#include "bloomshard/comm/node_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "bloomshard/comm/mpi_error.hpp"

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
  const int nodes = t.num_nodes();
  const int locals = t.ranks_per_node();
  const auto un = static_cast<std::size_t>(nodes);
  const auto ul = static_cast<std::size_t>(locals);
  const auto sc = [&](int node, int local) {
    return send_counts[static_cast<std::size_t>(t.world_rank(node, local))];
  };

  // Step 1 counts: for local peer j, my block sizes for (b, j), b = 0..N-1.
  std::vector<int> counts_out(ul * un);
  for (int j = 0; j < locals; ++j) {
    for (int b = 0; b < nodes; ++b) counts_out[static_cast<std::size_t>(j * nodes + b)] = sc(b, j);
  }
  std::vector<int> counts_in(ul * un);  // [i * N + b]: local i's block for (b, me)
  check_mpi(MPI_Alltoall(counts_out.data(), nodes, MPI_INT, counts_in.data(), nodes, MPI_INT,
                         t.node_comm()),
            "MPI_Alltoall");

  // Sizes of the four buffers: step-1 send/recv, step-2 send/recv.
  std::vector<int> s1(ul, 0), r1(ul, 0), s2(un, 0), r2(un, 0);
  std::uint64_t s1_total = 0, r1_total = 0, r2_total = 0;
  for (int j = 0; j < locals; ++j) {
    std::uint64_t n = 0;
    for (int b = 0; b < nodes; ++b) n += static_cast<std::uint64_t>(sc(b, j));
    s1[static_cast<std::size_t>(j)] = to_int_count(n, "a step-1 block");
    s1_total += n;
  }
  std::vector<std::uint64_t> s2_wide(un, 0);
  for (int i = 0; i < locals; ++i) {
    std::uint64_t n = 0;
    for (int b = 0; b < nodes; ++b) {
      const auto c = static_cast<std::uint64_t>(counts_in[static_cast<std::size_t>(i * nodes + b)]);
      n += c;
      s2_wide[static_cast<std::size_t>(b)] += c;
    }
    r1[static_cast<std::size_t>(i)] = to_int_count(n, "a step-1 block");
    r1_total += n;
  }
  for (int b = 0; b < nodes; ++b) {
    s2[static_cast<std::size_t>(b)] =
        to_int_count(s2_wide[static_cast<std::size_t>(b)], "a step-2 block");
  }
  for (int a = 0; a < nodes; ++a) {
    std::uint64_t n = 0;
    for (int i = 0; i < locals; ++i) {
      n += static_cast<std::uint64_t>(recv_counts[static_cast<std::size_t>(t.world_rank(a, i))]);
    }
    r2[static_cast<std::size_t>(a)] = to_int_count(n, "a step-2 block");
    r2_total += n;
  }
  const std::vector<int> s1d = exclusive_prefix(s1), r1d = exclusive_prefix(r1);
  const std::vector<int> s2d = exclusive_prefix(s2), r2d = exclusive_prefix(r2);
  to_int_count(s1_total, "a step-1 buffer");
  to_int_count(r1_total, "a step-1 buffer");
  to_int_count(r1_total, "a step-2 buffer");  // step 2 sends what step 1 received
  to_int_count(r2_total, "a step-2 buffer");
  scratch.resize(s1_total + 2 * r1_total + r2_total);
  char* const s1_buf = scratch.data();
  char* const r1_buf = s1_buf + s1_total;
  char* const s2_buf = r1_buf + r1_total;
  char* const r2_buf = s2_buf + r1_total;

  // Step 1: pack for local peer j my blocks for (0, j), (1, j), ...
  char* p = s1_buf;
  for (int j = 0; j < locals; ++j) {
    for (int b = 0; b < nodes; ++b) {
      const int w = t.world_rank(b, j);
      const auto n = static_cast<std::size_t>(send_counts[static_cast<std::size_t>(w)]);
      if (n > 0) std::memcpy(p, send + send_displs[static_cast<std::size_t>(w)], n);
      p += n;
    }
  }
  check_mpi(MPI_Alltoallv(s1_buf, s1.data(), s1d.data(), MPI_BYTE, r1_buf, r1.data(), r1d.data(),
                          MPI_BYTE, t.node_comm()),
            "MPI_Alltoallv");

  // Step 2: for node b, the blocks of local 0, 1, ... for (b, me), in order.
  std::vector<std::size_t> block_start(ul * un);  // [i * N + b] inside r1_buf
  for (int i = 0; i < locals; ++i) {
    std::size_t at = static_cast<std::size_t>(r1d[static_cast<std::size_t>(i)]);
    for (int b = 0; b < nodes; ++b) {
      block_start[static_cast<std::size_t>(i * nodes + b)] = at;
      at += static_cast<std::size_t>(counts_in[static_cast<std::size_t>(i * nodes + b)]);
    }
  }
  p = s2_buf;
  for (int b = 0; b < nodes; ++b) {
    for (int i = 0; i < locals; ++i) {
      const auto k = static_cast<std::size_t>(i * nodes + b);
      const auto n = static_cast<std::size_t>(counts_in[k]);
      if (n > 0) std::memcpy(p, r1_buf + block_start[k], n);
      p += n;
    }
  }
  check_mpi(MPI_Alltoallv(s2_buf, s2.data(), s2d.data(), MPI_BYTE, r2_buf, r2.data(), r2d.data(),
                          MPI_BYTE, t.cross_comm()),
            "MPI_Alltoallv");

  // Unpack: from node a, the blocks of its locals 0, 1, ... go to their
  // world ranks' places.
  p = r2_buf;
  for (int a = 0; a < nodes; ++a) {
    for (int i = 0; i < locals; ++i) {
      const auto w = static_cast<std::size_t>(t.world_rank(a, i));
      const auto n = static_cast<std::size_t>(recv_counts[w]);
      if (n > 0) std::memcpy(recv + recv_displs[w], p, n);
      p += n;
    }
  }
}

}  // namespace bloomshard::comm
