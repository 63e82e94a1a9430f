// Digest keys over XXH3's streaming API and our SHA-256.
#include "bloomshard/core/key_digest.hpp"

#include <xxhash.h>

#include <stdexcept>

#include "bloomshard/core/sha256.hpp"

namespace bloomshard::core {

struct KeyDigester::State {
  XXH3_state_t* xxh = nullptr;  // XXH3-128 streaming state, seed 0
  Sha256 sha;
  ~State() { XXH3_freeState(xxh); }
};

std::string_view key_digest_name(KeyDigest d) noexcept {
  switch (d) {
    case KeyDigest::kNone:
      return "none";
    case KeyDigest::kXxh3_128:
      return "xxh3-128";
    case KeyDigest::kSha256:
      return "sha256";
  }
  return "unknown";
}

std::string key_digest_label(KeyDigest d) { return std::string(key_digest_name(d)) + "/v1"; }

KeyDigest parse_key_digest(std::string_view name) {
  for (const auto d : kAllKeyDigests) {
    if (name == key_digest_name(d) || name == key_digest_label(d)) return d;
  }
  throw std::invalid_argument("unknown key digest '" + std::string(name) +
                              "' (expected none, xxh3-128 or sha256)");
}

std::size_t key_digest_bytes(KeyDigest d) noexcept {
  switch (d) {
    case KeyDigest::kXxh3_128:
      return 16;
    case KeyDigest::kSha256:
      return Sha256::kDigestBytes;
    case KeyDigest::kNone:
      break;
  }
  return 0;
}

KeyDigester::KeyDigester(KeyDigest kind) : kind_(kind), state_(std::make_unique<State>()) {
  if (kind == KeyDigest::kNone) throw std::invalid_argument("KeyDigester needs a digest, not none");
  if (kind == KeyDigest::kXxh3_128) {
    state_->xxh = XXH3_createState();
    if (state_->xxh == nullptr) throw std::bad_alloc();
    XXH3_128bits_reset(state_->xxh);
  }
}

KeyDigester::~KeyDigester() = default;
KeyDigester::KeyDigester(KeyDigester&&) noexcept = default;
KeyDigester& KeyDigester::operator=(KeyDigester&&) noexcept = default;

void KeyDigester::update(std::string_view bytes) noexcept {
  if (kind_ == KeyDigest::kXxh3_128) {
    XXH3_128bits_update(state_->xxh, bytes.data(), bytes.size());
  } else {
    state_->sha.update(bytes);
  }
}

void KeyDigester::finish(std::string& out) {
  if (kind_ == KeyDigest::kXxh3_128) {
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(state_->xxh));
    out.assign(reinterpret_cast<const char*>(canon.digest), sizeof canon.digest);
    XXH3_128bits_reset(state_->xxh);
  } else {
    const Sha256::Digest d = state_->sha.final();
    out.assign(reinterpret_cast<const char*>(d.data()), d.size());
    state_->sha.reset();
  }
}

std::string digest_key(KeyDigest kind, std::string_view bytes) {
  if (kind == KeyDigest::kNone) return std::string(bytes);
  KeyDigester d(kind);
  d.update(bytes);
  std::string out;
  d.finish(out);
  return out;
}

}  // namespace bloomshard::core
