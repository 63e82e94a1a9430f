#include "bloomshard/core/key_scheme.hpp"

#include <charconv>
#include <stdexcept>

#include "core/minhash/minhash_signature.hpp"
#include "core/minhash/shingle.hpp"

namespace bloomshard::core {
namespace {

std::string_view missing_name(MissingField m) noexcept {
  return m == MissingField::kEmpty ? "empty" : "reject";
}

std::vector<std::string> split_fields(std::string_view text) {
  std::vector<std::string> out;
  for (;;) {
    const std::size_t comma = text.find(',');
    out.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

std::string_view unit_label(KeyUnit u) noexcept {
  switch (u) {
    case KeyUnit::kParagraph:
      return "paragraph/v1";
    case KeyUnit::kMinHash:
      return "minhash/v1";
    case KeyUnit::kRecord:
      break;
  }
  return "record/v1";
}

// Why the --unit minhash items cannot be used, or "".
std::string minhash_problem(const KeyScheme& s) {
  if (s.fields.size() != 1) return "--unit minhash sketches one text field, not a tuple";
  if (s.digest != KeyDigest::kNone || s.text != TextNormalize::kNone ||
      s.normalize != NormalizePolicy::kNone) {
    return "--unit minhash normalizes its text by minhash-text/v1 and its band keys are "
           "digests: --normalize, --text-normalize and --key-digest do not apply (leave them "
           "none)";
  }
  try {
    if (shingle_spec_name(parse_shingle_spec(s.shingle)) != s.shingle) {
      return "--shingle '" + s.shingle + "' is not in its canonical form";
    }
  } catch (const std::invalid_argument& e) {
    return std::string("--shingle: ") + e.what();
  }
  if (s.bands == 0 || s.rows == 0 || std::uint64_t{s.bands} * s.rows > kMaxSignatureValues) {
    return "--bands " + std::to_string(s.bands) + " x --rows " + std::to_string(s.rows) +
           ": each must be at least 1 and their product at most " +
           std::to_string(kMaxSignatureValues);
  }
  if (!(s.confirm_jaccard == 0.0 || (s.confirm_jaccard > 0.0 && s.confirm_jaccard <= 1.0))) {
    return "--confirm-jaccard must be in (0, 1]";
  }
  if (s.confirm_origins && s.confirm_jaccard == 0.0) {
    return "the origins of confirmation forms (confirm-origins) need --confirm-jaccard";
  }
  return {};
}

std::uint32_t parse_u32(std::string_view item, std::string_view value) {
  std::uint32_t n = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), n);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size()) {
    throw std::invalid_argument("key_scheme item '" + std::string(item) + "' is not a count");
  }
  return n;
}

// Shortest text that reads back as the same double (std::to_chars).
std::string fraction_text(double f) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

std::uint64_t parse_count(std::string_view item, std::string_view value) {
  std::uint64_t n = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), n);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size()) {
    throw std::invalid_argument("key_scheme item '" + std::string(item) + "' is not a count");
  }
  return n;
}

double parse_fraction(std::string_view item, std::string_view value) {
  double f = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), f);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size()) {
    throw std::invalid_argument("key_scheme item '" + std::string(item) + "' is not a number");
  }
  return f;
}

// --confirm-jaccard T with the forms' bits per value: "0.8/b4".
constexpr std::string_view kConfirmFormSuffix = "/b4";

std::string confirm_text(double t) { return fraction_text(t) + std::string(kConfirmFormSuffix); }

double parse_confirm(std::string_view item, std::string_view value) {
  if (value.size() <= kConfirmFormSuffix.size() ||
      value.substr(value.size() - kConfirmFormSuffix.size()) != kConfirmFormSuffix) {
    throw std::invalid_argument("key_scheme item '" + std::string(item) +
                                "' is not known (only 4-bit forms, /b4, are)");
  }
  const double t = parse_fraction(item, value.substr(0, value.size() - kConfirmFormSuffix.size()));
  if (!(t > 0.0 && t <= 1.0)) {  // written only when on
    throw std::invalid_argument("key_scheme item '" + std::string(item) + "' is not in (0, 1]");
  }
  return t;
}

// The item of a confirming state whose forms keep their origins.
constexpr std::string_view kOriginsItem = "confirm-origins=v1";

// "off" or T as the scheme item writes it.
std::string confirm_label(double t) { return t == 0.0 ? "off" : fraction_text(t); }

}  // namespace

