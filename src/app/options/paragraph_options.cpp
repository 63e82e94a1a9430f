#include "app/options/paragraph_options.hpp"

#include <stdexcept>

#include "bloomshard/core/paragraph_split.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;

void add_paragraph_options(po::options_description& job, ParagraphFlags& f) {
  // clang-format off
  job.add_options()
    ("unit", po::value(&f.unit)->default_value(f.unit),
     "what a key stands for: record (one key per record) | paragraph (each paragraph of the "
     "--key-field text is a key; duplicate paragraphs are cut out of the record, bff-style; "
     "docs/keys.md) | minhash (the MinHash band keys of the --key-field text; a record with a "
     "band key seen before is a near-duplicate; docs/near-duplicates.md)")
    ("paragraph-split", po::value(&f.split)->default_value(f.split),
     "--unit paragraph: newline (each line is a paragraph) | blankline (paragraphs are "
     "separated by blank lines)")
    ("min-paragraph-bytes", po::value(&f.min_paragraph_bytes)->default_value(f.min_paragraph_bytes),
     "--unit paragraph: shorter paragraphs (normalized bytes) are kept and never keyed")
    ("drop-if-removed-fraction",
     po::value(&f.drop_if_removed_fraction)->default_value(f.drop_if_removed_fraction),
     "--unit paragraph: drop a record whose text lost more than this fraction of its bytes "
     "(0..1; 1: never)");
  // clang-format on
}

void apply_paragraph_flags(const ParagraphFlags& f, core::KeyScheme& key) {
  if (f.unit == "record") {
    key.unit = core::KeyUnit::kRecord;
    return;
  }
  if (f.unit == "minhash") {
    key.unit = core::KeyUnit::kMinHash;  // its items: apply_minhash_flags
    return;
  }
  if (f.unit != "paragraph") {
    throw std::invalid_argument("--unit must be record, paragraph or minhash, not '" + f.unit +
                                "'");
  }
  key.unit = core::KeyUnit::kParagraph;
  try {
    key.paragraph_split = core::parse_paragraph_split(f.split);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--paragraph-split: ") + e.what());
  }
  key.min_paragraph_bytes = f.min_paragraph_bytes;
  key.drop_if_removed_fraction = f.drop_if_removed_fraction;
  if (key.digest == core::KeyDigest::kNone) key.digest = core::KeyDigest::kXxh3_128;
}

}  // namespace bloomshard::app
