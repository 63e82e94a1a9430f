// KeyRouter::route with RouteOptions::key_groups (the band keys of one
// --unit minhash record): a group's keys travel in the same sub-round to
// every owner, so owners that decide first copy wins agree on which of two
// groups came first. Every rank sends the same shared groups (B keys each,
// the keys of group g equal on all ranks) between fillers of its own, at
// densities that differ by rank so the sub-round cuts fall at different
// places; exactly one rank must see all keys of shared group g new. Cut per
// destination instead, one rank's group can straddle a cut at some owners
// only, and then no rank keeps it (each was first on some key).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"

namespace bloomshard::comm {
namespace {

constexpr std::size_t kBands = 14;
constexpr int kSharedGroups = 120;

struct Stream {
  std::vector<std::string> keys;
  std::vector<std::uint32_t> groups;
  std::vector<int> shared_group_of;  // per group: its shared number, or -1
};

void add_group(Stream& s, const std::string& prefix, int shared) {
  const auto group = static_cast<std::uint32_t>(s.shared_group_of.size());
  for (std::size_t b = 0; b < kBands; ++b) {
    s.keys.push_back(prefix + "-b" + std::to_string(b));
    s.groups.push_back(group);
  }
  s.shared_group_of.push_back(shared);
}

Stream stream_of(int rank) {
  Stream s;
  for (int g = 0; g < kSharedGroups; ++g) {
    for (int f = 0; f < (g * (rank + 1)) % 4; ++f) {
      add_group(s, "r" + std::to_string(rank) + "-g" + std::to_string(g) + "-f" + std::to_string(f),
                -1);
    }
    add_group(s, "shared-g" + std::to_string(g), g);
  }
  return s;
}

TEST(KeyRouterKeyGroups, EveryOwnerRanksGroupsAlike) {
  Communicator comm;
  KeyRouter router(comm, 64);
  const Stream s = stream_of(comm.rank());
  std::vector<OutgoingKey> refs;
  for (const std::string& k : s.keys) refs.push_back({core::hash_key(k), k});
  std::set<std::string> seen;  // the owner: first copy wins
  std::vector<core::Verdict> out(refs.size());
  router.route(refs,
               [&](std::span<const core::KeyRef> in, std::span<core::Verdict> v) {
                 for (std::size_t j = 0; j < in.size(); ++j) {
                   v[j] = seen.insert(std::string(in[j].bytes)).second ? core::Verdict::kNew
                                                                       : core::Verdict::kDuplicate;
                 }
               },
               out, {.budget = 4096, .key_groups = s.groups});
  EXPECT_GT(router.stats().subrounds, 4U);
  std::vector<std::uint64_t> kept_by(kSharedGroups, 0);
  for (std::size_t i = 0; i < out.size(); i += kBands) {
    bool all_new = true;
    for (std::size_t b = 0; b < kBands; ++b) all_new = all_new && core::is_kept(out[i + b]);
    const int shared = s.shared_group_of[s.groups[i]];
    if (shared >= 0) {
      kept_by[static_cast<std::size_t>(shared)] += all_new ? 1 : 0;
    } else {
      EXPECT_TRUE(all_new) << "a group of keys no other rank has";
    }
  }
  kept_by = comm.allreduce_sum(kept_by);
  for (int g = 0; g < kSharedGroups; ++g) {
    EXPECT_EQ(kept_by[static_cast<std::size_t>(g)], 1U) << "shared group " << g;
  }
}

TEST(KeyRouterKeyGroups, GroupsMustMatchTheKeys) {
  Communicator comm;
  KeyRouter router(comm, 8);
  const std::vector<OutgoingKey> none;
  std::vector<core::Verdict> out;
  const std::vector<std::uint32_t> one_group{0};
  EXPECT_THROW(router.route(none, [](auto, auto) {}, out, {.key_groups = one_group}),
               std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::comm
