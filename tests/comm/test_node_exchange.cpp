// The node-aware all-to-all against MPI_Alltoallv, and the router on top of
// it against the flat router, at the rank count the binary was started
// with. Several "nodes" on one machine come from groups of consecutive
// ranks (NodeTopology::discover's ranks_per_node), the real node split from
// MPI_COMM_TYPE_SHARED.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "comm/communicator.hpp"
#include "comm/node_exchange.hpp"
#include "comm/router.hpp"

namespace bloomshard::comm {
namespace {

// Node sizes to try: every divisor of R (uniform), plus 0 (the real split).
std::vector<int> node_sizes(int ranks) {
  std::vector<int> sizes = {0};
  for (int k = 1; k <= ranks; ++k) {
    if (ranks % k == 0) sizes.push_back(k);
  }
  return sizes;
}

// Bytes rank `from` sends rank `to` in trial `trial`: a deterministic
// pattern both sides can recompute; some pairs send nothing.
std::string block(int from, int to, int trial) {
  std::mt19937 rng(static_cast<unsigned>(1000 * trial + 37 * from + to));
  const int n = (from + to + trial) % 4 == 0 ? 0 : static_cast<int>(rng() % 300);
  std::string s(static_cast<std::size_t>(n), '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(NodeExchange, EqualsMpiAlltoallvForEveryNodeSize) {
  Communicator world;
  const int R = world.size();
  for (const int k : node_sizes(R)) {
    SCOPED_TRACE("ranks per node " + std::to_string(k));
    const NodeTopology t = NodeTopology::discover(world, k);
    ASSERT_TRUE(t.uniform());
    if (k > 0) {
      EXPECT_EQ(t.ranks_per_node(), k);
      EXPECT_EQ(t.num_nodes(), R / k);
    }
    EXPECT_EQ(t.world_rank(t.my_node(), t.my_local()), world.rank());
    std::vector<char> scratch;
    for (int trial = 0; trial < 3; ++trial) {
      std::string send;
      std::vector<int> sc(static_cast<std::size_t>(R)), rc(sc.size());
      for (int to = 0; to < R; ++to) {
        const std::string b = block(world.rank(), to, trial);
        sc[static_cast<std::size_t>(to)] = static_cast<int>(b.size());
        send += b;
      }
      for (int from = 0; from < R; ++from) {
        rc[static_cast<std::size_t>(from)] =
            static_cast<int>(block(from, world.rank(), trial).size());
      }
      std::vector<int> sd(sc.size()), rd(rc.size());
      std::exclusive_scan(sc.begin(), sc.end(), sd.begin(), 0);
      std::exclusive_scan(rc.begin(), rc.end(), rd.begin(), 0);
      const auto total = static_cast<std::size_t>(rd.back() + rc.back());
      std::string flat(total, '\0'), node(total, '\1');
      ASSERT_EQ(MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, flat.data(), rc.data(),
                              rd.data(), MPI_BYTE, world.mpi_comm()),
                MPI_SUCCESS);
      node_alltoallv(t, send.data(), sc, sd, node.data(), rc, rd, scratch);
      EXPECT_EQ(node, flat) << "trial " << trial;
    }
  }
}

TEST(NodeExchange, UnevenNodesAreReportedAndTheRouterStaysFlat) {
  Communicator world;
  if (world.size() < 3 || world.size() % 2 == 0) GTEST_SKIP() << "needs an odd rank count >= 3";
  const NodeTopology t = NodeTopology::discover(world, 2);  // nodes of 2, 2, ..., 1
  EXPECT_FALSE(t.uniform());
  KeyRouter router(world, 64, {}, ExchangeMode::kNode, 2);
  EXPECT_FALSE(router.node_aware());
}

std::vector<std::string> batch_of(int rank) {
  std::vector<std::string> keys;
  for (int i = 0; i < 700; ++i) {
    keys.push_back(i % 3 == 0 ? "hot" : "k" + std::to_string((rank * 7919 + i * 31) % 900));
  }
  return keys;
}

TEST(NodeExchange, RouterGivesTheFlatVerdictsAndKeys) {
  Communicator world;
  for (const int k : node_sizes(world.size())) {
    SCOPED_TRACE("ranks per node " + std::to_string(k));
    KeyRouter flat(world, 32);
    KeyRouter node(world, 32, {}, ExchangeMode::kNode, k);
    EXPECT_TRUE(node.node_aware());
    const std::vector<std::string> keys = batch_of(world.rank());
    std::vector<OutgoingKey> refs;
    for (const auto& s : keys) refs.push_back({core::hash_key(s), s});
    for (const std::uint64_t budget : {std::uint64_t{1} << 20, std::uint64_t{2000}}) {
      std::vector<core::Verdict> a(refs.size()), b(refs.size());
      std::vector<std::string> seen_flat, seen_node;
      const auto decide_into = [](std::vector<std::string>& seen) {
        return [&seen](std::span<const core::KeyRef> in, std::span<core::Verdict> out) {
          for (std::size_t j = 0; j < in.size(); ++j) {
            seen.emplace_back(in[j].bytes);
            out[j] = static_cast<core::Verdict>(in[j].hash.lo % 3);
          }
        };
      };
      flat.route(refs, decide_into(seen_flat), a, {.budget = budget});
      node.route(refs, decide_into(seen_node), b, {.budget = budget});
      EXPECT_EQ(a, b) << "budget " << budget;
      EXPECT_EQ(seen_flat, seen_node) << "owners saw other keys or another order";
    }
  }
}

TEST(NodeExchange, ModeNames) {
  EXPECT_EQ(parse_exchange_mode("flat"), ExchangeMode::kFlat);
  EXPECT_EQ(parse_exchange_mode("node"), ExchangeMode::kNode);
  EXPECT_EQ(parse_exchange_mode("auto"), ExchangeMode::kAuto);
  EXPECT_FALSE(parse_exchange_mode("tree"));
}

}  // namespace
}  // namespace bloomshard::comm
