// A minimal streaming JSON writer for metrics and reports: objects, arrays,
// numbers, strings (escaped). Not a general library; it writes what
// bloomshard reports and validates nothing it is not given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bloomshard::app {

class JsonWriter {
 public:
  JsonWriter& begin_object(std::string_view key = {});
  JsonWriter& end_object();
  JsonWriter& begin_array(std::string_view key = {});
  JsonWriter& end_array();
  JsonWriter& value(std::string_view key, std::string_view v);
  JsonWriter& value(std::string_view key, const char* v) { return value(key, std::string_view(v)); }
  JsonWriter& value(std::string_view key, std::uint64_t v);
  JsonWriter& value(std::string_view key, std::int64_t v);
  JsonWriter& value(std::string_view key, double v);
  JsonWriter& value(std::string_view key, bool v);
  /// The document so far (complete once every begin has its end).
  [[nodiscard]] const std::string& str() const noexcept { return out_; }

 private:
  void key_prefix(std::string_view key);
  std::string out_;
  std::vector<bool> first_in_scope_{true};
  int depth_ = 0;
};

/// Appends `s` as a JSON string literal (quoted, escaped; bytes that are not
/// UTF-8 become U+FFFD).
void append_json_string(std::string& out, std::string_view s);

}  // namespace bloomshard::app
