// Reject lines: valid JSON (checked with simdjson), escaping of control
// characters and invalid UTF-8, truncation, counts by reason, resume.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "io/output/reject_writer.hpp"
#include "io/records/reject_reasons.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

struct Parsed {
  std::string file;
  std::uint64_t line = 0;
  std::string reason;
  std::string raw;
  bool truncated = false;
  bool invalid = false;
  std::string base64;
};

Parsed parse(std::string_view json_line) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const auto err = parser.parse(json_line.data(), json_line.size()).get(doc);
  EXPECT_EQ(err, simdjson::SUCCESS) << json_line;
  Parsed p;
  if (err) return p;
  p.file = std::string(doc["file"].get_string().value());
  p.line = doc["line"].get_uint64().value();
  p.reason = std::string(doc["reason"].get_string().value());
  p.raw = std::string(doc["raw"].get_string().value());
  bool b = false;
  if (doc["raw_truncated"].get_bool().get(b) == simdjson::SUCCESS) p.truncated = b;
  if (doc["raw_invalid_utf8"].get_bool().get(b) == simdjson::SUCCESS) p.invalid = b;
  std::string_view s;
  if (doc["raw_base64"].get_string().get(s) == simdjson::SUCCESS) p.base64 = std::string(s);
  return p;
}

std::string base64_decode(std::string_view in) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (const char c : in) {
    if (c == '=') break;
    acc = (acc << 6) | static_cast<unsigned>(alphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string one_line(std::string_view file, std::uint64_t line, std::string_view reason,
                     std::string_view raw, bool truncated = false,
                     std::size_t max_raw = kDefaultMaxRawBytes) {
  std::string out;
  append_reject_json(out, file, line, reason, raw, truncated, max_raw);
  EXPECT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1);  // exactly one line
  return out;
}

TEST(IoReject, EscapesControlCharactersQuotesAndBackslashes) {
  const std::string raw = std::string("q\"b\\s\n\r\t\b\f\x01\x1f\x7f end\0z", 19);
  const Parsed p = parse(one_line("dir/f \"1\".jsonl", 12, "malformed JSON", raw));
  EXPECT_EQ(p.file, "dir/f \"1\".jsonl");
  EXPECT_EQ(p.line, 12U);
  EXPECT_EQ(p.reason, "malformed JSON");
  EXPECT_EQ(p.raw, raw);
  EXPECT_FALSE(p.invalid);
  EXPECT_FALSE(p.truncated);
}

TEST(IoReject, ValidUtf8IsKeptAsIs) {
  const std::string raw = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  const Parsed p = parse(one_line("f", 1, "r", raw));
  EXPECT_EQ(p.raw, raw);
  EXPECT_FALSE(p.invalid);
  EXPECT_TRUE(p.base64.empty());
}

TEST(IoReject, InvalidUtf8BecomesReplacementWithExactBase64) {
  const std::string fffd = "\xEF\xBF\xBD";
  struct Case {
    std::string raw;
    std::string shown;
  };
  const Case cases[] = {
      {"a\xFF"
       "b",
       "a" + fffd + "b"},
      {"\xC3", fffd},                                   // truncated sequence at the end
      {"\xC3(", fffd + "("},                            // bad continuation
      {"\xC0\xAF", fffd + fffd},                        // overlong '/'
      {"\xED\xA0\x80", fffd + fffd + fffd},             // UTF-16 surrogate
      {"\xF4\x90\x80\x80", fffd + fffd + fffd + fffd},  // > U+10FFFF
      {"\x80", fffd},                                   // stray continuation byte
  };
  for (const Case& c : cases) {
    const std::string line = one_line("f", 3, "malformed JSON", c.raw);
    const Parsed p = parse(line);
    EXPECT_EQ(p.raw, c.shown) << line;
    EXPECT_TRUE(p.invalid) << line;
    EXPECT_EQ(base64_decode(p.base64), c.raw) << line;
  }
}

TEST(IoReject, RawIsTruncatedAtACodePointBoundary) {
  const Parsed p = parse(one_line("f", 1, "line too long", std::string(10000, 'x')));
  EXPECT_EQ(p.raw, std::string(kDefaultMaxRawBytes, 'x'));
  EXPECT_TRUE(p.truncated);
  // 2-byte characters straddling the limit: cut before the lead byte.
  std::string accents;
  for (int i = 0; i < 10; ++i) accents += "\xC3\xA9";
  std::string raw = "a";
  raw += accents;
  const Parsed q = parse(one_line("f", 1, "r", raw, false, 8));
  EXPECT_EQ(q.raw, raw.substr(0, 7));
  EXPECT_TRUE(q.truncated);
  EXPECT_FALSE(q.invalid);
  // The reader already cut a too-long line.
  EXPECT_TRUE(parse(one_line("f", 1, "line too long", "prefix", true)).truncated);
}

TEST(IoReject, WriterCountsByReasonAndResumes) {
  TempDir dir;
  const auto path = dir / "rejects.jsonl";
  std::uint64_t committed = 0;
  {
    auto w = RejectWriter::create(path);
    w.write("a.jsonl", 1, reason::kMalformedJson, "{bad");
    w.write("a.jsonl", 2, reason::kKeyMissing, "{}");
    w.write("b.jsonl", 7, reason::kMalformedJson, "\xFF\xFE");
    committed = w.flush_and_sync();
    EXPECT_EQ(w.total(), 3U);
    EXPECT_EQ(w.counts().at(std::string(reason::kMalformedJson)), 2U);
    EXPECT_EQ(w.counts().at(std::string(reason::kKeyMissing)), 1U);
    w.write("b.jsonl", 8, reason::kEmptyLine, "");  // after the commit: lost on resume
    w.close();
  }
  RejectCounts saved{{std::string(reason::kMalformedJson), 2},
                     {std::string(reason::kKeyMissing), 1}};
  {
    auto w = RejectWriter::open_for_resume(path, committed, saved);
    EXPECT_EQ(w.total(), 3U);
    w.write("c.txt", 1, reason::kLineTooLong, std::string(5000, 'L'), true);
    EXPECT_EQ(w.counts().at(std::string(reason::kLineTooLong)), 1U);
    EXPECT_EQ(w.total(), 4U);
    w.close();
  }
  const std::string text = test::read_file(path);
  std::vector<Parsed> got;
  for (std::size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    got.push_back(parse(std::string_view(text).substr(pos, nl - pos)));
  }
  ASSERT_EQ(got.size(), 4U);
  EXPECT_EQ(got[0].raw, "{bad");
  EXPECT_EQ(got[1].reason, reason::kKeyMissing);
  EXPECT_EQ(got[2].line, 7U);
  EXPECT_TRUE(got[2].invalid);
  EXPECT_EQ(base64_decode(got[2].base64), "\xFF\xFE");
  EXPECT_EQ(got[3].file, "c.txt");
  EXPECT_TRUE(got[3].truncated);
  EXPECT_EQ(got[3].raw.size(), kDefaultMaxRawBytes);
}

}  // namespace
}  // namespace bloomshard::io
