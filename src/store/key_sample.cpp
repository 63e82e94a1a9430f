// The header check against this build and a sample of stored keys
// (store/key_sample.hpp).
#include "bloomshard/store/key_sample.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/header.hpp"
#include "core/window/slot_window.hpp"

namespace bloomshard::store {
namespace {

// The policy label of a normalization text ("nfc-casefold/v2 unicode
// 15.0.0[ key-scheme/v1]"): its first word.
std::string policy_label(const std::string& normalization) {
  return normalization.substr(0, normalization.find(' '));
}

// The "unicode X" part of a normalization text, or "" if it has none.
std::string unicode_part(const std::string& normalization) {
  const std::size_t u = normalization.find(" unicode ");
  if (u == std::string::npos) return {};
  const std::size_t from = u + 1;
  const std::size_t end = normalization.find(' ', from + 8);
  return normalization.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

// A double as the shortest text that reads back as it.
std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

void sample_first_keys(std::span<const core::SliceBaseView> views, std::uint32_t first_slice,
                       const std::string& run_name, std::vector<SampledKey>& out,
                       std::uint32_t limit) {
  std::uint32_t taken = 0;
  for (std::size_t i = 0; i < views.size() && taken < limit; ++i) {
    const core::SliceBaseView& v = views[i];
    if (v.size() == 0) continue;
    ++taken;
    const auto s = static_cast<std::uint32_t>(first_slice + i);
    out.push_back({s, v.fingerprints[0], std::string(v.key(0)),
                   "the first key of " + run_name + " tier-2 slice " + std::to_string(s)});
  }
}

std::string header_names_problem(const CheckpointHeader& h) {
  if (h.hash_scheme != core::kHashSchemeName) {
    return "attribute hash_scheme '" + h.hash_scheme + "' differs from this build's '" +
           std::string(core::kHashSchemeName) + "'";
  }
  if (h.bloom_layout != core::kBloomLayoutName) {
    return "attribute bloom_layout '" + h.bloom_layout + "' differs from this build's '" +
           std::string(core::kBloomLayoutName) + "'";
  }
  if (h.key_encoding != "bytes") {
    return "attribute key_encoding '" + h.key_encoding + "' is not one this build reads ('bytes')";
  }
  return {};
}

std::string normalization_problem(const CheckpointHeader& h) {
  core::NormalizePolicy p{};
  try {
    p = core::parse_policy(policy_label(h.normalization));
  } catch (const std::invalid_argument&) {
    return "attribute normalization '" + h.normalization +
           "' names a policy this build does not know";
  }
  const std::string unicode = unicode_part(h.normalization);
  const std::string mine = "unicode " + std::string(core::normalization_unicode_version());
  if (p != core::NormalizePolicy::kNone && !unicode.empty() && unicode != mine) {
    return "attribute normalization '" + h.normalization + "' needs " + unicode +
           ", this build has " + mine;
  }
  return {};
}

std::string layer_geometry_problem(const CheckpointHeader& h,
                                   std::span<const CheckpointLayerInfo> layers) {
  std::vector<std::uint64_t> slots;
  for (const CheckpointLayerInfo& l : layers) slots.push_back(l.slot);
  std::uint32_t window = 0;
  try {
    window = h.window.empty() ? 0 : core::parse_window_attribute(h.window).window;
  } catch (const std::invalid_argument& e) {
    return std::string("attribute window: ") + e.what();
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    // A windowed state's layer is layer j of its slot (slot_window.hpp).
    const core::BloomLayerGeometry mine =
        window == 0 ? core::layer_geometry(h.params, static_cast<std::uint32_t>(l))
                    : core::layer_geometry(core::slot_layer_params(h.params, window),
                                           core::slot_local_index(slots, l));
    const core::BloomLayerGeometry& stored = layers[l].geometry;
    // fpr_target within rounding: it is stored as computed, but older
    // builds may round the last bit differently.
    const bool fpr_same =
        std::abs(mine.fpr_target - stored.fpr_target) <= 1e-9 * std::abs(mine.fpr_target);
    if (mine.capacity != stored.capacity || mine.k != stored.k ||
        mine.blocks_per_slice != stored.blocks_per_slice || !fpr_same) {
      return "/bloom/layer_" + std::to_string(l) + " attributes (capacity " +
             std::to_string(stored.capacity) + ", k " + std::to_string(stored.k) +
             ", blocks_per_slice " + std::to_string(stored.blocks_per_slice) + ", fpr_target " +
             shortest(stored.fpr_target) +
             ") differ from what this build computes from the root attributes "
             "initial_capacity, fpr_target, growth, tightening (" +
             std::to_string(mine.capacity) + ", " + std::to_string(mine.k) + ", " +
             std::to_string(mine.blocks_per_slice) + ", " + shortest(mine.fpr_target) +
             "): the header is damaged";
    }
  }
  return {};
}

std::string key_sample_problem(const CheckpointHeader& h, std::span<const SampledKey> keys,
                               const BloomHolds& bloom_holds) {
  const std::uint32_t p = h.params.num_slices;
  // Only ASCII keys of a plain (legacy) scheme: every policy is idempotent
  // on them (identity or A-Z -> a-z), so a stored key that changes proves a
  // wrong policy. A key_scheme's keys may be digests or tuples: not these.
  core::NormalizePolicy policy = core::NormalizePolicy::kNone;
  if (h.key_scheme.empty()) {
    try {
      policy = core::parse_policy(policy_label(h.normalization));
    } catch (const std::invalid_argument&) {
      policy = core::NormalizePolicy::kNone;  // header_names_problem names it
    }
  }
  std::string scratch;
  for (const SampledKey& k : keys) {
    const core::KeyHash hash = core::hash_key(k.key, h.hash_seed);
    if (core::fingerprint(hash) != k.fingerprint) {
      return "attribute hash_seed " + std::to_string(h.hash_seed) +
             " does not reproduce the stored keys (" + k.where +
             " hashes to another fingerprint): the header or the run is damaged";
    }
    if (core::slice_of(hash, p) != k.slice) {
      return "attribute num_slices " + std::to_string(p) + " does not reproduce the stored keys (" +
             k.where + " hashes to slice " + std::to_string(core::slice_of(hash, p)) +
             "): the header or the run is damaged";
    }
    if (!bloom_holds(hash)) {
      return "the Bloom layers do not hold " + k.where +
             " (a /bloom/layer_<i> attribute k or blocks_per_slice, or the layer's words, are "
             "damaged)";
    }
    const bool ascii = std::all_of(k.key.begin(), k.key.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (policy != core::NormalizePolicy::kNone && ascii &&
        core::normalize_key(policy, k.key, scratch) != k.key) {
      return "attribute normalization '" + h.normalization +
             "' does not hold for the stored keys (" + k.where +
             " changes under it): the header or the run is damaged";
    }
  }
  return {};
}

}  // namespace bloomshard::store
