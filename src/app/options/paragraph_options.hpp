// The --unit paragraph options of `bloomshard dedup`, part of the key
// group (app/options/key_options.hpp): --unit, --paragraph-split,
// --min-paragraph-bytes and --drop-if-removed-fraction. They become part
// of the key scheme (core/key_scheme.hpp), so a state keeps them and a
// resume must agree.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "bloomshard/core/key_scheme.hpp"

namespace bloomshard::app {

/// The options as typed.
struct ParagraphFlags {
  std::string unit = "record";
  std::string split = "newline";
  std::uint64_t min_paragraph_bytes = 1;
  double drop_if_removed_fraction = 1.0;
};

/// Adds the four options to `job`, writing into `flags`.
void add_paragraph_options(boost::program_options::options_description& job, ParagraphFlags& flags);

/// Sets key.unit (record, paragraph or minhash) and, for --unit paragraph,
/// the paragraph items; a
/// paragraph scheme without --key-digest gets xxh3-128 (paragraph keys are
/// always digests). Throws std::invalid_argument naming the option.
void apply_paragraph_flags(const ParagraphFlags& flags, core::KeyScheme& key);

}  // namespace bloomshard::app