std::string key_scheme_problem(const KeyScheme& s) {
  if (s.fields.empty()) return "no key field";
  for (const std::string& f : s.fields) {
    if (f.empty()) return "a key field is empty";
    if (f.find_first_of(",;") != std::string::npos) {
      return "key field '" + f + "' contains ',' or ';' (they separate fields in the state)";
    }
  }
  if (s.unit == KeyUnit::kParagraph) {
    if (s.fields.size() != 1) return "--unit paragraph splits one text field, not a tuple";
    if (s.digest == KeyDigest::kNone) return "--unit paragraph keys paragraphs by a digest";
    if (!(s.drop_if_removed_fraction >= 0.0 && s.drop_if_removed_fraction <= 1.0)) {
      return "--drop-if-removed-fraction must be in [0, 1]";
    }
  }
  if (s.unit == KeyUnit::kMinHash) return minhash_problem(s);
  if (s.confirm_jaccard != 0.0) return "--confirm-jaccard applies to --unit minhash only";
  if (s.confirm_origins) return "confirm-origins applies to --unit minhash only";
  return {};
}

bool is_legacy_key_scheme(const KeyScheme& s) noexcept {
  return s.fields.size() == 1 && s.missing == MissingField::kReject &&
         s.text == TextNormalize::kNone && s.digest == KeyDigest::kNone &&
         s.unit == KeyUnit::kRecord;
}

std::string key_fields_text(const KeyScheme& s) {
  std::string out;
  for (const std::string& f : s.fields) out += (out.empty() ? "" : ",") + f;
  return out;
}

std::string key_scheme_items(const KeyScheme& s) {
  std::string items =
      "fields=" + key_fields_text(s) + "; missing=" + std::string(missing_name(s.missing)) +
      "; text=" + text_normalize_label(s.text) + "; digest=" + key_digest_label(s.digest);
  // Record-unit schemes keep the part-2 text, so their states stay as they were.
  if (s.unit == KeyUnit::kParagraph) {
    items += "; unit=" + std::string(unit_label(s.unit)) +
             "; split=" + paragraph_split_label(s.paragraph_split) +
             "; min-paragraph-bytes=" + std::to_string(s.min_paragraph_bytes) +
             "; drop-if-removed-fraction=" + fraction_text(s.drop_if_removed_fraction);
  }
  if (s.unit == KeyUnit::kMinHash) {
    items += "; unit=" + std::string(unit_label(s.unit)) + "; shingle=" + s.shingle +
             "; bands=" + std::to_string(s.bands) + "; rows=" + std::to_string(s.rows);
    // Only with confirmation, so the attribute of every other minhash
    // scheme stays as it was; builds before it refuse the item.
    if (s.confirm_jaccard != 0.0) items += "; confirm-jaccard=" + confirm_text(s.confirm_jaccard);
    // Origins beside the forms: builds before them refuse the item rather
    // than continue the state with runs that lack them.
    if (s.confirm_jaccard != 0.0 && s.confirm_origins) items += "; " + std::string(kOriginsItem);
  }
  return items;
}

std::string key_scheme_attribute(const KeyScheme& s) {
  if (is_legacy_key_scheme(s)) return {};
  return std::string(kKeySchemeVersionLabel) + "; " + key_scheme_items(s);
}

