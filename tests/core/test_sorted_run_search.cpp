// The run lookup's search (SliceBaseView::lower_bound): it starts where a
// uniform fingerprint is expected and gallops, so it must agree with
// std::lower_bound on every sorted array, uniform or not, for every query,
// including runs of equal fingerprints and the ends of the range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bloomshard/core/sorted_run.hpp"

namespace bloomshard::core {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// A view over `fps` with one-byte keys (key i is the byte i % 251).
struct TestRun {
  std::vector<std::uint64_t> fps;
  std::vector<std::uint64_t> offsets;
  std::string bytes;
  explicit TestRun(std::vector<std::uint64_t> f) : fps(std::move(f)) {
    std::sort(fps.begin(), fps.end());
    offsets.push_back(0);
    for (std::size_t i = 0; i < fps.size(); ++i) {
      bytes.push_back(static_cast<char>(i % 251));
      offsets.push_back(bytes.size());
    }
  }
  [[nodiscard]] SliceBaseView view() const { return {fps, offsets, bytes}; }
};

void expect_agrees(const TestRun& run, std::uint64_t query) {
  const auto expected = static_cast<std::size_t>(
      std::lower_bound(run.fps.begin(), run.fps.end(), query) - run.fps.begin());
  ASSERT_EQ(run.view().lower_bound(query), expected)
      << "query " << query << ", " << run.fps.size() << " fingerprints";
}

void expect_agrees_everywhere(const TestRun& run, std::mt19937_64& rng) {
  for (const std::uint64_t q : {std::uint64_t{0}, std::uint64_t{1}, kMax - 1, kMax}) {
    expect_agrees(run, q);
  }
  for (std::size_t i = 0; i < run.fps.size(); ++i) {  // every stored value and its neighbours
    expect_agrees(run, run.fps[i]);
    if (run.fps[i] > 0) expect_agrees(run, run.fps[i] - 1);
    if (run.fps[i] < kMax) expect_agrees(run, run.fps[i] + 1);
  }
  for (int i = 0; i < 2000; ++i) expect_agrees(run, rng());
}

TEST(SortedRunSearch, AgreesWithBinarySearchOnUniformFingerprints) {
  std::mt19937_64 rng(1);
  for (const std::size_t n : {0U, 1U, 2U, 3U, 7U, 64U, 1000U, 65537U}) {
    std::vector<std::uint64_t> f(n);
    for (auto& x : f) x = rng();
    expect_agrees_everywhere(TestRun(f), rng);
  }
}

TEST(SortedRunSearch, AgreesOnSkewedClusteredAndRepeatedFingerprints) {
  std::mt19937_64 rng(2);
  std::vector<std::vector<std::uint64_t>> cases;
  cases.push_back(std::vector<std::uint64_t>(500, 42));  // all equal
  cases.push_back({0, 0, 0, kMax, kMax});                // only the ends
  std::vector<std::uint64_t> low(3000), high(3000), two(3000), small(3000);
  for (auto& x : low) x = rng() >> 40;                                           // all near 0
  for (auto& x : high) x = kMax - (rng() >> 40);                                 // all near the top
  for (std::size_t i = 0; i < two.size(); ++i) two[i] = (i % 2 ? kMax - i : i);  // two clusters
  for (auto& x : small) x = rng() % 17;                                          // many repeats
  cases.push_back(low);
  cases.push_back(high);
  cases.push_back(two);
  cases.push_back(small);
  for (const auto& c : cases) expect_agrees_everywhere(TestRun(c), rng);
}

TEST(SortedRunSearch, ContainsComparesBytesAmongEqualFingerprints) {
  TestRun run({5, 7, 7, 7, 9});  // keys "\0" .. "\4", sorted by bytes within 7
  const SliceBaseView v = run.view();
  EXPECT_TRUE(v.contains(7, std::string(1, '\1')));
  EXPECT_TRUE(v.contains(7, std::string(1, '\3')));
  EXPECT_FALSE(v.contains(7, std::string(1, '\0')));  // key of fingerprint 5
  EXPECT_FALSE(v.contains(8, std::string(1, '\2')));
  EXPECT_TRUE(v.contains(9, std::string(1, '\4')));
  v.prefetch(kMax);  // a hint, also on the last position
  SliceBaseView empty;
  EXPECT_FALSE(empty.contains(1, "x"));
  empty.prefetch(1);
}

}  // namespace
}  // namespace bloomshard::core
