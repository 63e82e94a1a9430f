// The tier-2 delta's parts (src/core, internal): the record arena, the
// tagged index into it, and the mapping both live in. Collisions of tags
// and of whole fingerprints, searches that wrap around the table's end,
// growth past the reserve, reuse after clear, records at the varint edges.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/memory/huge_page_mapping.hpp"
#include "core/tier2/delta_by_slice.hpp"
#include "core/tier2/delta_index.hpp"
#include "core/tier2/key_arena.hpp"

namespace bloomshard::core::detail {
namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;  // DeltaIndex's fingerprint mix

// The inverse of an odd multiplier mod 2^64 (Newton's iteration), so a test
// can pick the mixed hash and get the fingerprint that produces it.
constexpr std::uint64_t inverse(std::uint64_t a) {
  std::uint64_t x = a;  // correct to 3 bits for odd a
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}
static_assert(inverse(kGolden) * kGolden == 1);

// A fingerprint whose mixed hash is h.
std::uint64_t fingerprint_for(std::uint64_t h) { return h * inverse(kGolden); }

struct Stored {
  std::uint64_t fp;
  std::uint32_t local;
  std::string key;
  std::uint64_t offset;
};

// Inserts like ExactShard does (find, then append and put); false if present.
bool insert(DeltaIndex& index, KeyArena& arena, std::vector<Stored>& all, std::uint64_t fp,
            std::uint32_t local, const std::string& key) {
  const DeltaIndex::Found at =
      index.find(fp, [&](std::uint64_t off) { return arena.holds(off, fp, local, key); });
  if (at.found) return false;
  std::size_t slot = at.slot;
  if (!index.has_room()) {
    index.reserve(2 * index.max_keys(), arena);
    slot = index.empty_slot(fp);
  }
  const std::uint64_t off = arena.append(fp, local, key);
  index.put(slot, fp, off);
  all.push_back({fp, local, key, off});
  return true;
}

bool contains(const DeltaIndex& index, const KeyArena& arena, std::uint64_t fp, std::uint32_t local,
              const std::string& key) {
  return index.find(fp, [&](std::uint64_t off) { return arena.holds(off, fp, local, key); }).found;
}

TEST(KeyArena, RecordsRoundTripAtTheVarintEdges) {
  KeyArena arena;
  std::vector<Stored> all;
  std::vector<std::size_t> sizes = {0, 1, 127, 128, 16383, 16384, 1U << 20};
  std::vector<std::uint32_t> locals = {0, 127, 128, (1U << 24) - 1};
  std::uint64_t fp = 1;
  for (const std::size_t n : sizes) {
    for (const std::uint32_t local : locals) {
      std::string key(n, static_cast<char>('a' + n % 26));
      if (n > 2) key[n / 2] = '\0';
      fp = fp * kGolden + 7;
      all.push_back({fp, local, key, arena.append(fp, local, key)});
    }
  }
  // Each record reads back, and next() walks them in order to the end.
  std::uint64_t at = 0;
  for (const Stored& s : all) {
    ASSERT_EQ(at, s.offset);
    const KeyRecord r = arena.record(at);
    EXPECT_EQ(r.fingerprint, s.fp);
    EXPECT_EQ(r.local_slice, s.local);
    EXPECT_EQ(r.key, s.key);
    EXPECT_TRUE(arena.holds(at, s.fp, s.local, s.key));
    EXPECT_FALSE(arena.holds(at, s.fp ^ 1, s.local, s.key));
    EXPECT_FALSE(arena.holds(at, s.fp, s.local ^ 1, s.key));
    EXPECT_FALSE(arena.holds(at, s.fp, s.local, s.key + "x"));
    at = r.next;
  }
  EXPECT_EQ(at, arena.used());
  // The arena grew by moving its mapping; clear keeps the memory.
  const std::uint64_t mapped = arena.mapped();
  EXPECT_GE(mapped, arena.used());
  arena.clear();
  EXPECT_EQ(arena.used(), 0U);
  EXPECT_EQ(arena.mapped(), mapped);
  EXPECT_EQ(arena.append(5, 0, "again"), 0U);
  EXPECT_EQ(arena.record(0).key, "again");
}

TEST(DeltaIndex, TagCollisionsAndEqualFingerprintsStayApart) {
  KeyArena arena;
  DeltaIndex index;
  std::vector<Stored> all;
  // Mixed hashes that differ only in bits neither the home bucket (top
  // bits) nor the tag (bits 8..31 xor 40..63) reads: 64 different
  // fingerprints with one home and one tag.
  const std::uint64_t base = 0x0123456789ABCDEFULL & ~std::uint64_t{0xFF};
  std::vector<std::uint64_t> fps;
  for (std::uint64_t low = 0; low < 64; ++low) fps.push_back(fingerprint_for(base | low));
  for (std::size_t i = 1; i < fps.size(); ++i) {
    ASSERT_EQ(index.home(fps[i]).slot, index.home(fps[0]).slot);
    ASSERT_EQ(index.home(fps[i]).tag, index.home(fps[0]).tag);
  }
  for (std::size_t i = 0; i < fps.size(); ++i) {
    ASSERT_TRUE(insert(index, arena, all, fps[i], 3, "k" + std::to_string(i)));
    // The same bytes under the same fingerprint in another slice: another key.
    ASSERT_TRUE(insert(index, arena, all, fps[i], 4, "k" + std::to_string(i)));
  }
  // Equal fingerprints, different bytes (a 64-bit collision of keys).
  for (std::size_t i = 0; i < 40; ++i) {
    ASSERT_TRUE(insert(index, arena, all, fps[0], 3, std::string(i, 'z')));
  }
  for (const Stored& s : all) {
    EXPECT_TRUE(contains(index, arena, s.fp, s.local, s.key));
    EXPECT_FALSE(insert(index, arena, all, s.fp, s.local, s.key));
  }
  EXPECT_FALSE(contains(index, arena, fps[1], 3, "k0"));
  EXPECT_FALSE(contains(index, arena, fps[0], 5, "k0"));
  EXPECT_EQ(index.keys(), all.size());
  // The prefetch hint names the first record in the search path with the tag.
  EXPECT_EQ(index.likely_offset(fps[0]), all.front().offset);
}

TEST(DeltaIndex, SearchesWrapAroundTheTableEnd) {
  KeyArena arena;
  DeltaIndex index;
  std::vector<Stored> all;
  // Home in the last bucket: a mixed hash with all top bits set.
  const std::uint64_t fp = fingerprint_for(~std::uint64_t{0} - 0xFFFF);
  const std::size_t last_bucket = index.home(fp).slot;
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(insert(index, arena, all, fp, 0, std::to_string(i)));
  EXPECT_EQ(last_bucket + DeltaIndex::kBucketSlots, index.max_keys() * 4 / 3);  // the last one
  for (const Stored& s : all) EXPECT_TRUE(contains(index, arena, s.fp, 0, s.key));
  EXPECT_FALSE(contains(index, arena, fp, 0, "20"));
}

TEST(DeltaIndex, GrowsPastItsReserveAndReusesItsTableAfterClear) {
  KeyArena arena;
  DeltaIndex index;
  std::vector<Stored> all;
  index.reserve(1000, arena);
  const std::size_t reserved = index.max_keys();
  EXPECT_GE(reserved, 1000U);
  std::uint64_t x = 12345;
  for (int i = 0; i < 10000; ++i) {
    x = x * kGolden + 1;
    ASSERT_TRUE(insert(index, arena, all, x, static_cast<std::uint32_t>(i % 7), std::to_string(i)));
  }
  EXPECT_GT(index.max_keys(), reserved);  // rebuilt from the arena, at least once
  for (const Stored& s : all) ASSERT_TRUE(contains(index, arena, s.fp, s.local, s.key));
  const std::size_t table = index.table_bytes();
  index.reserve(10, arena);  // never shrinks
  EXPECT_EQ(index.table_bytes(), table);
  // Clear: nothing found, the same table, and it fills again.
  index.clear();
  arena.clear();
  EXPECT_EQ(index.keys(), 0U);
  EXPECT_EQ(index.table_bytes(), table);
  for (const Stored& s : all) ASSERT_FALSE(contains(index, arena, s.fp, s.local, s.key));
  std::vector<Stored> again;
  for (std::size_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(insert(index, arena, again, all[i].fp, all[i].local, all[i].key));
  }
  for (const Stored& s : again) ASSERT_TRUE(contains(index, arena, s.fp, s.local, s.key));
  EXPECT_EQ(index.table_bytes(), table);
  index.release();
  EXPECT_LT(index.table_bytes(), table);
  EXPECT_EQ(index.keys(), 0U);
}

TEST(DeltaBySlice, BucketsBySliceInInsertionOrderAndSortsBySliceOrder) {
  KeyArena arena;
  std::vector<std::uint64_t> counts(5, 0);
  std::vector<std::vector<DeltaEntry>> expect(5);
  std::uint64_t x = 99;
  for (int i = 0; i < 3000; ++i) {
    x = x * kGolden + 3;
    const auto local = static_cast<std::uint32_t>(x >> 61) % 5;
    // Every fourth key repeats the fingerprint before it: ties go by bytes.
    const std::uint64_t fp =
        (i % 4 == 3 && !expect[local].empty()) ? expect[local].back().fingerprint : x;
    const std::uint64_t off = arena.append(fp, local, "key" + std::to_string(2999 - i));
    expect[local].push_back({fp, off});
    ++counts[local];
  }
  DeltaBySlice order;
  order.build(arena, counts);
  for (std::uint32_t s = 0; s < 5; ++s) {
    const std::span<const DeltaEntry> got = order.slice(s);
    ASSERT_EQ(got.size(), expect[s].size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].fingerprint, expect[s][i].fingerprint);
      EXPECT_EQ(got[i].offset, expect[s][i].offset);
    }
    const std::vector<DeltaEntry> sorted = sorted_slice(got, arena);
    ASSERT_EQ(sorted.size(), got.size());
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      const bool ordered = sorted[i - 1].fingerprint != sorted[i].fingerprint
                               ? sorted[i - 1].fingerprint < sorted[i].fingerprint
                               : arena.key(sorted[i - 1].offset) < arena.key(sorted[i].offset);
      ASSERT_TRUE(ordered) << "slice " << s << " at " << i;
    }
  }
}

