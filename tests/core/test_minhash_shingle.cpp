// Shingles: word:N and char:N windows hashed with XXH3 and the documented
// seed, the short-text and empty-text rules, and streaming across pieces.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/minhash/shingle.hpp"

namespace bloomshard::core {
namespace {

std::uint64_t h(std::string_view s) {
  return XXH3_64bits_withSeed(s.data(), s.size(), kShingleHashSeed);
}

TEST(MinHashShingle, ParsesSpecs) {
  EXPECT_EQ(parse_shingle_spec("word:5"), (ShingleSpec{ShingleKind::kWord, 5}));
  EXPECT_EQ(parse_shingle_spec("char:3"), (ShingleSpec{ShingleKind::kChar, 3}));
  EXPECT_EQ(shingle_spec_name(ShingleSpec{}), "word:5");
  for (const char* bad : {"word", "word:", "word:0", "word:65", "line:3", "char:3x", "char:-1"}) {
    try {
      (void)parse_shingle_spec(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(MinHashShingle, WordShinglesAreWordsJoinedByOneSpace) {
  const auto got = shingle_hashes({ShingleKind::kWord, 3}, "a bb ccc dd e");
  EXPECT_EQ(got, (std::vector<std::uint64_t>{h("a bb ccc"), h("bb ccc dd"), h("ccc dd e")}));
  EXPECT_EQ(shingle_hashes({ShingleKind::kWord, 1}, "x y"),
            (std::vector<std::uint64_t>{h("x"), h("y")}));
}

TEST(MinHashShingle, CharShinglesAreCodePoints) {
  // "é" is two bytes but one code point; the space is a code point too.
  const auto got = shingle_hashes({ShingleKind::kChar, 3}, "\u00e9t\u00e9 a");
  EXPECT_EQ(got, (std::vector<std::uint64_t>{h("\u00e9t\u00e9"), h("t\u00e9 "), h("\u00e9 a")}));
}

TEST(MinHashShingle, ShorterThanNIsOneShingleOfAllOfIt) {
  EXPECT_EQ(shingle_hashes({ShingleKind::kWord, 5}, "one two"),
            (std::vector<std::uint64_t>{h("one two")}));
  EXPECT_EQ(shingle_hashes({ShingleKind::kWord, 2}, "one two"),
            (std::vector<std::uint64_t>{h("one two")}));  // exactly N: one, not two
  EXPECT_EQ(shingle_hashes({ShingleKind::kChar, 9}, "ab"), (std::vector<std::uint64_t>{h("ab")}));
}

TEST(MinHashShingle, EmptyTextHasNoShingle) {
  EXPECT_TRUE(shingle_hashes({ShingleKind::kWord, 5}, "").empty());
  EXPECT_TRUE(shingle_hashes({ShingleKind::kChar, 5}, "").empty());
}

TEST(MinHashShingle, KnownAnswers) {
  // docs/near-duplicates.md, "Known answers".
  const auto w = shingle_hashes({}, "the quick brown fox jumps over the lazy dog");
  ASSERT_EQ(w.size(), 5U);
  EXPECT_EQ(w[0], 0xa1f121b4aa37e83cULL);
  EXPECT_EQ(w[1], 0xcfb53c75ce97b070ULL);
  const auto c = shingle_hashes({ShingleKind::kChar, 5},
                                "strasse caf\u00e9 na\u00efve \u00e9cole d\u00e9j\u00e0 vu");
  ASSERT_EQ(c.size(), 28U);
  EXPECT_EQ(c[0], 0x6cf6a4c3798945e3ULL);
  EXPECT_EQ(c[1], 0x91ac9fb376ff914eULL);
}

struct Collect final : ShingleHashSink {
  std::vector<std::uint64_t> all;
  std::size_t calls = 0;
  void add(std::span<const std::uint64_t> hashes) override {
    EXPECT_LE(hashes.size(), kShingleBatch);
    ++calls;
    all.insert(all.end(), hashes.begin(), hashes.end());
  }
};

TEST(MinHashShingle, PiecesCutAnywhereGiveTheSameShinglesInBatches) {
  std::string text;
  for (int i = 0; i < 700; ++i) text += (i ? " w" : "w") + std::to_string(i % 97) + "\u00e9";
  for (const ShingleSpec spec :
       {ShingleSpec{ShingleKind::kWord, 5}, ShingleSpec{ShingleKind::kChar, 4}}) {
    const auto whole = shingle_hashes(spec, text);
    for (const std::size_t cut : {1U, 2U, 3U, 5U, 64U, 1000U}) {
      ShingleHasher hasher(spec);
      Collect sink;
      std::size_t i = 0;
      while (i < text.size()) {
        std::size_t n = std::min(cut, text.size() - i);
        // Pieces end between code points (what the normalizer gives).
        while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0U) == 0x80U)
          ++n;
        hasher.feed(std::string_view(text).substr(i, n), sink);
        i += n;
      }
      hasher.finish(sink);
      EXPECT_EQ(sink.all, whole) << shingle_spec_name(spec) << " cut " << cut;
      EXPECT_EQ(hasher.shingle_count(), whole.size());
      EXPECT_GT(sink.calls, whole.size() / kShingleBatch);
      EXPECT_LT(hasher.held_bytes(), 2 * (kWindowSlack + 1024U));  // the window, not the text
    }
  }
}

// word:N shingles spelled out: the words joined by one space, hashed whole.
std::vector<std::uint64_t> naive_word_shingles(const std::vector<std::string>& words,
                                               std::size_t n) {
  std::vector<std::uint64_t> out;
  const auto joined = [&](std::size_t from, std::size_t count) {
    std::string s;
    for (std::size_t k = from; k < from + count; ++k) s += (k > from ? " " : "") + words[k];
    return s;
  };
  if (words.empty()) return out;
  if (words.size() <= n) return {h(joined(0, words.size()))};
  for (std::size_t i = 0; i + n <= words.size(); ++i) out.push_back(h(joined(i, n)));
  return out;
}

TEST(MinHashShingle, WordsLongerThanTheWindowGiveTheSameHashes) {
  // Long words alone, side by side, first, last, in a text shorter than N,
  // and lengths just around kMaxWindowWordBytes; fed in pieces of every
  // size, so a word crosses the limit inside a piece and at its edge.
  std::mt19937 rng(35);
  const std::size_t lengths[] = {1,
                                 7,
                                 kMaxWindowWordBytes - 1,
                                 kMaxWindowWordBytes,
                                 kMaxWindowWordBytes + 1,
                                 3 * kMaxWindowWordBytes + 5,
                                 20000};
  for (int round = 0; round < 60; ++round) {
    std::vector<std::string> words(rng() % 14 + 1);
    for (auto& w : words) {
      const bool long_word = rng() % 3 == 0;
      const std::size_t len = long_word ? lengths[2 + rng() % 5] : lengths[rng() % 2];
      w.assign(len, static_cast<char>('a' + rng() % 26));
      w[rng() % len] = 'z';  // not all alike
    }
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    for (const std::uint32_t n : {1U, 2U, 5U, 9U}) {
      const auto want = naive_word_shingles(words, n);
      for (const std::size_t cut : {std::size_t{1} << 30, std::size_t{1000}, std::size_t{333}}) {
        ShingleHasher hasher({ShingleKind::kWord, n});
        Collect sink;
        for (std::size_t i = 0; i < text.size(); i += cut) {
          hasher.feed(std::string_view(text).substr(i, cut), sink);
        }
        hasher.finish(sink);
        ASSERT_EQ(sink.all, want) << "round " << round << " n " << n << " cut " << cut;
        // The window never holds a long word: N short words and a margin.
        EXPECT_LE(hasher.held_bytes(),
                  2 * (n * (kMaxWindowWordBytes + 1) + kWindowSlack) + 64 * 600);
      }
      // The same hasher, reset, gives the same again (states left open by
      // the text's end are dropped).
      ShingleHasher hasher({ShingleKind::kWord, n});
      Collect first, second;
      hasher.feed(text, first);
      hasher.reset();
      hasher.feed(text, second);
      hasher.finish(second);
      ASSERT_EQ(second.all, want) << "after reset, round " << round << " n " << n;
    }
  }
}

TEST(MinHashShingle, ShortWordsInRandomPiecesGiveTheSpelledOutShingles) {
  // Running text of short words, with now and then a long one, cut into
  // pieces of random sizes (a piece may start or end at a space, inside a
  // word, or hold fewer than N words): each shingle hashed inside a piece
  // and each one across pieces or next to a long word must be the words
  // joined by one space.
  std::mt19937 rng(41);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> words(rng() % 120 + 1);
    for (auto& w : words) {
      const std::size_t len = rng() % 50 == 0 ? kMaxWindowWordBytes + rng() % 3 : rng() % 9 + 1;
      w.assign(len, 'a');
      for (char& c : w) c = static_cast<char>('a' + rng() % 26);
    }
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    const std::uint32_t n = 1 + static_cast<std::uint32_t>(rng() % 7);
    ShingleHasher hasher({ShingleKind::kWord, n});
    Collect sink;
    for (std::size_t i = 0; i < text.size();) {
      const std::size_t len = std::min<std::size_t>(text.size() - i, 1 + rng() % 80);
      hasher.feed(std::string_view(text).substr(i, len), sink);
      i += len;
    }
    hasher.finish(sink);
    ASSERT_EQ(sink.all, naive_word_shingles(words, n)) << "round " << round << " n " << n;
  }
}

}  // namespace
}  // namespace bloomshard::core
