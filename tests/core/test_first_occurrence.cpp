#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "core/order/first_occurrence.hpp"

namespace bloomshard::core {
namespace {

std::vector<KeyRef> refs_of(const std::vector<std::string>& keys) {
  std::vector<KeyRef> refs;
  for (const std::string& k : keys) refs.push_back({hash_key(k), k});
  return refs;
}

TEST(FirstOccurrence, MatchesAMapOfFirstPositions) {
  std::mt19937_64 rng(7);
  std::vector<std::string> keys;
  for (int i = 0; i < 20'000; ++i) keys.push_back("k" + std::to_string(rng() % 5'000));
  keys.push_back("");  // the empty key is a key like any other
  keys.push_back("");
  std::vector<std::uint32_t> first_of;
  FirstOccurrenceFinder finder;
  const std::size_t firsts = finder.find(refs_of(keys), first_of);
  std::map<std::string, std::uint32_t> oracle;
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    const auto [it, inserted] = oracle.emplace(keys[i], i);
    ASSERT_EQ(first_of[i], it->second) << "key " << keys[i] << " at " << i;
  }
  EXPECT_EQ(firsts, oracle.size());
}

TEST(FirstOccurrence, SameHashDifferentBytesAreDifferentKeys) {
  // A forged hash collision: the bytes decide, never the hash alone.
  const std::string a = "alpha";
  const std::string b = "beta";
  const KeyHash h = hash_key(a);
  const std::vector<KeyRef> refs = {{h, a}, {h, b}, {h, a}, {h, b}};
  std::vector<std::uint32_t> first_of;
  FirstOccurrenceFinder finder;
  EXPECT_EQ(finder.find(refs, first_of), 2U);
  EXPECT_EQ(first_of, (std::vector<std::uint32_t>{0, 1, 0, 1}));
}

TEST(FirstOccurrence, OneHotKeyAndReuseAcrossBatches) {
  FirstOccurrenceFinder finder;
  std::vector<std::uint32_t> first_of;
  const std::vector<std::string> hot(10'000, "{\"id\": \"\"}");
  EXPECT_EQ(finder.find(refs_of(hot), first_of), 1U);
  for (const std::uint32_t f : first_of) ASSERT_EQ(f, 0U);
  const std::vector<std::string> small = {"x", "y", "x"};
  EXPECT_EQ(finder.find(refs_of(small), first_of), 2U);
  EXPECT_EQ(first_of, (std::vector<std::uint32_t>{0, 1, 0}));
  EXPECT_EQ(finder.find({}, first_of), 0U);
  EXPECT_TRUE(first_of.empty());
}

}  // namespace
}  // namespace bloomshard::core
