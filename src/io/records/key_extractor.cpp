// Key extraction. A JSONL line is first parsed with simdjson DOM, whose
// stage 2 runs in the library's runtime-dispatched SIMD kernel and validates
// the whole document at about half the cost of walking it with the inline On
// Demand code (compiled for the generic target: the build has no -march).
// DOM refuses some valid JSON (1e400, 30-digit integers), so every DOM
// failure, and every non-object root, is decided again by the On Demand walk
// below; what is accepted, and each reject reason, is exactly the walk's.
// Because On Demand is lazy, the walk visits the whole document (every string
// unescaped, every number and atom parsed) so that a line is accepted only if
// it is one valid JSON object.
#include "io/records/key_extractor.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "io/records/json_long_string.hpp"
#include "io/records/key_extractor_json.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::io {
namespace od = simdjson::ondemand;
using json_detail::is_json_space;
using json_detail::kDomMaxDepth;
using json_detail::kDomMaxLineBytes;
using json_detail::kMaxJsonDepth;
using simdjson::error_code;

namespace {

// A long string's stand-in: an ASCII string of exactly kPlaceholderBytes,
// "bloomshard:long:<index>~~~...". Every other string the parser sees has
// a token of at most kLongStringRawBytes, so at most kPlaceholderBytes - 1
// unescaped bytes: a value of kPlaceholderBytes is always a placeholder.
constexpr std::size_t kPlaceholderBytes = kLongStringRawBytes - 1;
constexpr std::string_view kPlaceholderPrefix = "bloomshard:long:";

// Writes the placeholder token (quotes included) of long string `index`.
void write_placeholder(std::size_t index, char* out) {
  out[0] = '"';
  char* p = out + 1;
  std::memcpy(p, kPlaceholderPrefix.data(), kPlaceholderPrefix.size());
  char* digits = p + kPlaceholderPrefix.size();
  char* const end = p + kPlaceholderBytes;
  digits = std::to_chars(digits, end, index).ptr;
  std::memset(digits, '~', static_cast<std::size_t>(end - digits));
  *end = '"';
}

// The index of the placeholder `v`, or SIZE_MAX if `v` is none.
std::size_t placeholder_index(std::string_view v) noexcept {
  if (v.size() != kPlaceholderBytes || !v.starts_with(kPlaceholderPrefix)) return SIZE_MAX;
  std::size_t index = 0;
  const char* begin = v.data() + kPlaceholderPrefix.size();
  const auto r = std::from_chars(begin, v.data() + v.size(), index);
  return r.ec == std::errc() ? index : SIZE_MAX;
}

// RFC 8259 number grammar. Used only when simdjson refuses a number it
// cannot represent (e.g. 1e400 or a 30-digit integer), to tell "valid JSON,
// out of range" from "malformed".
bool is_json_number(std::string_view t, bool& is_integer) noexcept {
  while (!t.empty() && is_json_space(t.back())) t.remove_suffix(1);
  std::size_t i = 0;
  const auto digit = [&](std::size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
  if (i < t.size() && t[i] == '-') ++i;
  if (!digit(i)) return false;
  if (t[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  is_integer = true;
  if (i < t.size() && t[i] == '.') {
    is_integer = false;
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    is_integer = false;
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == t.size();
}

}  // namespace

void KeyExtractor::Json::reserve(std::size_t len) {
  const std::size_t need = len + simdjson::SIMDJSON_PADDING;
  if (need > cap) {
    cap = std::max(need, cap * 2);
    buf = std::make_unique<char[]>(cap);
  }
}

FieldsResult KeyExtractor::Json::extract_fields(std::string_view text) {
  std::size_t first = 0;
  while (first < text.size() && is_json_space(text[first])) ++first;
  if (first == text.size()) return {{}, reason::kEmptyLine};
  line = text;
  longs.clear();
  if (text.size() > long_line_bytes) {
    std::size_t len = 0;
    switch (compact(text, len)) {
      case Compaction::kMalformed:
        return {{}, reason::kMalformedJson};
      case Compaction::kDone: {
        const FieldsResult r = extract_buffered(len);
        return r.ok() ? resolve_long_values(r) : r;
      }
      case Compaction::kNotWorth:
        longs.clear();
        break;
    }
  }
  reserve(text.size());
  std::memcpy(buf.get(), text.data(), text.size());
  std::memset(buf.get() + text.size(), 0, simdjson::SIMDJSON_PADDING);
  return extract_buffered(text.size());
}

// Finds the long strings of `text` and writes it into buf with each one
// replaced by its placeholder. Tokenizes as simdjson's stage 1 does inside
// strings (a backslash takes the next byte); a backslash outside a string,
// or a string that does not end, is not JSON and is left to the parser
// (kNotWorth, like a line without long strings). A long string whose
// contents simdjson would refuse makes the line malformed whatever else it
// holds: the parser visits every string. A long member name stays (a
// placeholder must never be matched against a key path).
KeyExtractor::Json::Compaction KeyExtractor::Json::compact(std::string_view text,
                                                           std::size_t& compact_len) {
  const std::size_t n = text.size();
  std::size_t removed = 0;
  for (std::size_t i = 0; i < n;) {
    const char c = text[i];
    if (c == '\\') return Compaction::kNotWorth;
    if (c != '"') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < n && text[j] != '"') j += text[j] == '\\' ? std::size_t{2} : std::size_t{1};
    if (j >= n) return Compaction::kNotWorth;
    const std::size_t end = j + 1;
    if (end - i > kLongStringRawBytes) {
      std::size_t k = end;
      while (k < n && is_json_space(text[k])) ++k;
      if (k == n || text[k] != ':') {
        const auto length = json_string_unescaped_length(text.substr(i + 1, j - i - 1));
        if (!length) return Compaction::kMalformed;
        longs.push_back({i, end, *length});
        removed += end - i - (kPlaceholderBytes + 2);
      }
    }
    i = end;
  }
  if (longs.empty()) return Compaction::kNotWorth;
  compact_len = n - removed;
  reserve(compact_len);
  char* out = buf.get();
  std::size_t from = 0;
  for (std::size_t idx = 0; idx < longs.size(); ++idx) {
    const LongString& ls = longs[idx];
    std::memcpy(out, text.data() + from, ls.begin - from);
    out += ls.begin - from;
    write_placeholder(idx, out);
    out += kPlaceholderBytes + 2;
    from = ls.end;
  }
  std::memcpy(out, text.data() + from, n - from);
  std::memset(buf.get() + compact_len, 0, simdjson::SIMDJSON_PADDING);
  return Compaction::kDone;
}

// A value's unescaped length: a placeholder's is its long string's.
std::uint64_t KeyExtractor::Json::value_length(std::string_view v) const noexcept {
  if (longs.empty()) return v.size();
  const std::size_t idx = placeholder_index(v);
  return idx < longs.size() ? longs[idx].length : v.size();
}

// Swaps the placeholders among the values for their long strings.
FieldsResult KeyExtractor::Json::resolve_long_values(FieldsResult r) {
  escaped.assign(values.size(), {});
  bool any_escaped = false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t idx = placeholder_index(values[i]);
    if (idx >= longs.size()) continue;
    const std::string_view raw =
        line.substr(longs[idx].begin + 1, longs[idx].end - longs[idx].begin - 2);
    if (stream_long_values) {
      escaped[i] = raw;
      values[i] = {};
      any_escaped = true;
    } else {
      unescape_json_string(raw, unescaped[i]);
      values[i] = unescaped[i];
    }
  }
  if (any_escaped) r.escaped = escaped;
  return r;
}

// A missing field under missing_is_empty is the empty value; any other
// reason of the first field without a value rejects the line.
bool KeyExtractor::Json::settle(std::size_t i, const KeyResult& r) {
  if (r.ok()) {
    values[i] = r.key;
    return true;
  }
  if (r.reject_reason == reason::kKeyMissing && missing_is_empty) {
    values[i] = {};
    return true;
  }
  return false;
}

FieldsResult KeyExtractor::Json::fields_from_dom(simdjson::dom::element root) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const KeyResult r = lookup_dom(root, paths[i], int_texts[i]);
    if (!settle(i, r)) return {{}, r.reject_reason};
  }
  return {values, {}};
}

