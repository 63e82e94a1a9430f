// Generator of hash_fixture.tsv (run ONCE; the output is checked in and the
// test compares against it, so a change of the hashing scheme fails it).
// It calls xxHash directly, not bloomshard, so the fixture is an independent
// statement of scheme "xxh3-128/v1": hi/lo = XXH3_128bits_withSeed's
// high64/low64, slice = floor(hi * P / 2^64).
//   g++ -std=c++20 -O1 tests/data/make_hash_fixture.cpp -o /tmp/mkfix -lxxhash
//   /tmp/mkfix > tests/data/hash_fixture.tsv
// Key lengths cover every XXH3 code path (0, 1-3, 4-8, 9-16, 17-128,
// 129-240, > 240 bytes).
#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

namespace {

__extension__ typedef unsigned __int128 U128;

std::uint32_t slice(std::uint64_t hi, std::uint32_t p) {
  return static_cast<std::uint32_t>((static_cast<U128>(hi) * p) >> 64);
}

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + 3) & 0xFF);
  return s;
}

}  // namespace

int main() {
  using namespace std::string_literals;
  const std::vector<std::string> keys = {
      ""s,
      "a"s,
      "abc"s,
      "hello world"s,
      "https://example.com/path?q=1&r=%20x"s,
      "\0"s,
      "a\0b"s,
      "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"s,
      "\xC3\xA9"s,   // é NFC
      "e\xCC\x81"s,  // é NFD
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88"s,  // 日本語テキスト
      "\xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD"s,  // 😀👍🏽
      "\xFF\xFE\x00\x80"s,                                  // not UTF-8
      pattern(8),
      pattern(16),
      pattern(17),
      pattern(128),
      pattern(129),
      pattern(240),
      pattern(241),
      pattern(1000),
      pattern(10000),
  };
  const std::uint64_t seeds[] = {0x626c6f6f6d736864ULL, 0};
  std::printf("# bloomshard hash fixture, scheme xxh3-128/v1; made by make_hash_fixture.cpp\n");
  std::printf("# seed\tkey_hex\thash_hi\thash_lo\tslice_p4096\tslice_p7\n");
  for (const std::uint64_t seed : seeds) {
    for (const std::string& k : keys) {
      const XXH128_hash_t h = XXH3_128bits_withSeed(k.data(), k.size(), seed);
      std::printf("%016" PRIx64 "\t", seed);
      for (const char c : k) std::printf("%02x", static_cast<unsigned char>(c));
      std::printf("\t%016" PRIx64 "\t%016" PRIx64 "\t%u\t%u\n", h.high64, h.low64,
                  slice(h.high64, 4096), slice(h.high64, 7));
    }
  }
  return 0;
}
