// The key scheme a saved state was built with: how a record's key is
// found (key field), normalized and hashed. Commands that read a state
// (`query`, `merge`) take it from the state's header through key_scheme_of()
// and nowhere else, so a new scheme element (a digest key, a composite
// key, a text policy) is added here once. `dedup` adopts a state's scheme
// in run_state.cpp (decide_start).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bloomshard/app/dedup_options.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/io/checkpoint_store.hpp"

namespace bloomshard::app {

struct KeyScheme {
  std::string hash_scheme;  ///< e.g. core::kHashSchemeName
  std::uint64_t hash_seed = 0;
  std::string bloom_layout;   ///< core::kBloomLayoutName
  std::string normalization;  ///< identity as stored: "nfc/v1 unicode 15.0.0"
  core::NormalizePolicy normalize = core::NormalizePolicy::kNone;  ///< parsed from it
  std::string key_field;
  std::string key_encoding;  ///< "bytes"
};

/// The scheme stored in a checkpoint header. Throws std::runtime_error when
/// this build cannot apply it (a hash scheme, Bloom layout or normalization
/// it does not know), naming the value.
[[nodiscard]] KeyScheme key_scheme_of(const io::CheckpointHeader& header);

/// The first element in which two states' schemes differ, as
/// "<what> differs: '<a>' vs '<b>'", or empty if they are the same.
[[nodiscard]] std::string key_scheme_difference(const KeyScheme& a, const KeyScheme& b);

/// Flags a command line gave that would choose a scheme (each unset: not
/// given). A given flag must agree with the state's scheme.
struct KeySchemeFlags {
  std::optional<std::string> key_field;
  std::optional<std::string> normalize;  ///< as typed: "nfc", "nfc-casefold/v1"
  std::optional<std::uint64_t> hash_seed;
};

/// Why `flags` conflict with `scheme` (naming flag, state value and given
/// value), or empty. A bare policy name matches any version of it.
[[nodiscard]] std::string key_scheme_conflict(const KeyScheme& scheme, const KeySchemeFlags& flags);

/// Sets the fields of `config` that decide keys (key field, normalization,
/// hash seed) to the scheme's, so an InputFeed extracts and hashes keys the
/// way the state did.
void apply_key_scheme(const KeyScheme& scheme, DedupConfig& config);

/// The fields of a header that carry the scheme (for a state written from one).
void store_key_scheme(const KeyScheme& scheme, io::CheckpointHeader& header);

}  // namespace bloomshard::app