FieldsResult KeyExtractor::Json::extract_buffered(std::size_t len) {
  simdjson::dom::element root;
  if (len <= kDomMaxLineBytes && parse_dom(len, root)) return fields_from_dom(root);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    path = paths[i];
    const KeyResult r = extract_on_demand(len);
    if (!settle(i, r)) return {{}, r.reject_reason};
    if (paths.size() > 1 && r.ok()) {  // the next walk reuses simdjson's string buffer
      owned[i].assign(r.key);
      values[i] = owned[i];
    }
  }
  return {values, {}};
}

// The fast path: true with `root` set when DOM parsed the line as an
// object; false when the On Demand walk must decide.
bool KeyExtractor::Json::parse_dom(std::size_t len, simdjson::dom::element& root) {
  if (!dom_ready) {
    if (dom_parser.allocate(std::max(len, std::size_t{4096}), kDomMaxDepth) != simdjson::SUCCESS) {
      return false;
    }
    dom_ready = true;
  }
  if (dom_parser.parse(buf.get(), len, false).get(root) != simdjson::SUCCESS) return false;
  return root.is_object();
}

KeyResult KeyExtractor::Json::lookup_dom(simdjson::dom::element element,
                                         const std::vector<std::string>& p,
                                         std::array<char, 24>& digits) const {
  for (const std::string& component : p) {
    simdjson::dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS ||
        object.at_key(component).get(element) != simdjson::SUCCESS) {
      return {{}, reason::kKeyMissing};
    }
  }
  std::string_view k;
  char* const begin = digits.data();
  char* const end = begin + digits.size();
  switch (element.type()) {
    case simdjson::dom::element_type::STRING:
      k = element.get_string().value_unsafe();
      break;
    case simdjson::dom::element_type::INT64: {
      const auto r = std::to_chars(begin, end, element.get_int64().value_unsafe());
      k = std::string_view(begin, static_cast<std::size_t>(r.ptr - begin));
      break;
    }
    case simdjson::dom::element_type::UINT64: {
      const auto r = std::to_chars(begin, end, element.get_uint64().value_unsafe());
      k = std::string_view(begin, static_cast<std::size_t>(r.ptr - begin));
      break;
    }
    default:
      return {{}, reason::kKeyWrongType};
  }
  return value_length(k) > max_key_bytes ? KeyResult{{}, reason::kKeyTooLong} : KeyResult{k, {}};
}

