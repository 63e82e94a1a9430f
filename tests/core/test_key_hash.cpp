// Hash stability: the checked-in fixture tests/data/hash_fixture.tsv (made
// once by tests/data/make_hash_fixture.cpp, which calls xxHash directly) fixes
// the 128-bit hash and the slice of keys covering every XXH3 length path,
// NUL bytes, CJK, emoji and non-UTF-8 bytes, under two seeds. Any change of
// the scheme (hash function, seed handling, hi/lo split, slice mapping) fails
// here and must come with a new kHashSchemeVersion.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

struct FixtureRow {
  std::uint64_t seed = 0;
  std::string key;
  KeyHash hash;
  std::uint32_t slice_4096 = 0;
  std::uint32_t slice_7 = 0;
};

std::string unhex(const std::string& hex) {
  if (hex.size() % 2 != 0) throw std::runtime_error("odd hex length");
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cols;
  std::size_t start = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', start);
    cols.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos) return cols;
    start = tab + 1;
  }
}

std::vector<FixtureRow> load_fixture() {
  const std::string path = std::string(BLOOMSHARD_TEST_DATA_DIR) + "/hash_fixture.tsv";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<FixtureRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto cols = split_tabs(line);
    if (cols.size() != 6) throw std::runtime_error("bad fixture line: " + line.substr(0, 80));
    FixtureRow r;
    r.seed = std::stoull(cols[0], nullptr, 16);
    r.key = unhex(cols[1]);
    r.hash.hi = std::stoull(cols[2], nullptr, 16);
    r.hash.lo = std::stoull(cols[3], nullptr, 16);
    r.slice_4096 = static_cast<std::uint32_t>(std::stoul(cols[4]));
    r.slice_7 = static_cast<std::uint32_t>(std::stoul(cols[5]));
    rows.push_back(std::move(r));
  }
  return rows;
}

TEST(KeyHash, MatchesCheckedInFixture) {
  const auto rows = load_fixture();
  ASSERT_EQ(rows.size(), 44U) << "fixture truncated?";
  bool saw_empty = false;
  bool saw_nul = false;
  bool saw_long = false;
  for (const auto& r : rows) {
    SCOPED_TRACE(numbered("key of ", r.key.size()) + " bytes, seed " + std::to_string(r.seed));
    const KeyHash h = hash_key(r.key, r.seed);
    EXPECT_EQ(h.hi, r.hash.hi);
    EXPECT_EQ(h.lo, r.hash.lo);
    EXPECT_EQ(slice_of(h, 4096), r.slice_4096);
    EXPECT_EQ(slice_of(h, 7), r.slice_7);
    EXPECT_EQ(fingerprint(h), h.lo);
    EXPECT_EQ(probe_bits(h), static_cast<std::uint32_t>(h.hi));
    saw_empty |= r.key.empty();
    saw_nul |= r.key.find('\0') != std::string::npos;
    saw_long |= r.key.size() > 240;
  }
  EXPECT_TRUE(saw_empty && saw_nul && saw_long);
}

TEST(KeyHash, SchemeIdentityIsPinned) {
  // The fixture was made for exactly this name, version and default seed.
  EXPECT_EQ(kHashSchemeName, "xxh3-128/v1");
  EXPECT_EQ(kHashSchemeVersion, 1U);
  EXPECT_EQ(kDefaultHashSeed, 0x626c6f6f6d736864ULL);
  const auto rows = load_fixture();
  EXPECT_EQ(rows.front().seed, kDefaultHashSeed);
  EXPECT_EQ(hash_key(rows.front().key), rows.front().hash);  // default argument = default seed
}

TEST(KeyHash, SeedAndEveryByteMatter) {
  const std::string key("a\0b", 3);
  EXPECT_NE(hash_key(key, 1), hash_key(key, 2));
  EXPECT_NE(hash_key(key), hash_key(std::string_view("a")));  // bytes after NUL count
  EXPECT_NE(hash_key(std::string_view("")), hash_key(std::string("\0", 1)));
}

}  // namespace
}  // namespace bloomshard::core
