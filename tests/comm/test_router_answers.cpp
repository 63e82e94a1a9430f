// KeyRouter::route with answers (RouteOptions::answer_bytes): each key's
// answer comes back beside its verdict, in the sender's order, through
// sub-rounds and key groups; a later copy combined at the sender gets
// zeros; without answers the router moves no answer bytes at all (filter
// mode's wire cost); bad arguments are refused before any communication.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"

namespace bloomshard::comm {
namespace {

constexpr std::size_t kWidth = 12;

// The answer an owner gives `key`: its hash's low word, the owner's rank
// and whether the key was new there.
std::vector<std::uint8_t> expected_answer(const core::KeyRef& key, std::uint32_t owner,
                                          bool fresh) {
  std::vector<std::uint8_t> a(kWidth);
  std::memcpy(a.data(), &key.hash.lo, 8);
  const std::uint32_t tail = owner * 2 + (fresh ? 1U : 0U);
  std::memcpy(a.data() + 8, &tail, 4);
  return a;
}

// Rank r's batch: keys of its own and keys every rank has, each shared key
// ten times and one own key twice (later copies combine at the sender).
std::vector<std::string> answer_batch_of(int rank) {
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    keys.push_back(i % 3 == 0 ? "shared-" + std::to_string(i % 30)
                              : "r" + std::to_string(rank) + "-" + std::to_string(i));
  }
  keys.push_back("r" + std::to_string(rank) + "-1");  // a later copy of its own key
  return keys;
}

TEST(KeyRouterAnswers, EachKeyGetsItsOwnersAnswerInTheSendersOrder) {
  Communicator comm;
  for (const std::uint64_t budget : {std::uint64_t{256}, std::uint64_t{1} << 20}) {
    SCOPED_TRACE("budget=" + std::to_string(budget));
    KeyRouter router(comm, 16);
    std::set<std::string> seen;
    std::vector<std::uint8_t> pending;  // the last decision's answers
    const auto decide = [&](std::span<const core::KeyRef> in, std::span<core::Verdict> out) {
      pending.clear();
      for (std::size_t j = 0; j < in.size(); ++j) {
        const bool fresh = seen.insert(std::string(in[j].bytes)).second;
        out[j] = fresh ? core::Verdict::kNew : core::Verdict::kDuplicate;
        const auto a = expected_answer(in[j], comm.urank(), fresh);
        pending.insert(pending.end(), a.begin(), a.end());
      }
    };
    const std::vector<std::string> keys = answer_batch_of(comm.rank());
    std::vector<OutgoingKey> refs;
    for (const auto& k : keys) refs.push_back({core::hash_key(k), k});
    std::vector<core::Verdict> verdicts(refs.size());
    std::vector<std::uint8_t> answers(refs.size() * kWidth, 0xAB);
    router.route(refs, decide, verdicts,
                 {.budget = budget,
                  .answer_bytes = kWidth,
                  .answer =
                      [&](std::span<std::uint8_t> out) {
                        ASSERT_EQ(out.size(), pending.size());
                        std::copy(pending.begin(), pending.end(), out.begin());
                      },
                  .answers = answers});
    const std::vector<std::uint8_t> zeros(kWidth, 0);
    std::set<std::string> earlier;  // of this batch: later copies combine at the sender
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const std::vector<std::uint8_t> got(answers.begin() + static_cast<long>(i * kWidth),
                                          answers.begin() + static_cast<long>((i + 1) * kWidth));
      if (!earlier.insert(keys[i]).second) {
        EXPECT_EQ(got, zeros) << keys[i];
        continue;
      }
      EXPECT_EQ(got,
                expected_answer(refs[i], router.owner_of(refs[i].hash), core::is_kept(verdicts[i])))
          << keys[i];
    }
    const std::uint64_t decided_here = router.stats().keys_received;
    EXPECT_EQ(router.stats().answer_bytes_sent, decided_here * kWidth);
    EXPECT_EQ(router.stats().answer_bytes_received, earlier.size() * kWidth);
    if (budget < 1000 && comm.size() > 1) {
      EXPECT_GT(router.stats().split_rounds, 0U);
    }
  }
}

TEST(KeyRouterAnswers, WithoutAnswersNoAnswerBytesMove) {
  Communicator comm;
  KeyRouter router(comm, 16);
  const std::vector<std::string> keys = answer_batch_of(comm.rank());
  std::vector<OutgoingKey> refs;
  for (const auto& k : keys) refs.push_back({core::hash_key(k), k});
  std::vector<core::Verdict> verdicts(refs.size());
  router.route(
      refs,
      [](std::span<const core::KeyRef>, std::span<core::Verdict> out) {
        std::fill(out.begin(), out.end(), core::Verdict::kNew);
      },
      verdicts);
  EXPECT_EQ(router.stats().answer_bytes_sent, 0U);
  EXPECT_EQ(router.stats().answer_bytes_received, 0U);
  EXPECT_GT(router.stats().verdict_bytes_received, 0U);
}

TEST(KeyRouterAnswers, BadAnswerArgumentsAreRefusedBeforeAnyExchange) {
  Communicator comm;
  KeyRouter router(comm, 8);
  const std::vector<OutgoingKey> one = {{core::hash_key("k"), "k"}};
  std::vector<core::Verdict> out(1);
  std::vector<std::uint8_t> short_answers(kWidth - 1);
  const auto decide = [](auto, auto) {};
  EXPECT_THROW(router.route(one, decide, out,
                            {.answer_bytes = kWidth,
                             .answer = [](std::span<std::uint8_t>) {},
                             .answers = short_answers}),
               std::invalid_argument);
  std::vector<std::uint8_t> answers(kWidth);
  EXPECT_THROW(router.route(one, decide, out, {.answer_bytes = kWidth, .answers = answers}),
               std::invalid_argument);  // no answer function
  EXPECT_EQ(router.stats().exchanges, 0U);
}

}  // namespace
}  // namespace bloomshard::comm
