#include "io/records/json_field_token.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "io/output/json_escape.hpp"

namespace bloomshard::io {
namespace od = simdjson::ondemand;

struct JsonFieldToken::State {
  std::vector<std::string> path;  // components of the dotted path
  od::parser parser;
  std::unique_ptr<char[]> buf;  // line copy + SIMDJSON_PADDING, grown to the longest line
  std::size_t cap = 0;
};

JsonFieldToken::JsonFieldToken(std::string dotted_path) : state_(std::make_unique<State>()) {
  std::string_view rest = dotted_path;
  for (;;) {
    const std::size_t dot = rest.find('.');
    state_->path.emplace_back(rest.substr(0, dot));
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
}

JsonFieldToken::~JsonFieldToken() = default;
JsonFieldToken::JsonFieldToken(JsonFieldToken&&) noexcept = default;
JsonFieldToken& JsonFieldToken::operator=(JsonFieldToken&&) noexcept = default;

std::optional<TokenSpan> JsonFieldToken::find_string(std::string_view line) {
  State& s = *state_;
  const std::size_t need = line.size() + simdjson::SIMDJSON_PADDING;
  if (need > s.cap) {
    s.cap = std::max(need, s.cap * 2);
    s.buf = std::make_unique<char[]>(s.cap);
  }
  std::memcpy(s.buf.get(), line.data(), line.size());
  std::memset(s.buf.get() + line.size(), 0, simdjson::SIMDJSON_PADDING);
  od::document doc;
  if (s.parser.iterate(s.buf.get(), line.size(), s.cap).get(doc) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  od::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return std::nullopt;
  od::value v;
  for (std::size_t i = 0; i < s.path.size(); ++i) {
    // Ordered search from the object's start: the first member of the name.
    if (obj.find_field(s.path[i]).get(v) != simdjson::SUCCESS) return std::nullopt;
    if (i + 1 < s.path.size() && v.get_object().get(obj) != simdjson::SUCCESS) return std::nullopt;
  }
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS || type != od::json_type::string) {
    return std::nullopt;
  }
  std::string_view raw = v.raw_json_token();
  // The raw token runs to the next token: drop the whitespace after it.
  while (!raw.empty() && raw.back() != '"') raw.remove_suffix(1);
  const auto begin = static_cast<std::size_t>(raw.data() - s.buf.get());
  if (raw.size() < 2 || begin + raw.size() > line.size()) return std::nullopt;
  return TokenSpan{begin, begin + raw.size()};
}

std::string_view replace_string_token(std::string_view line, TokenSpan token,
                                      std::string_view value, std::string& out) {
  out.clear();
  out.append(line.substr(0, token.begin));
  out += '"';
  append_json_string_contents(out, value);
  out += '"';
  out.append(line.substr(token.end));
  return out;
}

namespace {

// The value of a lower-case hex digit, or -1 (upper case is not what the
// escaper writes).
int lower_hex(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The byte an escape `\e` that append_json_string_contents writes stands
// for, or -1 when `esc` (the bytes from the backslash on) is not one.
// `len` gets the escape's length.
int canonical_escape(std::string_view esc, std::size_t& len) noexcept {
  if (esc.size() < 2) return -1;
  len = 2;
  switch (esc[1]) {
    case '"':
      return '"';
    case '\\':
      return '\\';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'u':
      break;
    default:
      return -1;
  }
  // \u00XX: only for the control characters without a short escape.
  if (esc.size() < 6 || esc[2] != '0' || esc[3] != '0') return -1;
  const int hi = lower_hex(esc[4]);
  const int lo = lower_hex(esc[5]);
  if (hi < 0 || lo < 0) return -1;
  const int c = hi * 16 + lo;
  if (c >= 0x20 || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') return -1;
  len = 6;
  return c;
}

bool has_control_byte(std::string_view run) noexcept {
  unsigned char low = 0;  // OR of "byte < 0x20" over the run: vectorizes
  for (const char ch : run)
    low |= static_cast<unsigned char>(static_cast<unsigned char>(ch) < 0x20);
  return low != 0;
}

}  // namespace

bool map_canonical_token_offsets(std::string_view line, TokenSpan token, std::string_view value,
                                 std::span<std::size_t> offsets) noexcept {
  if (token.end > line.size() || token.end < token.begin + 2) return false;
  const std::size_t base = token.begin + 1;  // the contents, after the quote
  const std::string_view raw = line.substr(base, token.end - token.begin - 2);
  std::size_t r = 0;  // into raw
  std::size_t u = 0;  // into value, at the same point
  std::size_t k = 0;  // next offset to map
  for (;;) {
    std::size_t slash = raw.find('\\', r);
    if (slash == std::string_view::npos) slash = raw.size();
    const std::size_t run = slash - r;  // copied as is by the escaper
    if (u + run > value.size() || raw.compare(r, run, value.substr(u, run)) != 0 ||
        has_control_byte(raw.substr(r, run))) {
      return false;
    }
    for (; k < offsets.size() && offsets[k] <= u + run; ++k) {
      if (offsets[k] < u) return false;  // not ascending
      offsets[k] = base + r + (offsets[k] - u);
    }
    r += run;
    u += run;
    if (r == raw.size()) break;
    std::size_t len = 0;
    const int c = canonical_escape(raw.substr(r), len);
    if (c < 0 || u >= value.size() || static_cast<unsigned char>(value[u]) != c) return false;
    r += len;
    ++u;
  }
  return u == value.size() && k == offsets.size();
}

}  // namespace bloomshard::io
