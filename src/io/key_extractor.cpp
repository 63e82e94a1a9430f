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
#include "bloomshard/io/key_extractor.hpp"

#include <simdjson.h>

#include <charconv>
#include <cstring>
#include <stdexcept>

#include "bloomshard/io/reject_reasons.hpp"

namespace bloomshard::io {
namespace od = simdjson::ondemand;
using simdjson::error_code;

namespace {

// Nesting beyond this is rejected as malformed: the walk is recursive and a
// 16 MiB line of '[' must not overflow the stack.
constexpr int kMaxJsonDepth = 256;

// DOM nesting limit. The walk accepts a scalar at depth 256 (root object =
// 1); DOM counts containers only, so a limit one lower keeps every document
// DOM accepts within what the walk accepts. Deeper documents fall back.
constexpr std::size_t kDomMaxDepth = kMaxJsonDepth - 1;

// Longer lines skip DOM: its tape and string buffers take about 14 bytes per
// input byte, kept for the extractor's life, so this bounds them to ~14 MiB.
constexpr std::size_t kDomMaxLineBytes = std::size_t{1} << 20;

bool is_json_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

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

struct KeyExtractor::Json {
  simdjson::dom::parser dom_parser;
  bool dom_ready = false;  // dom_parser allocated with kDomMaxDepth
  od::parser parser;
  std::unique_ptr<char[]> buf;  // line copy + SIMDJSON_PADDING, grown to the longest line
  std::size_t cap = 0;
  std::vector<std::string> path;
  std::size_t max_key_bytes = 0;
  char int_text[24] = {};
  // Outcome of the current line's key lookup (first occurrence wins).
  std::string_view key;
  std::string_view key_reason;

  KeyResult extract(std::string_view line);
  bool extract_dom(std::size_t len, KeyResult& out);
  KeyResult extract_on_demand(std::size_t len);
  error_code walk(od::value& v, int depth, int level);
  error_code walk_object(od::object& o, int depth, int level);
  error_code take_key(od::value& v, int depth);
  error_code validate_number(od::value& v);
  error_code validate_root(od::document& doc, od::json_type type);
};

KeyResult KeyExtractor::Json::extract(std::string_view line) {
  std::size_t first = 0;
  while (first < line.size() && is_json_space(line[first])) ++first;
  if (first == line.size()) return {{}, reason::kEmptyLine};

  const std::size_t need = line.size() + simdjson::SIMDJSON_PADDING;
  if (need > cap) {
    cap = std::max(need, cap * 2);
    buf = std::make_unique<char[]>(cap);
  }
  std::memcpy(buf.get(), line.data(), line.size());
  std::memset(buf.get() + line.size(), 0, simdjson::SIMDJSON_PADDING);

  KeyResult result;
  if (line.size() <= kDomMaxLineBytes && extract_dom(line.size(), result)) return result;
  return extract_on_demand(line.size());
}

// The fast path: true with `out` set when DOM parsed the line as an object;
// false when the On Demand walk must decide.
bool KeyExtractor::Json::extract_dom(std::size_t len, KeyResult& out) {
  if (!dom_ready) {
    if (dom_parser.allocate(std::max(len, std::size_t{4096}), kDomMaxDepth) != simdjson::SUCCESS) {
      return false;
    }
    dom_ready = true;
  }
  simdjson::dom::element element;
  if (dom_parser.parse(buf.get(), len, false).get(element) != simdjson::SUCCESS) return false;
  if (!element.is_object()) return false;
  for (const std::string& component : path) {
    simdjson::dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS ||
        object.at_key(component).get(element) != simdjson::SUCCESS) {
      out = {{}, reason::kKeyMissing};
      return true;
    }
  }
  std::string_view k;
  switch (element.type()) {
    case simdjson::dom::element_type::STRING:
      k = element.get_string().value_unsafe();
      break;
    case simdjson::dom::element_type::INT64: {
      const auto r =
          std::to_chars(int_text, int_text + sizeof int_text, element.get_int64().value_unsafe());
      k = std::string_view(int_text, static_cast<std::size_t>(r.ptr - int_text));
      break;
    }
    case simdjson::dom::element_type::UINT64: {
      const auto r =
          std::to_chars(int_text, int_text + sizeof int_text, element.get_uint64().value_unsafe());
      k = std::string_view(int_text, static_cast<std::size_t>(r.ptr - int_text));
      break;
    }
    default:
      out = {{}, reason::kKeyWrongType};
      return true;
  }
  out = k.size() > max_key_bytes ? KeyResult{{}, reason::kKeyTooLong} : KeyResult{k, {}};
  return true;
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
  if (key.size() > max_key_bytes) return {{}, reason::kKeyTooLong};
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
  std::string_view rest = options_.key_path;
  if (rest.empty()) throw std::invalid_argument("JSON key path is empty");
  for (;;) {
    const std::size_t dot = rest.find('.');
    const std::string_view part = rest.substr(0, dot);
    if (part.empty()) {
      throw std::invalid_argument("JSON key path '" + options_.key_path +
                                  "' has an empty component");
    }
    json_->path.emplace_back(part);
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
}

KeyExtractor::~KeyExtractor() = default;
KeyExtractor::KeyExtractor(KeyExtractor&&) noexcept = default;
KeyExtractor& KeyExtractor::operator=(KeyExtractor&&) noexcept = default;

KeyResult KeyExtractor::extract(std::string_view line) {
  if (json_) return json_->extract(line);
  if (line.size() > options_.max_key_bytes) return {{}, reason::kKeyTooLong};
  return {line, {}};
}

}  // namespace bloomshard::io
