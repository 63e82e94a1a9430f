// Digest keys (--key-digest): the key becomes a fixed-size digest of the
// normalized field value(s), so tier 2 stores 16 or 32 bytes per key
// whatever the text's length. Named and versioned like the hash scheme,
// because a saved tier 2 holds digests: `none/v1` (the bytes themselves),
// `xxh3-128/v1` (XXH3-128, seed 0, 16 bytes, canonical big-endian order,
// XXH128_canonicalFromHash) and `sha256/v1` (FIPS 180-4, 32 bytes, OpenSSL
// libcrypto; checked against the NIST example vectors in the tests). The
// routing hash (key_hash.hpp) is then taken over the digest bytes.
// Collision figures and why they are acceptable: docs/keys.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace bloomshard::core {

enum class KeyDigest : std::uint8_t { kNone = 0, kXxh3_128 = 1, kSha256 = 2 };

inline constexpr KeyDigest kAllKeyDigests[] = {KeyDigest::kNone, KeyDigest::kXxh3_128,
                                               KeyDigest::kSha256};

/// "none", "xxh3-128" or "sha256".
[[nodiscard]] std::string_view key_digest_name(KeyDigest d) noexcept;

/// "name/v1": what checkpoints and `info` show.
[[nodiscard]] std::string key_digest_label(KeyDigest d);

/// Parses "name" or "name/v1"; throws std::invalid_argument naming the value.
[[nodiscard]] KeyDigest parse_key_digest(std::string_view name);

/// Bytes of a digest key: 16, 32, or 0 for kNone (the key's own length).
[[nodiscard]] std::size_t key_digest_bytes(KeyDigest d) noexcept;

/// Streaming digest of one key: feed the key's bytes in any number of
/// pieces (so a 100 MB field is never copied whole), then take the digest.
/// Not for kNone. Reusable: finish() leaves it ready for the next key.
class KeyDigester {
 public:
  /// Throws std::invalid_argument for kNone.
  explicit KeyDigester(KeyDigest kind);
  ~KeyDigester();
  KeyDigester(KeyDigester&&) noexcept;
  KeyDigester& operator=(KeyDigester&&) noexcept;
  KeyDigester(const KeyDigester&) = delete;
  KeyDigester& operator=(const KeyDigester&) = delete;

  void update(std::string_view bytes) noexcept;

  /// Forgets the bytes fed since the last finish() (a key abandoned halfway,
  /// e.g. on invalid UTF-8).
  void reset();

  /// The digest of the bytes fed since the last finish(), written into
  /// `out` (replacing it); starts the next key.
  void finish(std::string& out);

  /// The digest of `bytes` alone, written into `out`: what update(bytes)
  /// then finish() give, when nothing was fed since the last finish(). For
  /// xxh3-128 one call of XXH3's one-shot form, without the streaming
  /// state's buffering (a paragraph key is ~100-200 bytes: the stream's
  /// set-up costs about what hashing them does).
  void digest(std::string_view bytes, std::string& out);

  [[nodiscard]] KeyDigest kind() const noexcept { return kind_; }

 private:
  struct State;
  KeyDigest kind_;
  std::unique_ptr<State> state_;
};

/// One-shot helper: the digest of `bytes` (kNone: the bytes themselves).
[[nodiscard]] std::string digest_key(KeyDigest kind, std::string_view bytes);

}  // namespace bloomshard::core