KeyScheme key_scheme_from_state(std::string_view key_field, std::string_view normalization_label,
                                std::string_view attribute) {
  KeyScheme s;
  s.normalize = parse_policy(normalization_label);
  if (attribute.empty()) {
    s.fields = {std::string(key_field)};
    return s;
  }
  const std::string prefix = std::string(kKeySchemeVersionLabel) + "; ";
  if (attribute.substr(0, prefix.size()) != prefix) {
    throw std::invalid_argument("key_scheme '" + std::string(attribute) + "' is not " +
                                std::string(kKeySchemeVersionLabel) +
                                " (written by a newer bloomshard?)");
  }
  std::string_view rest = attribute.substr(prefix.size());
  bool seen_fields = false;
  while (!rest.empty()) {
    const std::size_t end = rest.find("; ");
    const std::string_view item = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 2);
    const std::size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    if (name == "fields") {
      s.fields = split_fields(value);
      seen_fields = true;
    } else if (name == "missing" && (value == "reject" || value == "empty")) {
      s.missing = value == "empty" ? MissingField::kEmpty : MissingField::kReject;
    } else if (name == "text") {
      s.text = parse_text_normalize(value);
    } else if (name == "digest") {
      s.digest = parse_key_digest(value);
    } else if (name == "unit" && value == unit_label(KeyUnit::kParagraph)) {
      s.unit = KeyUnit::kParagraph;
    } else if (name == "unit" && value == unit_label(KeyUnit::kMinHash)) {
      s.unit = KeyUnit::kMinHash;
    } else if (name == "shingle") {
      s.shingle = std::string(value);
    } else if (name == "bands") {
      s.bands = parse_u32(item, value);
    } else if (name == "rows") {
      s.rows = parse_u32(item, value);
    } else if (name == "confirm-jaccard") {
      s.confirm_jaccard = parse_confirm(item, value);
    } else if (item == kOriginsItem) {
      s.confirm_origins = true;
    } else if (name == "split") {
      s.paragraph_split = parse_paragraph_split(value);
    } else if (name == "min-paragraph-bytes") {
      s.min_paragraph_bytes = parse_count(item, value);
    } else if (name == "drop-if-removed-fraction") {
      s.drop_if_removed_fraction = parse_fraction(item, value);
    } else {
      throw std::invalid_argument("key_scheme item '" + std::string(item) + "' is not known");
    }
  }
  if (!seen_fields || key_fields_text(s) != key_field) {
    throw std::invalid_argument("key_scheme fields do not match key_field '" +
                                std::string(key_field) + "'");
  }
  if (s.unit == KeyUnit::kMinHash) {
    if (std::string problem = minhash_problem(s); !problem.empty()) {
      throw std::invalid_argument("key_scheme '" + std::string(attribute) + "': " + problem);
    }
  }
  return s;
}

std::string key_scheme_difference(const KeyScheme& saved, const KeyScheme& job) {
  const auto differs = [](const char* what, const std::string& then, const std::string& now) {
    return std::string(what) + " differs: the state has " + then + ", this job asks for " + now;
  };
  if (saved.fields != job.fields) {
    return differs("key field", "'" + key_fields_text(saved) + "'",
                   "'" + key_fields_text(job) + "'");
  }
  if (saved.missing != job.missing) {
    return differs("--missing-field", std::string(missing_name(saved.missing)),
                   std::string(missing_name(job.missing)));
  }
  if (saved.normalize != job.normalize) {
    return differs("normalization", policy_label(saved.normalize), policy_label(job.normalize));
  }
  if (saved.text != job.text) {
    return differs("text normalization (--text-normalize)", text_normalize_label(saved.text),
                   text_normalize_label(job.text));
  }
  if (saved.digest != job.digest) {
    return differs("key digest (--key-digest)", key_digest_label(saved.digest),
                   key_digest_label(job.digest));
  }
  if (saved.unit != job.unit) {
    return differs("key unit (--unit)", std::string(unit_label(saved.unit)),
                   std::string(unit_label(job.unit)));
  }
  if (saved.unit == KeyUnit::kParagraph) {
    if (saved.paragraph_split != job.paragraph_split) {
      return differs("--paragraph-split", paragraph_split_label(saved.paragraph_split),
                     paragraph_split_label(job.paragraph_split));
    }
    if (saved.min_paragraph_bytes != job.min_paragraph_bytes) {
      return differs("--min-paragraph-bytes", std::to_string(saved.min_paragraph_bytes),
                     std::to_string(job.min_paragraph_bytes));
    }
    if (saved.drop_if_removed_fraction != job.drop_if_removed_fraction) {
      return differs("--drop-if-removed-fraction", fraction_text(saved.drop_if_removed_fraction),
                     fraction_text(job.drop_if_removed_fraction));
    }
  }
  if (saved.unit == KeyUnit::kMinHash) {
    if (saved.shingle != job.shingle) return differs("--shingle", saved.shingle, job.shingle);
    if (saved.bands != job.bands) {
      return differs("--bands", std::to_string(saved.bands), std::to_string(job.bands));
    }
    if (saved.rows != job.rows) {
      return differs("--rows", std::to_string(saved.rows), std::to_string(job.rows));
    }
    if (saved.confirm_jaccard != job.confirm_jaccard) {
      return differs("--confirm-jaccard", confirm_label(saved.confirm_jaccard),
                     confirm_label(job.confirm_jaccard));
    }
  }
  return {};
}

}  // namespace bloomshard::core
