// KeyRouter round trips at the rank count the binary was started with.
// Every rank can regenerate every other rank's keys, so each owner computes
// exactly which keys it must receive and in which order, and each sender
// checks that the verdicts come back to the right positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"

namespace bloomshard::comm {
namespace {

using KeysOf = std::function<std::vector<std::string>(int rank)>;

// Verdict an owner gives a key: a function of the hash only, so the sender
// can predict it; three values make a misplaced verdict show up quickly.
core::Verdict verdict_for(const core::KeyHash& h) { return static_cast<core::Verdict>(h.lo % 3); }

std::vector<OutgoingKey> refs_of(const std::vector<std::string>& keys) {
  std::vector<OutgoingKey> refs;
  refs.reserve(keys.size());
  for (const auto& k : keys) refs.push_back({core::hash_key(k), k});
  return refs;
}

std::uint64_t payload_bytes(const std::vector<std::string>& keys) {
  std::uint64_t total = 0;
  for (const auto& k : keys) total += kKeyHeaderBytes + k.size();
  return total;
}

// One full round (exchange + verdicts back) with every check; returns the
// number of keys this rank received.
std::size_t check_round(KeyRouter& router, const KeysOf& keys_of, RoutedBatch& batch) {
  const Communicator& comm = router.comm();
  const std::vector<std::string> mine = keys_of(comm.rank());
  const std::vector<OutgoingKey> refs = refs_of(mine);
  router.exchange(refs, batch);

  // What this rank must receive: (source ascending, sender's order).
  std::vector<std::string> expected;
  std::vector<int> expected_per_source(comm.usize(), 0);
  for (int src = 0; src < comm.size(); ++src) {
    for (const auto& k : keys_of(src)) {
      if (router.owner_of(core::hash_key(k)) == comm.urank()) {
        expected.push_back(k);
        ++expected_per_source[static_cast<std::size_t>(src)];
      }
    }
  }
  EXPECT_EQ(batch.size(), expected.size());
  EXPECT_EQ(batch.keys_sent(), mine.size());
  EXPECT_TRUE(std::equal(expected_per_source.begin(), expected_per_source.end(),
                         batch.keys_per_source().begin(), batch.keys_per_source().end()));
  const core::SliceRange owned =
      core::slices_of_rank(comm.urank(), comm.usize(), router.num_slices());
  const std::size_t n = std::min(batch.size(), expected.size());
  std::size_t mismatches = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const core::KeyRef& got = batch.keys()[j];
    if (got.bytes != expected[j] || !(got.hash == core::hash_key(expected[j])) ||
        !owned.contains(core::slice_of(got.hash, router.num_slices()))) {
      ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0U) << "received keys differ from the expected (source, position) order";

  std::vector<core::Verdict> verdicts;
  verdicts.reserve(batch.size());
  for (const auto& k : batch.keys()) verdicts.push_back(verdict_for(k.hash));
  const std::vector<core::Verdict> back = router.return_verdicts(batch, verdicts);
  EXPECT_EQ(back.size(), refs.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < std::min(back.size(), refs.size()); ++i) {
    if (back[i] != verdict_for(refs[i].hash)) ++wrong;
  }
  EXPECT_EQ(wrong, 0U) << "verdicts came back to the wrong positions";
  return batch.size();
}

std::size_t check_round(KeyRouter& router, const KeysOf& keys_of) {
  RoutedBatch batch;
  return check_round(router, keys_of, batch);
}

// Distinct keys per rank, plus keys every rank shares (the same key from
// several sources must arrive once per source, in source order), plus the
// empty key and a key with NUL bytes on rank 0.
std::vector<std::string> mixed_keys(int rank) {
  std::vector<std::string> keys;
  const int n = 200 + 37 * rank;
  for (int i = 0; i < n; ++i) {
    if (i % 5 == 0) {
      keys.push_back("shared-" + std::to_string(i / 5));
    } else {
      keys.push_back("r" + std::to_string(rank) + "-key-" + std::to_string(i));
    }
  }
  if (rank == 0) {
    keys.emplace_back();
    keys.push_back(std::string("nul\0inside", 10));
  }
  return keys;
}

TEST(KeyRouter, RoundTripAtSeveralSliceCounts) {
  Communicator comm;
  for (std::uint32_t slices : {comm.usize(), comm.usize() + 6, 64U, 4096U}) {
    SCOPED_TRACE("slices=" + std::to_string(slices));
    KeyRouter router(comm, slices);
    const std::size_t received = check_round(router, mixed_keys);
    std::uint64_t total_sent = 0;
    for (int r = 0; r < comm.size(); ++r) total_sent += mixed_keys(r).size();
    EXPECT_EQ(comm.allreduce_sum(std::uint64_t{received}), total_sent);
  }
}

TEST(KeyRouter, StatsCountKeysAndBytes) {
  Communicator comm;
  KeyRouter router(comm, 256);
  check_round(router, mixed_keys);
  check_round(router, mixed_keys);
  const RouterStats& s = router.stats();
  const std::vector<std::string> mine = mixed_keys(comm.rank());
  EXPECT_EQ(s.exchanges, 2U);
  EXPECT_EQ(s.keys_sent, 2 * mine.size());
  EXPECT_EQ(s.payload_bytes_sent, 2 * payload_bytes(mine));
  EXPECT_LE(s.payload_bytes_sent_remote, s.payload_bytes_sent);
  if (comm.size() == 1) {
    EXPECT_EQ(s.payload_bytes_sent_remote, 0U);
  }
  EXPECT_EQ(s.verdict_bytes_received, s.keys_sent);
  EXPECT_EQ(s.verdict_bytes_sent, s.keys_received);
  EXPECT_LE(s.max_payload_bytes_received, s.payload_bytes_received);
  const std::vector<std::uint64_t> local = {s.keys_sent, s.keys_received, s.payload_bytes_sent,
                                            s.payload_bytes_received};
  const std::vector<std::uint64_t> total = comm.allreduce_sum(local);
  EXPECT_EQ(total[0], total[1]);
  EXPECT_EQ(total[2], total[3]);
}

TEST(KeyRouter, RanksWithoutKeys) {
  Communicator comm;
  KeyRouter router(comm, 128);
  check_round(router, [](int rank) {
    return rank % 2 == 1 ? std::vector<std::string>{} : mixed_keys(rank);
  });
  // Only the last rank has keys.
  const int last = comm.size() - 1;
  check_round(router, [last](int rank) {
    return rank == last ? mixed_keys(rank) : std::vector<std::string>{};
  });
  // Nobody has keys.
  RoutedBatch batch;
  router.exchange({}, batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.keys_sent(), 0U);
  EXPECT_TRUE(router.return_verdicts(batch, {}).empty());
}

TEST(KeyRouter, SkewedRoundAllKeysToRankZero) {
  Communicator comm;
  KeyRouter router(comm, 4096);
  const auto to_rank_zero = [&router](int rank) {
    std::vector<std::string> keys;
    for (int i = 0; keys.size() < 300; ++i) {
      std::string k = "skew-" + std::to_string(rank) + "-" + std::to_string(i);
      if (router.owner_of(core::hash_key(k)) == 0) keys.push_back(std::move(k));
    }
    return keys;
  };
  const std::size_t received = check_round(router, to_rank_zero);
  EXPECT_EQ(received, comm.rank() == 0 ? 300U * comm.usize() : 0U);
}

TEST(KeyRouter, MaxSizeKeysMixedWithEmptyKeys) {
  Communicator comm;
  KeyRouter router(comm, 64);
  const auto big_keys = [](int rank) {
    std::vector<std::string> keys;
    for (int i = 0; i < 24; ++i) {
      if (i % 3 == 1) {
        keys.emplace_back();
        continue;
      }
      std::string k(64 * 1024, '\0');
      for (std::size_t b = 0; b < k.size(); ++b) {
        k[b] = static_cast<char>(
            (b * 131 + static_cast<std::size_t>(i) * 7 + static_cast<std::size_t>(rank)) & 0xff);
      }
      keys.push_back(std::move(k));
    }
    return keys;
  };
  check_round(router, big_keys);
  EXPECT_EQ(router.stats().payload_bytes_sent, payload_bytes(big_keys(comm.rank())));
}

TEST(KeyRouter, ReusedBatchAcrossRoundsOfDifferentSizes) {
  Communicator comm;
  KeyRouter router(comm, 512);
  RoutedBatch batch;
  check_round(router, mixed_keys, batch);
  check_round(
      router, [](int rank) { return std::vector<std::string>{"one-" + std::to_string(rank)}; },
      batch);
  check_round(router, mixed_keys, batch);
}

TEST(KeyRouter, RanksWithDifferentRoundCountsAgreeOnDone) {
  Communicator comm;
  KeyRouter router(comm, 1024);
  const auto rounds_of = [](int rank) { return 1 + (3 * rank) % 5; };
  int max_rounds = 0;
  for (int r = 0; r < comm.size(); ++r) max_rounds = std::max(max_rounds, rounds_of(r));

  int round = 0;
  std::uint64_t received = 0;
  while (!router.all_done(round >= rounds_of(comm.rank()))) {
    received += check_round(router, [round, &rounds_of](int rank) {
      std::vector<std::string> keys;
      if (round >= rounds_of(rank)) return keys;  // out of input: owner only
      for (int i = 0; i < 50 + 10 * round; ++i) {
        keys.push_back("mr-" + std::to_string(rank) + "-" + std::to_string(round) + "-" +
                       std::to_string(i));
      }
      return keys;
    });
    ++round;
    ASSERT_LE(round, max_rounds) << "all_done never agreed";
  }
  EXPECT_EQ(round, max_rounds);
  std::uint64_t expected_total = 0;
  for (int r = 0; r < comm.size(); ++r) {
    for (int k = 0; k < rounds_of(r); ++k)
      expected_total += static_cast<std::uint64_t>(50 + 10 * k);
  }
  EXPECT_EQ(comm.allreduce_sum(received), expected_total);
}

TEST(KeyRouter, OversizedRoundThrowsOnEveryRankAndRouterStaysUsable) {
  Communicator comm;
  KeyRouter router(comm, 64, RouterLimits{4096});
  std::vector<std::string> keys;
  // With several ranks each sender stays under the limit (~3.1 KB) and only
  // rank 0's receive side is over; a single rank is over as a sender.
  const std::size_t count = comm.size() == 1 ? 200 : 100;
  for (int i = 0; keys.size() < count; ++i) {
    std::string k = "limit-" + std::to_string(comm.rank()) + "-" + std::to_string(i);
    if (router.owner_of(core::hash_key(k)) == 0) keys.push_back(std::move(k));
  }
  const std::vector<OutgoingKey> refs = refs_of(keys);
  ASSERT_EQ(comm.size() > 1, payload_bytes(keys) <= 4096);
  try {
    (void)router.exchange(refs);
    ADD_FAILURE() << "no RouterLimitError";
  } catch (const RouterLimitError& e) {
    EXPECT_NE(std::string(e.what()).find("--batch-bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(router.stats().exchanges, 0U);
  check_round(router,
              [](int rank) { return std::vector<std::string>{"ok-" + std::to_string(rank)}; });
  EXPECT_EQ(router.stats().exchanges, 1U);
}

TEST(KeyRouter, RejectsBadGeometryAndVerdictCounts) {
  Communicator comm;
  EXPECT_THROW(KeyRouter(comm, 0), std::invalid_argument);
  if (comm.size() > 1) {
    EXPECT_THROW(KeyRouter(comm, comm.usize() - 1), std::invalid_argument);
  }
  EXPECT_THROW(KeyRouter(comm, core::kMaxSlices + 1), std::invalid_argument);

  KeyRouter router(comm, 64);
  const std::vector<std::string> keys = mixed_keys(comm.rank());
  const RoutedBatch batch = router.exchange(refs_of(keys));
  // The size check fails locally before any communication, on every rank.
  std::vector<core::Verdict> too_many(batch.size() + 1, core::Verdict::kNew);
  EXPECT_THROW((void)router.return_verdicts(batch, too_many), std::invalid_argument);
  std::vector<core::Verdict> ok(batch.size(), core::Verdict::kDuplicate);
  const auto back = router.return_verdicts(batch, ok);
  EXPECT_EQ(back.size(), keys.size());
  EXPECT_TRUE(std::all_of(back.begin(), back.end(),
                          [](core::Verdict v) { return v == core::Verdict::kDuplicate; }));
}

}  // namespace
}  // namespace bloomshard::comm