KeyResult KeyExtractor::Json::extract_on_demand(std::size_t len) {
  key = {};
  key_reason = reason::kKeyMissing;

  od::document doc;
  if (parser.iterate(buf.get(), len, cap).get(doc) != simdjson::SUCCESS) {
    return {{}, reason::kMalformedJson};
  }
  od::json_type type{};
  if (doc.type().get(type) != simdjson::SUCCESS) return {{}, reason::kMalformedJson};
  if (type != od::json_type::object) {
    // Valid JSON of another type is "not an object"; garbage is malformed.
    const bool valid = validate_root(doc, type) == simdjson::SUCCESS &&
                       doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
    return {{}, valid ? reason::kNotAnObject : reason::kMalformedJson};
  }
  od::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return {{}, reason::kMalformedJson};
  if (walk_object(root, 1, 0) != simdjson::SUCCESS) return {{}, reason::kMalformedJson};
  // Anything after the closing brace ("{} x", "{}{}") means not one document.
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    return {{}, reason::kMalformedJson};
  }
  if (!key_reason.empty()) return {{}, key_reason};
  if (value_length(key) > max_key_bytes) return {{}, reason::kKeyTooLong};
  return {key, {}};
}

// `level` is the index of the path component this object's members are
// matched against, or -1 when the object is off the key path.
error_code KeyExtractor::Json::walk_object(od::object& o, int depth, int level) {
  if (depth > kMaxJsonDepth) return simdjson::DEPTH_ERROR;
  bool followed = false;  // first member with the path name wins
  for (auto member : o) {
    od::field field;
    SIMDJSON_TRY(std::move(member).get(field));
    std::string_view name;
    SIMDJSON_TRY(field.unescaped_key().get(name));
    od::value value = field.value();
    if (level >= 0 && !followed && name == path[static_cast<std::size_t>(level)]) {
      followed = true;
      if (static_cast<std::size_t>(level) + 1 == path.size()) {
        SIMDJSON_TRY(take_key(value, depth + 1));
      } else {
        SIMDJSON_TRY(walk(value, depth + 1, level + 1));
      }
    } else {
      SIMDJSON_TRY(walk(value, depth + 1, -1));
    }
  }
  return simdjson::SUCCESS;
}

