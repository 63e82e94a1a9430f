// JSON conformance (RFC 8259) of the JSONL key extractor, on the parsing
// cases of JSONTestSuite (github.com/nst/JSONTestSuite, MIT; vendored in
// tests/data/json_test_suite). Every case that fits on one line is run
// through the one-line path (extract_fields) and the batched path
// (extract_lines, as the job reads), as the whole line and as the value of a
// member of an object that has the key:
//   n_ cases (invalid JSON) must be rejected as malformed (a blank line is
//       rejected as an empty line);
//   y_ cases (valid JSON) must never be rejected as malformed (as whole
//       lines and member values; an array's content unwrapped may not be
//       one value);
//   i_ cases (implementation-defined) may go either way, but both paths
//       must agree.
// The fast paths (the grammar walk, the key lookup) must not accept what a
// full parser refuses: that is what this test holds them to.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "io/records/key_extractor.hpp"
#include "io/records/record_reader.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::io {
namespace {

constexpr const char* kSuiteDir = BLOOMSHARD_TEST_DATA_DIR "/json_test_suite/test_parsing";

struct Case {
  std::string name;  // file name: y_/n_/i_ + what it tests
  std::string line;  // the document or the document wrapped in an object
};

std::vector<Case> one_line_cases() {
  std::vector<Case> cases;
  const std::filesystem::path dir = kSuiteDir;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // A JSONL line ends at '\n'; a document with a line break inside it is
    // not one line (and '\r' would be taken as a CRLF terminator).
    if (doc.find_first_of("\r\n") != std::string::npos) continue;
    const std::string name = entry.path().filename().string();
    cases.push_back({name + " (whole line)", doc});
    cases.push_back({name + " (member value)", R"({"id":"k","v":)" + doc + "}"});
    // An array case's content as a member of a flat object, after the key
    // and before it: the lines the extractor's fast walk takes.
    const std::size_t first = doc.find_first_not_of(" \t");
    const std::size_t last = doc.find_last_not_of(" \t");
    if (first != std::string::npos && doc[first] == '[' && doc[last] == ']' && last > first + 1) {
      const std::string inner = doc.substr(first + 1, last - first - 1);
      cases.push_back({name + " (content, last member)", R"({"id":"k","v":)" + inner + "}"});
      cases.push_back({name + " (content, first member)", R"({"v":)" + inner + R"(,"id":"k"})"});
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const Case& a, const Case& b) { return a.name < b.name; });
  return cases;
}

// The batched path wants the lines back to back, '\n' between them, with
// kLinePaddingBytes readable after the last one, as RecordReader gives them.
std::vector<std::string> batched_reasons(KeyExtractor& x, const std::vector<Case>& cases) {
  std::string text;
  std::vector<std::size_t> begin;
  for (const Case& c : cases) {
    begin.push_back(text.size());
    text += c.line;
    text += '\n';
  }
  text.append(kLinePaddingBytes, '\0');
  std::vector<std::string_view> lines;
  for (std::size_t i = 0; i < cases.size(); ++i)
    lines.emplace_back(text.data() + begin[i], cases[i].line.size());
  std::vector<std::string> reasons(cases.size(), "<not handed over>");
  std::size_t done = 0;
  while (done < lines.size()) {
    const std::size_t n =
        x.extract_lines(std::span(lines).subspan(done), [&](std::size_t i, const FieldsResult& r) {
          reasons[done + i] = std::string(r.reject_reason);
          return true;
        });
    if (n == 0) break;
    done += n;
  }
  return reasons;
}

TEST(JsonConformance, JsonTestSuiteParsingCases) {
  const std::vector<Case> cases = one_line_cases();
  ASSERT_GT(cases.size(), 500U) << "JSONTestSuite cases missing from " << kSuiteDir;
  KeyExtractor one({Format::kJsonLines, "id", kDefaultMaxKeyBytes, {}, false});
  KeyExtractor batch({Format::kJsonLines, "id", kDefaultMaxKeyBytes, {}, false});
  const std::vector<std::string> batched = batched_reasons(batch, cases);
  std::size_t checked_invalid = 0;
  std::size_t checked_valid = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string alone(one.extract_fields(c.line).reject_reason);
    EXPECT_EQ(alone, batched[i]) << c.name << ": the batched path disagrees with the one-line path";
    const bool blank = c.line.find_first_not_of(" \t") == std::string::npos;
    if (c.name.starts_with("n_")) {
      ++checked_invalid;
      EXPECT_EQ(alone, blank ? reason::kEmptyLine : reason::kMalformedJson)
          << c.name << ": invalid JSON not rejected as malformed: " << c.line;
    } else if (c.name.starts_with("y_") && c.name.find("(content") == std::string::npos) {
      ++checked_valid;
      EXPECT_NE(alone, reason::kMalformedJson) << c.name << ": valid JSON rejected: " << c.line;
    }
  }
  EXPECT_GT(checked_invalid, 300U);
  EXPECT_GT(checked_valid, 150U);
}

}  // namespace
}  // namespace bloomshard::io
