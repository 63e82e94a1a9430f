#include "app/state/state_key_scheme.hpp"

#include <stdexcept>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {

std::string normalization_identity(const core::KeyScheme& key) {
  std::string id = core::policy_label(key.normalize) + " unicode " +
                   std::string(core::normalization_unicode_version());
  if (!core::is_legacy_key_scheme(key)) id += " " + std::string(core::kKeySchemeVersionLabel);
  return id;
}

void put_key_scheme(const core::KeyScheme& key, io::CheckpointHeader& h) {
  h.normalization = normalization_identity(key);
  h.key_field = core::key_fields_text(key);
  h.key_encoding = "bytes";  // digest keys too: tier 2 holds the digest's bytes
  h.key_scheme = core::key_scheme_attribute(key);
}

core::KeyScheme key_scheme_of(const io::CheckpointHeader& h) {
  const std::string label = h.normalization.substr(0, h.normalization.find(' '));
  return core::key_scheme_from_state(h.key_field, label, h.key_scheme);
}

std::string describe_key_scheme(const io::CheckpointHeader& h) {
  try {
    const core::KeyScheme key = key_scheme_of(h);
    return "normalize=" + core::policy_label(key.normalize) + "; " + core::key_scheme_items(key);
  } catch (const std::invalid_argument& e) {
    return std::string("unreadable: ") + e.what();
  }
}

StateScheme state_scheme_of(const io::CheckpointHeader& h) {
  if (h.hash_scheme != core::kHashSchemeName) {
    throw std::runtime_error("the state's hash scheme '" + h.hash_scheme +
                             "' is not this build's '" + std::string(core::kHashSchemeName) + "'");
  }
  if (h.bloom_layout != core::kBloomLayoutName) {
    throw std::runtime_error("the state's Bloom layout '" + h.bloom_layout +
                             "' is not this build's '" + std::string(core::kBloomLayoutName) + "'");
  }
  StateScheme s;
  s.hash_scheme = h.hash_scheme;
  s.hash_seed = h.hash_seed;
  s.bloom_layout = h.bloom_layout;
  s.normalization = h.normalization;
  s.key_encoding = h.key_encoding;
  try {
    s.key = key_scheme_of(h);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("the state's key scheme cannot be read: " + std::string(e.what()));
  }
  // Keys normalized under other Unicode tables could differ: refused, as
  // dedup refuses such a state (run_state.cpp).
  const std::string here = normalization_identity(s.key);
  if (here != h.normalization) {
    throw std::runtime_error("the state's normalization '" + h.normalization +
                             "' is not this build's '" + here + "'");
  }
  return s;
}

std::string state_scheme_difference(const StateScheme& a, const StateScheme& b) {
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
  // The key scheme first: it names the item (digest, text rule, fields);
  // the normalization text only differs after it in its Unicode version.
  if (std::string d = core::key_scheme_difference(a.key, b.key); !d.empty()) return d;
  if (a.normalization != b.normalization) {
    return differs("normalization", a.normalization, b.normalization);
  }
  if (a.key_encoding != b.key_encoding) {
    return differs("key encoding", a.key_encoding, b.key_encoding);
  }
  return {};
}

std::string key_scheme_conflict(const StateScheme& s, const KeySchemeFlags& f) {
  if (f.key_fields && *f.key_fields != s.key.fields) {
    core::KeyScheme given = s.key;
    given.fields = *f.key_fields;
    return "--key-field '" + core::key_fields_text(given) +
           "' conflicts with the state's key field '" + core::key_fields_text(s.key) + "'";
  }
  if (f.normalize) {
    core::NormalizePolicy given{};
    try {
      given = core::parse_policy(*f.normalize);
    } catch (const std::invalid_argument& e) {
      return std::string("--normalize: ") + e.what();
    }
    const bool pinned = f.normalize->find('/') != std::string::npos;
    const bool same = pinned ? given == s.key.normalize
                             : core::policy_name(given) == core::policy_name(s.key.normalize);
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

void apply_state_scheme(const StateScheme& s, KeyOptions& c) {
  c.key = s.key;
  // Form origins are what the state keeps beside its forms; keys read
  // against it travel without positions (a query inserts nothing).
  c.key.confirm_origins = false;
  c.normalize_pinned = true;
  c.hash_seed = s.hash_seed;
}

void store_state_scheme(const StateScheme& s, io::CheckpointHeader& h) {
  h.hash_scheme = s.hash_scheme;
  h.hash_seed = s.hash_seed;
  h.bloom_layout = s.bloom_layout;
  put_key_scheme(s.key, h);
}

}  // namespace bloomshard::app
