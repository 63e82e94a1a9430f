// The key scheme: everything that decides which bytes a record's key is,
// in ONE struct with ONE write / read / compare, so that every command that
// opens a state (dedup, and query/merge) derives keys exactly as the state
// was built. Stored in a checkpoint as the existing `key_field` and
// `normalization` attributes plus the optional `key_scheme` attribute
// (docs/checkpoint-format.md); a state without it has the scheme of the
// builds before it: one field, missing field rejected, text none/v1,
// digest none/v1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/key_digest.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/paragraph_split.hpp"
#include "bloomshard/core/text_normalize.hpp"

namespace bloomshard::core {

/// What a record without one of the key fields is: a reject, or a record
/// whose value for that field is the empty string.
enum class MissingField : std::uint8_t { kReject = 0, kEmpty = 1 };

/// What one key stands for: a whole record, each paragraph of its text
/// field (--unit paragraph: many keys per record, docs/keys.md), or each
/// MinHash band of its text field (--unit minhash: the bands' 16-byte keys,
/// docs/near-duplicates.md).
enum class KeyUnit : std::uint8_t { kRecord = 0, kParagraph = 1, kMinHash = 2 };

struct KeyScheme {
  /// JSONL field paths (dotted); more than one makes the key a tuple. Plain
  /// line files always key on the whole line (one value).
  std::vector<std::string> fields{"id"};
  MissingField missing = MissingField::kReject;
  NormalizePolicy normalize = NormalizePolicy::kNone;  ///< per field, after `text`
  TextNormalize text = TextNormalize::kNone;           ///< per field, first
  KeyDigest digest = KeyDigest::kNone;                 ///< over the (tuple) key, last
  // --unit paragraph; the rest only counts with it. A
  // state stores them all: a resume must split, skip and drop as the run
  // began, or its kept set would depend on where it was cut.
  KeyUnit unit = KeyUnit::kRecord;
  ParagraphSplit paragraph_split = ParagraphSplit::kNewline;
  /// Paragraphs whose normalized text is shorter are kept and not keyed
  /// (1: only empty ones; blank lines under ws).
  std::uint64_t min_paragraph_bytes = 1;
  /// A record that lost more than this fraction of its text is dropped
  /// whole (1.0: never).
  double drop_if_removed_fraction = 1.0;
  // --unit minhash; the rest only counts with it. Band keys depend on all
  // three, so a state stores them and a job that asks for others is refused.
  std::string shingle = "word:5";  ///< "word:N" or "char:N", canonical (no leading zeros)
  std::uint32_t bands = 14;
  std::uint32_t rows = 8;
  /// --confirm-jaccard T: a band hit counts only when the Jaccard
  /// similarity estimated against the record that first inserted the key
  /// reaches T (0 < T <= 1); 0: off (every band hit counts). With it, each
  /// band key travels and is kept with the b-bit form of its record's
  /// signature (core::kDefaultConfirmBits bits a value;
  /// docs/near-duplicates.md section 6). Saved as the item
  /// "confirm-jaccard=T/b4" (only when on), which builds before it refuse;
  /// a state keeps the forms beside tier 2's keys (/tier2/forms).
  double confirm_jaccard = 0.0;
  /// With confirm_jaccard, in a state: each band key's form goes with its
  /// origin, the (run ordinal, position) of the record that first
  /// inserted it (/tier2/form_origins), so annotate mode can name a match
  /// from an earlier run. Saved as the item "confirm-origins=v1" after
  /// confirm-jaccard (only when on), which builds before it refuse. A
  /// property of the state, not a choice of the job: key_scheme_difference
  /// ignores it (a state written without origins goes on without them).
  bool confirm_origins = false;
  friend bool operator==(const KeyScheme&, const KeyScheme&) = default;
};

/// Version of the `key_scheme` attribute's syntax and of the tuple
/// encoding (key_builder.hpp).
inline constexpr std::string_view kKeySchemeVersionLabel = "key-scheme/v1";

/// Why `s` cannot be used (no field, an empty field, a field holding ',' or
/// ';' which the attribute uses as separators), or "" if it can.
[[nodiscard]] std::string key_scheme_problem(const KeyScheme& s);

/// True when the scheme is one the builds before the key_scheme attribute
/// could express (one field, reject, text none, digest none, record unit).
[[nodiscard]] bool is_legacy_key_scheme(const KeyScheme& s) noexcept;

/// The `key_field` attribute: the fields joined by ','.
[[nodiscard]] std::string key_fields_text(const KeyScheme& s);

/// "fields=url,title; missing=reject; text=none/v1; digest=none/v1": the
/// scheme's items besides normalize (which has its own attribute); a
/// paragraph scheme adds "; unit=paragraph/v1; split=blankline/v1;
/// min-paragraph-bytes=N; drop-if-removed-fraction=F" (F in shortest
/// round-trip decimal), items the part-2 builds do not know and refuse; a
/// minhash scheme adds "; unit=minhash/v1; shingle=word:5; bands=14;
/// rows=8", which builds before it refuse (unknown unit value), and with
/// --confirm-jaccard "; confirm-jaccard=0.8/b4" (T, the forms' 4 bits).
[[nodiscard]] std::string key_scheme_items(const KeyScheme& s);

/// The `key_scheme` attribute: "" for a legacy scheme (the attribute is
/// then not written), else e.g.
/// "key-scheme/v1; fields=url,title; missing=empty; text=ws/v1; digest=sha256/v1".
[[nodiscard]] std::string key_scheme_attribute(const KeyScheme& s);

/// The scheme a state was saved with, from its `key_field` attribute, the
/// normalization label ("nfc/v1") and the `key_scheme` attribute (may be
/// empty). Throws std::invalid_argument naming what it cannot read.
[[nodiscard]] KeyScheme key_scheme_from_state(std::string_view key_field,
                                              std::string_view normalization_label,
                                              std::string_view attribute);

/// The first difference between the scheme a state was saved with and the
/// one a job asks for, naming both ("text normalization differs: the state
/// has ws/v1, this job asks for none/v1"), or "" when they agree.
[[nodiscard]] std::string key_scheme_difference(const KeyScheme& saved, const KeyScheme& job);

}  // namespace bloomshard::core
