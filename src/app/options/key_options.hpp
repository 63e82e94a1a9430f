// The key group: how a record's key bytes are made and hashed (key fields,
// normalization, digest, unit and its paragraph or minhash items, hash
// seed) and the longest key accepted.
// A state keeps the scheme, so dedup sets it and query takes the state's
// (state_key_scheme.hpp).
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "app/options/minhash_options.hpp"
#include "app/options/option_table.hpp"
#include "app/options/paragraph_options.hpp"
#include "bloomshard/core/key_scheme.hpp"

namespace bloomshard::app {

struct KeyOptions {
  /// Key fields, --normalize, --text-normalize, --key-digest, --missing-field
  /// and --unit: how a record's key bytes are made (core/key_scheme.hpp).
  core::KeyScheme key;
  bool normalize_pinned = false;  ///< the version was named ("nfc-casefold/v2"): a state
                                  ///< saved with another version is refused, not adopted
  std::uint64_t hash_seed = 0;    ///< 0: core::kDefaultHashSeed
  std::uint64_t max_key_bytes = 64ULL << 10;
};

/// The key options as typed, before they are checked.
struct KeyFlags {
  std::vector<std::string> key_fields;
  std::string normalize = "none";
  std::string text_normalize = "none";
  std::string key_digest = "none";
  std::string missing_field = "reject";
  ParagraphFlags paragraph;
  MinHashFlags minhash;
};

/// Registers --key-field, --missing-field, --text-normalize, --key-digest,
/// --normalize, --hash-seed, --max-key-bytes and the --unit paragraph and
/// --unit minhash options into `pool`. Query takes --max-key-bytes only; its --key-field,
/// --normalize and --hash-seed are checks against the state's scheme.
void add_key_options(boost::program_options::options_description& pool, KeyOptions& keys,
                     KeyFlags& flags, OptionsFor command);

/// Builds the key scheme from the typed flags; the hash seed 0 becomes the
/// default seed. Throws std::invalid_argument naming the option.
void apply_key_flags(const KeyFlags& flags, KeyOptions& keys);

/// The first problem of the scheme or the key limit (option named), or empty.
[[nodiscard]] std::string key_problem(const KeyOptions& keys);

}  // namespace bloomshard::app
