#include "app/report/json_writer.hpp"

#include <cmath>
#include <cstdio>

#include "io/output/json_escape.hpp"

namespace bloomshard::app {

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  // One escaper for the whole tool (the reject files use it too); bytes that
  // are not UTF-8 become U+FFFD so the document always parses.
  (void)io::append_json_string_contents(out, s);
  out.push_back('"');
}

void JsonWriter::key_prefix(std::string_view key) {
  if (!first_in_scope_.back()) out_.push_back(',');
  first_in_scope_.back() = false;
  out_.push_back('\n');
  out_.append(static_cast<std::size_t>(depth_) * 2, ' ');
  if (!key.empty()) {
    append_json_string(out_, key);
    out_ += ": ";
  }
}

JsonWriter& JsonWriter::begin_object(std::string_view key) {
  if (depth_ > 0) key_prefix(key);
  out_.push_back('{');
  first_in_scope_.push_back(true);
  ++depth_;
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  --depth_;
  first_in_scope_.pop_back();
  out_.push_back('\n');
  out_.append(static_cast<std::size_t>(depth_) * 2, ' ');
  out_.push_back('}');
  if (depth_ == 0) out_.push_back('\n');
  return *this;
}

JsonWriter& JsonWriter::begin_array(std::string_view key) {
  key_prefix(key);
  out_.push_back('[');
  first_in_scope_.push_back(true);
  ++depth_;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  --depth_;
  first_in_scope_.pop_back();
  out_.push_back(']');
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, std::string_view v) {
  key_prefix(key);
  append_json_string(out_, v);
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, std::uint64_t v) {
  key_prefix(key);
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, std::int64_t v) {
  key_prefix(key);
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, double v) {
  key_prefix(key);
  if (!std::isfinite(v)) {
    out_ += "null";  // JSON has no inf/nan
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, bool v) {
  key_prefix(key);
  out_ += v ? "true" : "false";
  return *this;
}

}  // namespace bloomshard::app