error_code KeyExtractor::Json::validate_number(od::value& v) {
  const std::string_view token = v.raw_json_token();
  od::number n;
  const error_code e = v.get_number().get(n);
  bool integer = false;
  if (e != simdjson::SUCCESS && is_json_number(token, integer)) return simdjson::SUCCESS;
  return e;
}

// A root that is not an object (root scalars have their own getters).
error_code KeyExtractor::Json::validate_root(od::document& doc, od::json_type type) {
  switch (type) {
    case od::json_type::array: {
      od::array a;
      SIMDJSON_TRY(doc.get_array().get(a));
      for (auto element : a) {
        od::value ev;
        SIMDJSON_TRY(std::move(element).get(ev));
        SIMDJSON_TRY(walk(ev, 2, -1));
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      return doc.get_string().get(s);
    }
    case od::json_type::number: {
      od::number n;
      return doc.get_number().get(n);
    }
    case od::json_type::boolean: {
      bool b = false;
      return doc.get_bool().get(b);
    }
    case od::json_type::null: {
      bool is_null = false;
      SIMDJSON_TRY(doc.is_null().get(is_null));
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
    case od::json_type::object:
      break;
  }
  return simdjson::TAPE_ERROR;
}

error_code KeyExtractor::Json::walk(od::value& v, int depth, int level) {
  if (depth > kMaxJsonDepth) return simdjson::DEPTH_ERROR;
  od::json_type type{};
  SIMDJSON_TRY(v.type().get(type));
  switch (type) {
    case od::json_type::object: {
      od::object o;
      SIMDJSON_TRY(v.get_object().get(o));
      return walk_object(o, depth, level);
    }
    case od::json_type::array: {
      od::array a;
      SIMDJSON_TRY(v.get_array().get(a));
      for (auto element : a) {
        od::value ev;
        SIMDJSON_TRY(std::move(element).get(ev));
        SIMDJSON_TRY(walk(ev, depth + 1, -1));
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case od::json_type::number: {
      return validate_number(v);
    }
    case od::json_type::boolean: {
      bool b = false;
      return v.get_bool().get(b);
    }
    case od::json_type::null: {
      bool is_null = false;
      SIMDJSON_TRY(v.is_null().get(is_null));
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::TAPE_ERROR;
}

// The value at the end of the key path: becomes the key or the reject
// reason, and is validated like any other value.
error_code KeyExtractor::Json::take_key(od::value& v, int depth) {
  od::json_type type{};
  SIMDJSON_TRY(v.type().get(type));
  if (type == od::json_type::string) {
    SIMDJSON_TRY(v.get_string().get(key));
    key_reason = {};
    return simdjson::SUCCESS;
  }
  if (type == od::json_type::number) {
    const std::string_view token = v.raw_json_token();
    od::number n;
    const error_code e = v.get_number().get(n);
    if (e != simdjson::SUCCESS) {
      bool integer = false;
      if (!is_json_number(token, integer)) return e;
      key_reason = integer ? reason::kKeyIntegerRange : reason::kKeyWrongType;
      return simdjson::SUCCESS;
    }
    std::to_chars_result r{};
    switch (n.get_number_type()) {
      case od::number_type::signed_integer:
        r = std::to_chars(int_text, int_text + sizeof int_text, n.get_int64());
        break;
      case od::number_type::unsigned_integer:
        r = std::to_chars(int_text, int_text + sizeof int_text, n.get_uint64());
        break;
      case od::number_type::floating_point_number:
        key_reason = reason::kKeyWrongType;
        return simdjson::SUCCESS;
    }
    key = std::string_view(int_text, static_cast<std::size_t>(r.ptr - int_text));
    key_reason = {};
    return simdjson::SUCCESS;
  }
  key_reason = reason::kKeyWrongType;
  return walk(v, depth, -1);
}

KeyExtractor::KeyExtractor(KeyExtractorOptions options) : options_(std::move(options)) {
  if (options_.format != Format::kJsonLines) return;
  json_ = std::make_unique<Json>();
  json_->max_key_bytes = options_.max_key_bytes;
  json_->missing_is_empty = options_.missing_is_empty;
  json_->long_line_bytes = options_.long_line_bytes;
  json_->stream_long_values = options_.stream_long_values;
  const std::vector<std::string> given =
      options_.key_paths.empty() ? std::vector<std::string>{options_.key_path} : options_.key_paths;
  for (const std::string& key_path : given) {
    std::vector<std::string> parts;
    std::string_view rest = key_path;
    if (rest.empty()) throw std::invalid_argument("JSON key path is empty");
    for (;;) {
      const std::size_t dot = rest.find('.');
      const std::string_view part = rest.substr(0, dot);
      if (part.empty()) {
        throw std::invalid_argument("JSON key path '" + key_path + "' has an empty component");
      }
      parts.emplace_back(part);
      if (dot == std::string_view::npos) break;
      rest.remove_prefix(dot + 1);
    }
    json_->paths.push_back(std::move(parts));
  }
  json_->path = json_->paths.front();
  json_->int_texts.resize(json_->paths.size());
  json_->values.resize(json_->paths.size());
  json_->owned.resize(json_->paths.size());
  json_->unescaped.resize(json_->paths.size());
  json_->walked.resize(json_->paths.size());
  json_->walk_root_fields = std::all_of(json_->paths.begin(), json_->paths.end(),
                                        [](const auto& p) { return p.size() == 1; });
}

KeyExtractor::~KeyExtractor() = default;
KeyExtractor::KeyExtractor(KeyExtractor&&) noexcept = default;
KeyExtractor& KeyExtractor::operator=(KeyExtractor&&) noexcept = default;

KeyResult KeyExtractor::extract(std::string_view line) {
  if (json_ && json_->paths.size() != 1) {
    throw std::logic_error("KeyExtractor::extract: a composite key needs extract_fields");
  }
  const FieldsResult r = extract_fields(line);
  if (!r.ok()) return {{}, r.reject_reason};
  return {r.values.front(), {}};
}

FieldsResult KeyExtractor::extract_fields(std::string_view line) {
  if (json_) return json_->extract_fields(line);
  if (line.size() > options_.max_key_bytes) return {{}, reason::kKeyTooLong};
  line_value_ = line;
  return {std::span<const std::string_view>(&line_value_, 1), {}};
}

}  // namespace bloomshard::io
