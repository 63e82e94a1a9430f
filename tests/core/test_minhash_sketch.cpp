// One record's sketch end to end: known answers (the same as the Python
// reference tests/bench/minhash_reference.py), the empty-text rule,
// invalid UTF-8, and 10 MB and 100 MB documents in bounded memory.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <string>

#include "core/minhash/minhash_sketch.hpp"

// Counts the bytes live through operator new (std::string, std::vector),
// and their peak, so a test can bound what a call holds at once. A header
// in front of each block remembers its size for the unsized delete.
namespace {
std::atomic<std::size_t> g_live_bytes{0};
std::atomic<std::size_t> g_peak_bytes{0};
constexpr std::size_t kHeader = alignof(std::max_align_t);

void* counted_new(std::size_t size) {
  void* raw = std::malloc(size + kHeader);
  if (raw == nullptr) throw std::bad_alloc();
  *static_cast<std::size_t*>(raw) = size;
  const std::size_t live = g_live_bytes.fetch_add(size) + size;
  std::size_t peak = g_peak_bytes.load();
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live)) {
  }
  return static_cast<char*>(raw) + kHeader;
}

void counted_delete(void* p) noexcept {
  if (p == nullptr) return;
  void* raw = static_cast<char*>(p) - kHeader;
  g_live_bytes.fetch_sub(*static_cast<std::size_t*>(raw));
  std::free(raw);
}
}  // namespace

void* operator new(std::size_t size) { return counted_new(size); }
void* operator new[](std::size_t size) { return counted_new(size); }
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): a
// block from a new that is not replaced would reach counted_delete without
// its header.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_delete(p); }

namespace bloomshard::core {
namespace {

std::string sketch_hex(const BandKey& k) {
  static const char* const digits = "0123456789abcdef";
  std::string s;
  for (const auto b : k) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 15]);
  }
  return s;
}

struct KnownAnswer {
  const char* text;
  const char* shingle;
  std::uint64_t shingles;
  std::uint32_t first_values[4];
  const char* band_key_0;
  const char* band_key_1;
};

// docs/near-duplicates.md, "Known answers" (14 bands x 8 rows).
const KnownAnswer kAnswers[] = {
    {"The quick brown fox jumps over the lazy dog.",
     "word:5",
     5,
     {0x70cb81ec, 0x1e9fe41b, 0x3e9c9b1a, 0x6a79454d},
     "31babd50f4d5ff04b3da31e4a55d74fa",
     "b2b95c032af174a3131d35c3f6a28a83"},
    {"The quick brown fox jumps over the lazy dog.",
     "char:5",
     39,
     {0x0041aef8, 0x079086a6, 0x00e6b093, 0x0fa1a45c},
     "5c898de2367051c9c5ebb5e6fe0144c9",
     "8f04569d8a6e2894682b25e2c197a42d"},
    {"  Hello,   WORLD!  Hello... world?  ",
     "word:5",
     1,
     {0x7c4fa152, 0x3d3142f2, 0xb0194f19, 0xef43443c},
     "8b83c473e5c4244b02764362a618cc9d",
     "c405e6074a3839beac05d7299a38b962"},
    {"Stra\u00dfe caf\u00e9 \u2014 na\u00efve \u00c9COLE \u00abd\u00e9j\u00e0 vu\u00bb",
     "word:5",
     2,
     {0x4ea65daa, 0x466d6cb7, 0x2e7936e6, 0x5f3bfae9},
     "ba7433118e96d2661056a84077d02f21",
     "5f36b883282bbd2720e76f12b8d8656a"},
    {"Stra\u00dfe caf\u00e9 \u2014 na\u00efve \u00c9COLE \u00abd\u00e9j\u00e0 vu\u00bb",
     "char:5",
     28,
     {0x00d1934a, 0x040413d3, 0x00307df9, 0x0806ab9a},
     "7e904fe8932c5cc670a77bc7be420727",
     "41897dfb56d5c58d2025909cb41a7bf2"},
    {"one two",
     "word:5",
     1,
     {0xcc17e564, 0x1b236422, 0xce1f75b3, 0x5a00d8f8},
     "aeaf280eae4f732c802822325656e034",
     "77f7f416282d729b651c9d28e9d1b303"},
};

