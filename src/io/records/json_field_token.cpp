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

}  // namespace bloomshard::io
