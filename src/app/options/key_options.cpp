#include "app/options/key_options.hpp"

#include <stdexcept>

#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;

void add_key_options(po::options_description& pool, KeyOptions& k, KeyFlags& flags,
                     OptionsFor command) {
  // clang-format off
  pool.add_options()
    ("key-field", po::value(&flags.key_fields)->composing(),
     "JSONL key field, dotted path for nested fields (default id; plain-line files use the "
     "whole line); repeatable: the key is the tuple of the fields, length-prefixed "
     "(docs/keys.md)")
    ("missing-field", po::value(&flags.missing_field)->default_value(flags.missing_field),
     "a record without a key field: reject (to the reject file) | empty (the field's value "
     "is the empty string)")
    ("text-normalize", po::value(&flags.text_normalize)->default_value(flags.text_normalize),
     "content-key text rules, before --normalize: none | ws (trim, collapse Unicode "
     "White_Space runs to one space) | ws-lower (ws, then nfc-casefold); docs/keys.md")
    ("key-digest", po::value(&flags.key_digest)->default_value(flags.key_digest),
     "none | xxh3-128 | sha256: the key becomes the 16- or 32-byte digest of the normalized "
     "field(s), so tier 2 stores a fixed size per key and no field is too long")
    ("normalize", po::value(&flags.normalize)->default_value(flags.normalize),
     "key normalization: none | nfc | nfc-casefold (v2, canonical caseless matching) | "
     "nfc-casefold/v1 (legacy); a state keeps the version it was saved with (docs/keys.md)")
    ("max-key-bytes", po::value(&k.max_key_bytes)->default_value(k.max_key_bytes),
     help_for(command,
              "longer keys are rejected (not with --key-digest: a digest key has a fixed size)",
              "longer keys are rejected"))
    ("hash-seed", po::value(&k.hash_seed)->default_value(k.hash_seed),
     "XXH3 seed (0: the built-in default); fixed for the filter's life");
  // clang-format on
  add_paragraph_options(pool, flags.paragraph);
  add_minhash_options(pool, flags.minhash);
}

namespace {

// Named after the option, so the message says which one to fix.
template <class Parse>
auto named(const char* option, Parse parse) {
  try {
    return parse();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(option) + ": " + e.what());
  }
}

}  // namespace

void apply_key_flags(const KeyFlags& flags, KeyOptions& k) {
  core::KeyScheme& key = k.key;
  if (!flags.key_fields.empty()) key.fields = flags.key_fields;
  key.normalize = core::parse_policy(flags.normalize);
  key.text =
      named("--text-normalize", [&] { return core::parse_text_normalize(flags.text_normalize); });
  key.digest = named("--key-digest", [&] { return core::parse_key_digest(flags.key_digest); });
  if (flags.missing_field == "reject") {
    key.missing = core::MissingField::kReject;
  } else if (flags.missing_field == "empty") {
    key.missing = core::MissingField::kEmpty;
  } else {
    throw std::invalid_argument("--missing-field must be reject or empty, not '" +
                                flags.missing_field + "'");
  }
  apply_paragraph_flags(flags.paragraph, key);
  if (key.unit == core::KeyUnit::kMinHash) apply_minhash_flags(flags.minhash, key);
  k.normalize_pinned = flags.normalize.find('/') != std::string::npos;
  if (k.hash_seed == 0) k.hash_seed = core::kDefaultHashSeed;
}

std::string key_problem(const KeyOptions& k) {
  if (std::string p = core::key_scheme_problem(k.key); !p.empty()) return "--key-field: " + p;
  if (k.max_key_bytes < 1 || k.max_key_bytes > (16ULL << 20)) {
    return "--max-key-bytes must be in [1, 16 MiB]";
  }
  return {};
}

}  // namespace bloomshard::app