TEST(MinHashSketch, KnownAnswers) {
  for (const KnownAnswer& k : kAnswers) {
    for (const SignatureIsa isa : {SignatureIsa::kScalar, signature_isa()}) {
      MinHashSketcher sketcher({parse_shingle_spec(k.shingle), 14, 8}, isa);
      MinHashSketch out;
      std::string error;
      ASSERT_TRUE(sketcher.sketch(k.text, out, error)) << error;
      EXPECT_FALSE(out.empty);
      EXPECT_EQ(out.shingles, k.shingles) << k.text << " " << k.shingle;
      ASSERT_EQ(out.signature.size(), 112U);
      for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(out.signature[i], k.first_values[i]) << k.text;
      ASSERT_EQ(out.band_keys.size(), 14U);
      EXPECT_EQ(sketch_hex(out.band_keys[0]), k.band_key_0) << k.text << " " << k.shingle;
      EXPECT_EQ(sketch_hex(out.band_keys[1]), k.band_key_1) << k.text << " " << k.shingle;
    }
  }
}

TEST(MinHashSketch, EveryKernelGivesTheScalarSketchOfRandomTexts) {
  static const char* const words[] = {"Alpha", "beta,", "GAMMA",  "d\u00e9j\u00e0", "\u6587\u5b57",
                                      "x",     "--",    "\u00df", "e\u0301",        "42"};
  std::mt19937_64 rng(33);
  for (int t = 0; t < 40; ++t) {
    std::string text;
    const std::size_t n = rng() % 400;
    for (std::size_t i = 0; i < n; ++i) {
      text += words[rng() % std::size(words)];
      text += (rng() % 9 == 0) ? "\n" : " ";
    }
    for (const char* shingle : {"word:5", "char:5", "word:1"}) {
      const MinHashConfig config{parse_shingle_spec(shingle), 20, 13};
      MinHashSketcher scalar(config, SignatureIsa::kScalar);
      MinHashSketch want;
      std::string error;
      ASSERT_TRUE(scalar.sketch(text, want, error)) << error;
      for (const SignatureIsa isa : {SignatureIsa::kAvx2, SignatureIsa::kAvx512}) {
        if (!signature_isa_supported(isa)) continue;
        MinHashSketcher fast(config, isa);
        MinHashSketch got;
        ASSERT_TRUE(fast.sketch(text, got, error)) << error;
        EXPECT_EQ(got.signature, want.signature) << signature_isa_name(isa) << " " << shingle;
        EXPECT_EQ(got.band_keys, want.band_keys) << signature_isa_name(isa) << " " << shingle;
      }
    }
  }
}

TEST(MinHashSketch, EmptyTextsShareOneKeyOfTheirOwn) {
  MinHashSketcher sketcher(MinHashConfig{});
  for (const char* text : {"", "   ", "!!! ... ---", "\u00ab \u00bb\n"}) {
    MinHashSketch out;
    std::string error;
    ASSERT_TRUE(sketcher.sketch(text, out, error));
    EXPECT_TRUE(out.empty) << text;
    EXPECT_EQ(out.shingles, 0U);
    EXPECT_EQ(out.signature, std::vector<std::uint32_t>(112, kEmptySignatureValue));
    ASSERT_EQ(out.band_keys.size(), 1U);
    EXPECT_EQ(out.band_keys[0], empty_text_band_key());
  }
}

TEST(MinHashSketch, ShorterThanNIsOneShingleAndKeepsItsKeys) {
  MinHashSketcher sketcher(MinHashConfig{});
  MinHashSketch a, b;
  std::string error;
  ASSERT_TRUE(sketcher.sketch("one two", a, error));
  ASSERT_TRUE(sketcher.sketch("One, two!", b, error));
  EXPECT_EQ(a.shingles, 1U);
  EXPECT_EQ(a.band_keys, b.band_keys);  // same normalized text
  EXPECT_EQ(a.band_keys.size(), 14U);
}

