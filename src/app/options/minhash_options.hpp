// The --unit minhash options of `bloomshard dedup`, part of the key group
// (app/options/key_options.hpp): --shingle, --bands and --rows. With
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
};

/// Adds the three options to `job`, writing into `flags`.
void add_minhash_options(boost::program_options::options_description& job, MinHashFlags& flags);

/// Sets the minhash items of `key` (key.unit must be kMinHash); the shingle
/// in its canonical form. Throws std::invalid_argument naming the option.
/// Whether the scheme as a whole fits minhash (one field, no digest or
/// normalization) is core::key_scheme_problem's to say.
void apply_minhash_flags(const MinHashFlags& flags, core::KeyScheme& key);

}  // namespace bloomshard::app