TEST(HugePageMapping, GrowsKeepingContentsAndZeroes) {
  HugePageMapping m;
  m.grow_to(100);
  ASSERT_GE(m.size(), 100U);
  for (std::size_t i = 0; i < 100; ++i) m.data()[i] = static_cast<char>(i);
  m.grow_to(5U << 20);  // past 2 MiB: moved onto huge-page-aligned memory
  ASSERT_GE(m.size(), 5U << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.data()) % HugePageMapping::kHugePageBytes, 0U);
  for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(m.data()[i], static_cast<char>(i));
  EXPECT_EQ(m.data()[(5U << 20) - 1], 0);  // new bytes read as zero
  m.prefault(m.size());
  m.zero(100);
  EXPECT_EQ(m.data()[50], 0);
  HugePageMapping moved = std::move(m);
  EXPECT_EQ(m.data(), nullptr);
  EXPECT_GE(moved.size(), 5U << 20);
}

// What a mapping cannot do it leaves alone: a grow_to() that is not larger
// keeps the size and the bytes (never shrinks), prefault() and zero() stop
// at the mapping's end or do nothing for 0 bytes, and a self-move keeps the
// mapping.
TEST(HugePageMapping, ClampsWhatReachesPastItsEndAndNeverShrinks) {
  HugePageMapping m;
  m.prefault(100);  // nothing mapped yet: a no-op, not a write through null
  m.zero(100);
  m.grow_to(3U << 20);
  const std::size_t size = m.size();
  char* const data = m.data();
  std::memset(data, 7, size);
  m.grow_to(4096);
  EXPECT_EQ(m.size(), size);
  EXPECT_EQ(m.data(), data);
  EXPECT_EQ(m.data()[size - 1], 7);
  m.prefault(size * 4);
  m.zero(0);
  EXPECT_EQ(m.data()[0], 7);
  m.zero(size * 4);  // the whole mapping, not past it
  EXPECT_EQ(m.data()[size - 1], 0);
  HugePageMapping& alias = m;
  m = std::move(alias);
  EXPECT_EQ(m.data(), data);
  EXPECT_EQ(m.size(), size);
}

}  // namespace
}  // namespace bloomshard::core::detail
