// The --unit minhash options of `bloomshard dedup`, part of the key group
// (app/options/key_options.hpp): --shingle, --bands, --rows and
// --confirm-jaccard. With
// --unit minhash (named by the paragraph options' --unit) they become part
// of the key scheme (core/key_scheme.hpp), so a state keeps them and a job
// that asks for other values is refused. The sketch they define:
// docs/near-duplicates.md.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "bloomshard/core/key_scheme.hpp"

namespace bloomshard::app {

/// The options as typed.
struct MinHashFlags {
  std::string shingle = "word:5";
  std::uint32_t bands = 14;
  std::uint32_t rows = 8;
  std::string confirm_jaccard;  ///< as typed; empty: not given (off)
};

/// Adds the four options to `job`, writing into `flags`.
void add_minhash_options(boost::program_options::options_description& job, MinHashFlags& flags);

/// Sets the minhash items of `key` (key.unit must be kMinHash); the shingle
/// in its canonical form. Throws std::invalid_argument naming the option
/// (--confirm-jaccard outside (0, 1]).
/// Whether the scheme as a whole fits minhash (one field, no digest or
/// normalization) is core::key_scheme_problem's to say.
void apply_minhash_flags(const MinHashFlags& flags, core::KeyScheme& key);

/// Why the minhash flags cannot apply to a job of another unit, or "":
/// --confirm-jaccard given without --unit minhash. (--shingle, --bands and
/// --rows have defaults and are ignored by the other units.)
[[nodiscard]] std::string minhash_flags_without_unit(const MinHashFlags& flags);

}  // namespace bloomshard::app
