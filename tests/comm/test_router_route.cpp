// KeyRouter::route: combining and sub-rounds at the rank count the binary was
// started with. Owners run a real first-copy-wins decision (a std::set of
// keys seen); every rank can regenerate every rank's keys, so each checks
// its verdicts against the classic order (source rank, then position) or,
// with sub-rounds, that each key is kept exactly once over all ranks.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"

namespace bloomshard::comm {
namespace {

using Keys = std::vector<std::string>;

std::vector<OutgoingKey> route_refs_of(const Keys& keys) {
  std::vector<OutgoingKey> refs;
  for (const auto& k : keys) refs.push_back({core::hash_key(k), k});
  return refs;
}

// The owner's side: first copy wins, remembered across rounds.
struct FirstCopyOwner {
  std::set<std::string> seen;
  std::uint64_t decided = 0;
  void operator()(std::span<const core::KeyRef> in, std::span<core::Verdict> out) {
    for (std::size_t j = 0; j < in.size(); ++j) {
      out[j] = seen.insert(std::string(in[j].bytes)).second ? core::Verdict::kNew
                                                            : core::Verdict::kDuplicate;
    }
    decided += in.size();
  }
};

std::vector<core::Verdict> route_once(KeyRouter& router, FirstCopyOwner& owner, const Keys& keys,
                                      std::uint64_t budget) {
  const std::vector<OutgoingKey> refs = route_refs_of(keys);
  std::vector<core::Verdict> out(refs.size());
  router.route(refs, [&](auto in, auto v) { owner(in, v); }, out, {.budget = budget});
  return out;
}

// Rank r's batch: a hot key at half of all records (on every rank), keys
// shared by all ranks, the empty key twice, and keys only r has.
Keys hot_batch(int rank, int round) {
  Keys keys;
  const std::string prefix = "round" + std::to_string(round) + "-";
  for (int i = 0; i < 400 + 50 * rank; ++i) {
    if (i % 2 == 0) {
      keys.push_back("{\"id\": \"\"}");
    } else if (i % 7 == 1) {
      keys.push_back(prefix + "shared-" + std::to_string(i % 70));
    } else {
      keys.push_back(prefix + "r" + std::to_string(rank) + "-" + std::to_string(i));
    }
  }
  keys.emplace_back();
  keys.emplace_back();
  return keys;
}

// The verdicts of the classic order: every key of rank 0, then rank 1, ...
// in batch order; the first copy not seen in earlier rounds is new.
std::vector<core::Verdict> classic_verdicts(int rank, int ranks, int round,
                                            std::set<std::string>& seen_before) {
  std::set<std::string> seen = seen_before;
  std::vector<core::Verdict> mine;
  for (int src = 0; src < ranks; ++src) {
    for (const auto& k : hot_batch(src, round)) {
      const bool fresh = seen.insert(k).second;
      if (src == rank) mine.push_back(fresh ? core::Verdict::kNew : core::Verdict::kDuplicate);
    }
  }
  seen_before = std::move(seen);
  return mine;
}

TEST(KeyRouterRoute, CombiningGivesTheClassicVerdicts) {
  Communicator comm;
  KeyRouter router(comm, 64);
  FirstCopyOwner owner;
  std::set<std::string> history;
  for (int round = 0; round < 3; ++round) {
    const Keys mine = hot_batch(comm.rank(), round);
    const std::vector<core::Verdict> got = route_once(router, owner, mine, kDefaultSubroundBudget);
    // From round 1 on the hot key is a duplicate everywhere.
    EXPECT_EQ(got, classic_verdicts(comm.rank(), comm.size(), round, history)) << round;
  }
  const RouterStats& s = router.stats();
  EXPECT_EQ(s.rounds, 3U);
  EXPECT_EQ(s.subrounds, 3U);
  EXPECT_EQ(s.split_rounds, 0U);
  // Per round and rank: the hot key's later copies, the second empty key,
  // and repeats of the shared keys inside the batch were never sent.
  std::uint64_t expected_combined = 0;
  for (int round = 0; round < 3; ++round) {
    const Keys mine = hot_batch(comm.rank(), round);
    expected_combined += mine.size() - std::set<std::string>(mine.begin(), mine.end()).size();
  }
  EXPECT_EQ(s.keys_combined, expected_combined);
  std::uint64_t records = 0;
  for (int round = 0; round < 3; ++round) records += hot_batch(comm.rank(), round).size();
  EXPECT_EQ(s.keys_sent, records - s.keys_combined);  // only first copies travel
}

TEST(KeyRouterRoute, SubRoundsKeepEveryKeyExactlyOnce) {
  Communicator comm;
  for (const std::uint64_t budget : {std::uint64_t{100}, std::uint64_t{512}, std::uint64_t{4096}}) {
    SCOPED_TRACE("budget=" + std::to_string(budget));
    KeyRouter router(comm, 16);
    FirstCopyOwner owner;
    std::set<std::string> kept_before;  // rank 0: keys kept in earlier rounds
    std::vector<std::vector<core::Verdict>> first_run;
    for (int round = 0; round < 2; ++round) {
      const Keys mine = hot_batch(comm.rank(), round);
      const std::vector<core::Verdict> got = route_once(router, owner, mine, budget);
      first_run.push_back(got);
      // Gather the kept keys of all ranks on every rank (small: test sizes).
      std::string kept;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        if (core::is_kept(got[i])) kept += mine[i] + '\n';
      }
      std::multiset<std::string> all_kept;
      for (int src = 0; src < comm.size(); ++src) {
        const std::string from = comm.broadcast(kept, src);
        std::size_t start = 0;
        for (std::size_t nl; (nl = from.find('\n', start)) != std::string::npos; start = nl + 1) {
          all_kept.insert(from.substr(start, nl - start));
        }
      }
      std::set<std::string> distinct;
      for (int src = 0; src < comm.size(); ++src) {
        for (const auto& k : hot_batch(src, round)) {
          if (!kept_before.contains(k)) distinct.insert(k);
        }
      }
      EXPECT_EQ(all_kept.size(), distinct.size()) << "round " << round;
      for (const auto& k : distinct) EXPECT_EQ(all_kept.count(k), 1U) << k;
      kept_before.insert(distinct.begin(), distinct.end());
    }
    EXPECT_GT(router.stats().split_rounds, 0U);
    EXPECT_GT(router.stats().subrounds, router.stats().rounds);
    // Determinism: a new router and owner give the same verdicts again.
    KeyRouter again(comm, 16);
    FirstCopyOwner fresh_owner;
    for (int round = 0; round < 2; ++round) {
      EXPECT_EQ(route_once(again, fresh_owner, hot_batch(comm.rank(), round), budget),
                first_run[static_cast<std::size_t>(round)]);
    }
  }
}

TEST(KeyRouterRoute, SubRoundsRespectTheBudgetUpToOneKeyPerSender) {
  Communicator comm;
  KeyRouter router(comm, 16);
  FirstCopyOwner owner;
  constexpr std::uint64_t kBudget = 1000;
  Keys mine;
  for (int i = 0; i < 300; ++i)
    mine.push_back("k" + std::to_string(comm.rank()) + "-" + std::to_string(i));
  (void)route_once(router, owner, mine, kBudget);
  const std::uint64_t max_key_wire = kKeyHeaderBytes + 8;
  EXPECT_LE(router.stats().max_payload_bytes_received, kBudget + comm.usize() * max_key_wire);
  EXPECT_GT(router.stats().subrounds, 1U);
}

TEST(KeyRouterRoute, KeyLimitCutsSubRoundsAndAnnouncesEachOne) {
  Communicator comm;
  KeyRouter router(comm, 16);
  FirstCopyOwner owner;
  Keys mine;
  for (int i = 0; i < 500; ++i)
    mine.push_back("k" + std::to_string(comm.rank()) + "-" + std::to_string(i));
  const std::vector<OutgoingKey> refs = route_refs_of(mine);
  std::vector<core::Verdict> out(refs.size());
  std::vector<std::uint64_t> announced;
  std::uint64_t decided_before = 0;
  std::uint64_t largest_decided = 0;  // this rank's share of one sub-round
  constexpr std::uint64_t kMaxKeys = 300;
  router.route(refs,
               [&](auto in, auto v) {
                 owner(in, v);
                 largest_decided = std::max<std::uint64_t>(largest_decided, in.size());
               },
               out, {.max_keys = kMaxKeys, .before_subround = [&](std::uint64_t n) {
                       // Everything announced so far has been decided, nothing more.
                       EXPECT_EQ(comm.allreduce_sum(owner.decided), decided_before);
                       announced.push_back(n);
                       decided_before += n;
                     }});
  const std::uint64_t all_keys = 500 * comm.usize();
  EXPECT_EQ(announced.size(), router.stats().subrounds);
  EXPECT_EQ(announced.size(), std::max<std::uint64_t>(1, (all_keys + kMaxKeys - 1) / kMaxKeys));
  std::uint64_t sum = 0;
  for (const std::uint64_t n : announced) {
    sum += n;
    EXPECT_LE(n, kMaxKeys + comm.usize() * comm.usize());  // rounding: one key per pair
  }
  EXPECT_EQ(sum, all_keys);
  EXPECT_EQ(comm.allreduce_sum(owner.decided), all_keys);
  for (const core::Verdict v : out) EXPECT_EQ(v, core::Verdict::kNew);
}

TEST(KeyRouterRoute, EmptyBatchesAndBadArguments) {
  Communicator comm;
  KeyRouter router(comm, 8);
  FirstCopyOwner owner;
  EXPECT_TRUE(route_once(router, owner, {}, 1).empty());
  EXPECT_EQ(router.stats().subrounds, 1U);
  std::vector<core::Verdict> wrong_size(3);
  const std::vector<OutgoingKey> none;
  EXPECT_THROW(router.route(
                   none, [](auto, auto) {}, wrong_size),
               std::invalid_argument);
  std::vector<core::Verdict> out;
  EXPECT_THROW(router.route(none, [](auto, auto) {}, out, {.budget = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::comm