TEST(MinHashSketch, InvalidUtf8IsRefusedWithTheReason) {
  MinHashSketcher sketcher(MinHashConfig{});
  MinHashSketch out;
  std::string error;
  EXPECT_FALSE(sketcher.sketch("fine words \xed\xa0\x80 here", out, error));
  EXPECT_NE(error.find("byte 11"), std::string::npos) << error;
  EXPECT_NE(error.find("surrogate"), std::string::npos) << error;
}

TEST(MinHashSketch, RejectsBadGeometry) {
  EXPECT_THROW(MinHashSketcher({ShingleSpec{}, 0, 8}), std::invalid_argument);
  EXPECT_THROW(MinHashSketcher({ShingleSpec{}, 4096, 2}), std::invalid_argument);
}

std::size_t peak_bytes_of_sketch(MinHashSketcher& sketcher, std::string_view doc,
                                 MinHashSketch& out) {
  std::string error;
  out.signature.reserve(sketcher.config().bands * sketcher.config().rows);
  out.band_keys.reserve(sketcher.config().bands);
  const std::size_t before = g_live_bytes.load();
  g_peak_bytes.store(before);
  EXPECT_TRUE(sketcher.sketch(doc, out, error)) << error;
  return g_peak_bytes.load() - before;
}

TEST(MinHashSketch, TenMegabyteDocumentInBoundedMemory) {
  // Mixed ASCII and accented words, so both normalization paths run.
  std::string doc;
  doc.reserve(10U << 20);
  for (std::uint64_t i = 0; doc.size() < (10U << 20); ++i) {
    doc += (i % 7 == 0) ? "Caf\u00e9, " : "word";
    doc += std::to_string((i * 2654435761U) % 100000);
    doc += (i % 13 == 0) ? ".\n" : " ";
  }
  for (const char* shingle : {"word:5", "char:5"}) {
    MinHashSketcher sketcher({parse_shingle_spec(shingle), 14, 8});
    MinHashSketch out;
    const std::size_t peak = peak_bytes_of_sketch(sketcher, doc, out);
    EXPECT_GT(out.shingles, 1000000U);
    // The piece of one 64 KiB chunk, the caseless form of one non-ASCII
    // run, the window and one batch: about 100 KiB measured, whatever the
    // text's length (the whole 10 MiB text as one chunk: 34 MB).
    EXPECT_LT(peak, 512U * 1024U) << shingle << ": " << peak << " bytes at once";
    std::printf("%s: %llu shingles, peak %zu bytes held at once\n", shingle,
                static_cast<unsigned long long>(out.shingles), peak);
  }
}

TEST(MinHashSketch, HundredMegabyteDocumentWithoutAsciiOrSpacesInBoundedMemory) {
  // 100 MB in three stretches that each used to be held whole: CJK
  // ideographs with no ASCII byte (one normalization chunk), then one
  // "word" of 40 MB with no space (base64 in a page: the shingle window),
  // then Hangul with ideographic spaces, no ASCII either.
  std::string doc;
  doc.reserve(100U << 20);
  std::mt19937 rng(36);
  while (doc.size() < (30U << 20)) doc += "\u6587\u5b57\u8a9e\u4e2d";
  doc += ' ';
  while (doc.size() < (70U << 20)) doc += static_cast<char>('A' + rng() % 26);
  doc += ' ';
  while (doc.size() < (100U << 20)) doc += (rng() % 5 == 0) ? "\u3000" : "\uac00\ud55c";
  MinHashSketcher sketcher(MinHashConfig{});
  MinHashSketch out;
  const std::size_t peak = peak_bytes_of_sketch(sketcher, doc, out);
  // The documented bound (docs/near-duplicates.md): one chunk's pieces
  // (about 6 x 64 KiB), the window and the long word's streaming states.
  EXPECT_LT(peak, 1024U * 1024U) << peak << " bytes at once";
  EXPECT_GT(out.shingles, 900000U);  // the Hangul words, each in 5 shingles
  std::printf("100 MB: %llu shingles, peak %zu bytes held at once\n",
              static_cast<unsigned long long>(out.shingles), peak);
}

}  // namespace
}  // namespace bloomshard::core
