#include "bloomshard/app/state_key_scheme.hpp"

#include <stdexcept>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {

KeyScheme key_scheme_of(const io::CheckpointHeader& h) {
  if (h.hash_scheme != core::kHashSchemeName) {
    throw std::runtime_error("the state's hash scheme '" + h.hash_scheme +
                             "' is not this build's '" + std::string(core::kHashSchemeName) + "'");
  }
  if (h.bloom_layout != core::kBloomLayoutName) {
    throw std::runtime_error("the state's Bloom layout '" + h.bloom_layout +
                             "' is not this build's '" + std::string(core::kBloomLayoutName) + "'");
  }
  KeyScheme s;
  s.hash_scheme = h.hash_scheme;
  s.hash_seed = h.hash_seed;
  s.bloom_layout = h.bloom_layout;
  s.normalization = h.normalization;
  s.key_field = h.key_field;
  s.key_encoding = h.key_encoding;
  // "nfc/v1 unicode 15.0.0": the policy label, then the Unicode version.
  const std::string label = h.normalization.substr(0, h.normalization.find(' '));
  try {
    s.normalize = core::parse_policy(label);
  } catch (const std::invalid_argument&) {
    throw std::runtime_error("the state's normalization '" + h.normalization +
                             "' is unknown to this build");
  }
  // Keys normalized under other Unicode tables could differ: refused, as
  // dedup refuses such a state (run_state.cpp).
  const std::string here = core::policy_label(s.normalize) + " unicode " +
                           std::string(core::normalization_unicode_version());
  if (here != h.normalization) {
    throw std::runtime_error("the state's normalization '" + h.normalization +
                             "' is not this build's '" + here + "'");
  }
  return s;
}

std::string key_scheme_difference(const KeyScheme& a, const KeyScheme& b) {
  const auto differs = [](const char* what, const std::string& x, const std::string& y) {
    return std::string(what) + " differs: '" + x + "' vs '" + y + "'";
  };
  if (a.hash_scheme != b.hash_scheme) return differs("hash scheme", a.hash_scheme, b.hash_scheme);
  if (a.hash_seed != b.hash_seed) {
    return differs("hash seed", std::to_string(a.hash_seed), std::to_string(b.hash_seed));
  }
  if (a.bloom_layout != b.bloom_layout) {
    return differs("Bloom layout", a.bloom_layout, b.bloom_layout);
  }
  if (a.normalization != b.normalization) {
    return differs("normalization", a.normalization, b.normalization);
  }
  if (a.key_field != b.key_field) return differs("key field", a.key_field, b.key_field);
  if (a.key_encoding != b.key_encoding) {
    return differs("key encoding", a.key_encoding, b.key_encoding);
  }
  return {};
}

std::string key_scheme_conflict(const KeyScheme& s, const KeySchemeFlags& f) {
  if (f.key_field && *f.key_field != s.key_field) {
    return "--key-field '" + *f.key_field + "' conflicts with the state's key field '" +
           s.key_field + "'";
  }
  if (f.normalize) {
    core::NormalizePolicy given{};
    try {
      given = core::parse_policy(*f.normalize);
    } catch (const std::invalid_argument& e) {
      return std::string("--normalize: ") + e.what();
    }
    const bool pinned = f.normalize->find('/') != std::string::npos;
    const bool same =
        pinned ? given == s.normalize : core::policy_name(given) == core::policy_name(s.normalize);
    if (!same) {
      return "--normalize '" + *f.normalize + "' conflicts with the state's normalization '" +
             s.normalization + "'";
    }
  }
  if (f.hash_seed) {
    const std::uint64_t given = *f.hash_seed == 0 ? core::kDefaultHashSeed : *f.hash_seed;
    if (given != s.hash_seed) {
      return "--hash-seed " + std::to_string(given) + " conflicts with the state's hash seed " +
             std::to_string(s.hash_seed);
    }
  }
  return {};
}

void apply_key_scheme(const KeyScheme& s, DedupConfig& c) {
  c.key_field = s.key_field;
  c.normalize = s.normalize;
  c.normalize_pinned = true;
  c.hash_seed = s.hash_seed;
}

void store_key_scheme(const KeyScheme& s, io::CheckpointHeader& h) {
  h.hash_scheme = s.hash_scheme;
  h.hash_seed = s.hash_seed;
  h.bloom_layout = s.bloom_layout;
  h.normalization = s.normalization;
  h.key_field = s.key_field;
  h.key_encoding = s.key_encoding;
}

}  // namespace bloomshard::app
