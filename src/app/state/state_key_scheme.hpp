// The key scheme of a state, read and written in ONE place, so every command
// that opens a state (dedup; query and merge) makes keys exactly as the
// state was built and refuses one that differs, naming both sides.
//  - core::KeyScheme: how a record's key bytes are made (fields, missing
//    field, text rule, normalization policy, digest; core/key_scheme.hpp);
//    put_key_scheme / key_scheme_of write and read it (the `key_field`,
//    `normalization` and optional `key_scheme` attributes).
//  - StateScheme: that plus how keys are hashed and laid out (hash scheme,
//    seed, Bloom layout): what query must apply and merge must compare.
// Attributes: docs/checkpoint-format.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/options/dedup_options.hpp"
#include "app/options/key_options.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {

/// The `normalization` attribute: "nfc/v1 unicode 15.0.0", followed by
/// " key-scheme/v1" when the scheme needs the key_scheme attribute, so that
/// builds before it (which compare this text whole) refuse such a state
/// instead of reading digest or tuple keys as plain ones.
[[nodiscard]] std::string normalization_identity(const core::KeyScheme& key);

/// Fills h.normalization, h.key_field, h.key_encoding and h.key_scheme.
void put_key_scheme(const core::KeyScheme& key, io::CheckpointHeader& h);

/// The scheme a header records (a state without key_scheme: the legacy
/// scheme of its key_field and normalization). Throws std::invalid_argument
/// naming what cannot be read.
[[nodiscard]] core::KeyScheme key_scheme_of(const io::CheckpointHeader& h);

/// One line for `info`: "normalize=nfc/v1; fields=id; missing=reject;
/// text=none/v1; digest=none/v1", or why the header's scheme is unreadable.
[[nodiscard]] std::string describe_key_scheme(const io::CheckpointHeader& h);

struct StateScheme {
  std::string hash_scheme;  ///< e.g. core::kHashSchemeName
  std::uint64_t hash_seed = 0;
  std::string bloom_layout;   ///< core::kBloomLayoutName
  std::string normalization;  ///< identity as stored: "nfc/v1 unicode 15.0.0[ key-scheme/v1]"
  std::string key_encoding;   ///< "bytes"
  core::KeyScheme key;
};

/// The scheme stored in a checkpoint header. Throws std::runtime_error when
/// this build cannot apply it (a hash scheme, Bloom layout, normalization or
/// Unicode version it does not know, an unreadable key scheme), naming the
/// value.
[[nodiscard]] StateScheme state_scheme_of(const io::CheckpointHeader& header);

/// The first element in which two states' schemes differ, as
/// "<what> differs: '<a>' vs '<b>'", or empty if they are the same.
[[nodiscard]] std::string state_scheme_difference(const StateScheme& a, const StateScheme& b);

/// Flags a command line gave that would choose a scheme (each unset: not
/// given). A given flag must agree with the state's scheme.
struct KeySchemeFlags {
  std::optional<std::vector<std::string>> key_fields;
  std::optional<std::string> normalize;  ///< as typed: "nfc", "nfc-casefold/v1"
  std::optional<std::uint64_t> hash_seed;
};

/// Why `flags` conflict with `scheme` (naming flag, state value and given
/// value), or empty. A bare policy name matches any version of it.
[[nodiscard]] std::string key_scheme_conflict(const StateScheme& scheme,
                                              const KeySchemeFlags& flags);

/// Sets the key group's fields that decide keys (the key scheme, hash seed)
/// to the state's, so an InputFeed extracts and hashes keys the way the
/// state did (without confirm_origins: such a feed's wire keys carry no
/// positions). A DedupConfig or a query's feed converts to its KeyOptions.
void apply_state_scheme(const StateScheme& scheme, KeyOptions& keys);

/// The fields of a header that carry the scheme (for a state written from one).
void store_state_scheme(const StateScheme& scheme, io::CheckpointHeader& header);

}  // namespace bloomshard::app
