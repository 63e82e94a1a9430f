// Digest keys: SHA-256 against the FIPS 180-4 example vectors (NIST
// CSRC "Examples with intermediate values", SHA256.pdf and
// SHA2_Additional.pdf) and xxh3-128 against the xxHash reference value for
// the empty input; streaming in any pieces gives the one-shot digest.
#include <gtest/gtest.h>

#include <string>

#include "bloomshard/core/key_digest.hpp"

namespace bloomshard::core {
namespace {

std::string digest_hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

TEST(Sha256, FipsExampleVectors) {
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256, "abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256, "")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256,
                                  "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256,
                                  "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                                  "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256, std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // 55, 56 and 64 bytes: the length fits the last block, needs a new one,
  // or the message fills a block exactly (values from coreutils sha256sum).
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256, std::string(55, 'a'))),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256, std::string(56, 'a'))),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kSha256, std::string(64, 'a'))),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(KeyDigest, Xxh3ReferenceValueForTheEmptyInput) {
  // XXH3_128bits("", seed 0), canonical (big-endian) bytes.
  EXPECT_EQ(digest_hex(digest_key(KeyDigest::kXxh3_128, "")), "99aa06d3014798d86001c324468d497f");
}

TEST(KeyDigest, PiecesGiveTheOneShotDigest) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += static_cast<char>('a' + i % 23);
  for (const KeyDigest kind : {KeyDigest::kXxh3_128, KeyDigest::kSha256}) {
    const std::string whole = digest_key(kind, text);
    EXPECT_EQ(whole.size(), key_digest_bytes(kind));
    KeyDigester d(kind);
    for (const std::size_t step : {1UL, 7UL, 63UL, 64UL, 65UL, 4096UL}) {
      for (std::size_t at = 0; at < text.size(); at += step) {
        d.update(std::string_view(text).substr(at, step));
      }
      std::string out;
      d.finish(out);  // and ready for the next key
      EXPECT_EQ(out, whole) << key_digest_name(kind) << " step " << step;
    }
  }
}

TEST(KeyDigest, OneCallDigestIsTheStreamedOne) {
  // Every XXH3 size class (0, 1-3, 4-8, 9-16, 17-128, 129-240, longer),
  // and streaming keeps working between one-call digests.
  std::string text;
  for (int i = 0; i < 5000; ++i) text += static_cast<char>('a' + (i * 7) % 29);
  for (const KeyDigest kind : {KeyDigest::kXxh3_128, KeyDigest::kSha256}) {
    KeyDigester d(kind);
    for (const std::size_t n :
         {0UL, 1UL, 3UL, 4UL, 8UL, 9UL, 16UL, 17UL, 128UL, 129UL, 240UL, 241UL, 1024UL, 5000UL}) {
      const std::string_view bytes = std::string_view(text).substr(0, n);
      std::string one;
      d.digest(bytes, one);
      EXPECT_EQ(one, digest_key(kind, bytes)) << key_digest_name(kind) << " n " << n;
      std::string streamed;
      d.update(bytes);
      d.finish(streamed);
      EXPECT_EQ(streamed, one) << key_digest_name(kind) << " n " << n;
    }
  }
}

TEST(KeyDigest, NamesAndVersions) {
  for (const KeyDigest d : kAllKeyDigests) {
    EXPECT_EQ(parse_key_digest(key_digest_name(d)), d);
    EXPECT_EQ(parse_key_digest(key_digest_label(d)), d);
  }
  EXPECT_EQ(key_digest_label(KeyDigest::kSha256), "sha256/v1");
  EXPECT_EQ(key_digest_bytes(KeyDigest::kNone), 0U);
  EXPECT_THROW((void)parse_key_digest("md5"), std::invalid_argument);
  EXPECT_THROW(KeyDigester{KeyDigest::kNone}, std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::core
