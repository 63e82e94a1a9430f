// Long lines in the key extractor: a line over long_line_bytes has
// its long strings checked by io/records/json_long_string.hpp and replaced before
// simdjson parses it. Every line of a table (escapes, surrogate pairs, nested
// objects before the field, duplicate members, wrong types, long member
// names, invalid contents of a long string, not JSON at all) must give the
// short-line path's answer: the same reject reason or the same values, and,
// when the value is left escaped for streaming, the same digest key under
// every streaming scheme. The reference is the extractor with the long path
// off (simdjson sees the whole line).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bloomshard/core/key_builder.hpp"
#include "io/records/json_long_string.hpp"
#include "io/records/key_extractor.hpp"
#include "io/records/reject_reasons.hpp"

// Its own namespace: its helpers share names with the other key extractor tests (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::io::key_extractor_long_tests {
namespace {

constexpr std::size_t kOff = std::numeric_limits<std::size_t>::max();

KeyExtractor extractor(std::vector<std::string> paths, std::size_t long_line_bytes,
                       bool stream = false, std::size_t max_key = kOff, bool empty = false) {
  KeyExtractorOptions o;
  o.format = Format::kJsonLines;
  o.key_path = paths.front();
  o.key_paths = std::move(paths);
  o.max_key_bytes = max_key;
  o.missing_is_empty = empty;
  o.long_line_bytes = long_line_bytes;
  o.stream_long_values = stream;
  return KeyExtractor(o);
}

// A long string's raw contents: `n` bytes of words, ASCII and not, white
// space of several kinds (an escaped tab, an ideographic space).
std::string words(std::size_t n, char seed = 'a') {
  std::string s;
  const std::string pieces[] = {"lorem ",       "ipsum\\t", "caf\xC3\xA9 ",
                                "\xE3\x80\x80", "dolor  ",  std::string(1, seed)};
  for (std::size_t i = 0; s.size() < n; ++i) s += pieces[i % 6];
  return s;
}

std::string long_text() { return words(3000); }

struct Answer {
  std::string reason;
  std::vector<std::string> values;
  friend bool operator==(const Answer&, const Answer&) = default;
};

Answer answer_of(KeyExtractor& x, const std::string& line) {
  const FieldsResult r = x.extract_fields(line);
  Answer a{std::string(r.reject_reason), {}};
  for (std::size_t i = 0; i < r.values.size(); ++i) {
    std::string v(r.values[i]);
    if (!r.escaped.empty() && !r.escaped[i].empty()) unescape_json_string(r.escaped[i], v);
    a.values.push_back(v);
  }
  return a;
}

std::vector<std::string> table() {
  const std::string L = long_text();
  const std::string L2 = words(2500, 'z');
  const std::string esc = L + R"(\n\t\"\\\/\b\f\r\u00e9\u00E9\uD83D\uDE00\u0000\u2028 end)";
  return {
      R"({"id":1,"text":")" + L + R"("})",
      R"({"text":")" + esc + R"("})",
      R"({"text" : ")" + esc + R"(" , "x":2})",
      R"({"a":{"b":[1,2,{"c":")" + L2 + R"("}]},"text":")" + L + R"("})",
      R"({"text":")" + L + R"(","text":")" + L2 + R"("})",
      R"({"text":"short first","text":")" + L + R"("})",
      R"({"text":")" + L + R"(","text":"short second"})",
      R"({"text":123,"pad":")" + L + R"("})",
      R"({"text":-0,"pad":")" + L + R"("})",
      R"({"text":1.5,"pad":")" + L + R"("})",
      R"({"text":99999999999999999999999,"pad":")" + L + R"("})",
      R"({"text":["x",")" + L + R"("]})",
      R"({"text":{"x":")" + L + R"("}})",
      R"({"text":null,"pad":")" + L + R"("})",
      R"({"pad":")" + L + R"("})",
      R"({")" + L + R"(":1,"text":"a long member name is kept"})",
      R"({")" + L + R"(":")" + L2 + R"(","text":"x"})",
      R"({"text":")" + L + R"(" : 1})",
      R"({"text":")" + L + R"("} trailing)",
      R"({"text":")" + L + R"("}{})",
      R"(")" + L + R"(")",
      R"([")" + L + R"("])",
      R"({\"text":")" + L + R"("})",
      R"({"text":")" + L,
      R"({"text":")" + L + R"(\x"})",
      R"({"text":")" + L + R"(\ud800"})",
      R"({"text":")" + L + R"(\udc00"})",
      R"({"text":")" + L + R"(\ud800\u0041"})",
      R"({"text":")" + L + R"(\u12"})",
      R"({"text":"ok","pad":")" + L + "\x01" + R"("})",
      R"({"text":"ok","pad":")" + L + "\t" + R"("})",
      R"({"text":"ok","pad":")" + L + "\xFF" + R"("})",
      R"({"text":"ok","pad":")" + L + "\xED\xA0\x80" + R"("})",
      R"({"text":"ok","pad":")" + L + "\x7F" + R"("})",
      R"({"text":"bloomshard:long:0~~~","pad":")" + L + R"("})",
      R"({"text":")" + std::string(1022, 'q') + R"(","pad":")" + L + R"("})",
      R"({"text":")" + std::string(1023, 'q') + R"("})",
      R"({"text":")" + std::string(1500, 'q') + R"("})",
      R"({"text":"a","bad":tru,"pad":")" + L + R"("})",
      R"({"text":")" + L + R"(","deep":)" + std::string(300, '[') + std::string(300, ']') + "}",
      "  \t  ",
      R"({"text":")" + L + R"("}   )",
  };
}

TEST(KeyExtractorLong, TableMatchesTheWholeLinePath) {
  KeyExtractor reference = extractor({"text"}, kOff);
  KeyExtractor materialized = extractor({"text"}, 0);
  KeyExtractor streamed = extractor({"text"}, 0, true);
  std::size_t accepted = 0;
  std::size_t left_escaped = 0;
  for (const std::string& line : table()) {
    const Answer want = answer_of(reference, line);
    EXPECT_EQ(answer_of(materialized, line), want) << line.substr(0, 60);
    EXPECT_EQ(answer_of(streamed, line), want) << line.substr(0, 60);
    if (want.reason.empty()) ++accepted;
    if (!streamed.extract_fields(line).escaped.empty()) ++left_escaped;
  }
  // The table is not all rejects: most lines have a key, most of them long.
  EXPECT_EQ(accepted, 17U);
  EXPECT_EQ(left_escaped, 9U);
}

// The same table over 1 MiB (a long member first), where the whole-line
// path is simdjson's On Demand walk rather than DOM, and the long-line path
// is the one production takes by default.
TEST(KeyExtractorLong, TableMatchesTheOnDemandPathOver1MiB) {
  KeyExtractor reference = extractor({"text"}, kOff);
  KeyExtractor by_default = extractor({"text"}, kDefaultLongLineBytes, true);
  const std::string pad = "\"pad0\":\"" + words((1U << 20) + 100, 'p') + "\",";
  std::size_t accepted = 0;
  for (const std::string& line : table()) {
    if (line.empty() || line[0] != '{') continue;
    const std::string padded = "{" + pad + line.substr(1);
    const Answer want = answer_of(reference, padded);
    EXPECT_EQ(answer_of(by_default, padded), want) << line.substr(0, 60);
    if (want.reason.empty()) ++accepted;
  }
  EXPECT_EQ(accepted, 17U);
}

TEST(KeyExtractorLong, LongValuesAreLeftEscapedOnlyWhenAsked) {
  const std::string line = R"({"text":")" + long_text() + R"(\u00e9"})";
  KeyExtractor streamed = extractor({"text"}, 0, true);
  const FieldsResult r = streamed.extract_fields(line);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.escaped.size(), 1U);
  EXPECT_EQ(r.escaped[0], long_text() + R"(\u00e9)");
  EXPECT_TRUE(r.values[0].empty());
  // Its view is into the line itself: nothing was copied.
  EXPECT_EQ(r.escaped[0].data(), line.data() + 9);
  KeyExtractor materialized = extractor({"text"}, 0);
  EXPECT_TRUE(materialized.extract_fields(line).escaped.empty());
}

TEST(KeyExtractorLong, CompositePathsMissingFieldsAndKeyLimits) {
  const std::string L = long_text();
  const std::vector<std::string> lines = {
      R"({"meta":{"url":")" + L + R"("},"title":")" + words(2000, 'y') + R"("})",
      R"({"title":"t","meta":{"url":")" + L + R"(","url":"second"}})",
      R"({"meta":{"url":")" + L + R"("}})",
      R"({"title":")" + L + R"("})",
      R"({"meta":")" + L + R"(","title":"t"})",
  };
  for (const bool empty : {false, true}) {
    for (const std::size_t max_key : {kOff, std::size_t{2500}, std::size_t{100}}) {
      KeyExtractor reference = extractor({"meta.url", "title"}, kOff, false, max_key, empty);
      KeyExtractor materialized = extractor({"meta.url", "title"}, 0, false, max_key, empty);
      KeyExtractor streamed = extractor({"meta.url", "title"}, 0, true, max_key, empty);
      for (const std::string& line : lines) {
        const Answer want = answer_of(reference, line);
        EXPECT_EQ(answer_of(materialized, line), want) << max_key << " " << line.substr(0, 60);
        EXPECT_EQ(answer_of(streamed, line), want) << max_key << " " << line.substr(0, 60);
      }
    }
  }
}

// The digest key of a streamed long value, unescaped in small chunks, is the
// key KeyBuilder::build gives for the whole value, for every scheme that
// streams.
TEST(KeyExtractorLong, StreamedDigestEqualsWholeValueDigest) {
  KeyExtractor reference = extractor({"text"}, kOff);
  KeyExtractor streamed = extractor({"text"}, 0, true);
  for (const auto digest : {core::KeyDigest::kXxh3_128, core::KeyDigest::kSha256}) {
    for (const auto text : {core::TextNormalize::kNone, core::TextNormalize::kWs}) {
      core::KeyScheme scheme;
      scheme.fields = {"text"};
      scheme.digest = digest;
      scheme.text = text;
      core::KeyBuilder whole(scheme);
      core::KeyBuilder pieces(scheme);
      ASSERT_TRUE(pieces.streams_one_value());
      std::string scratch;
      for (const std::string& line : table()) {
        const FieldsResult want = reference.extract_fields(line);
        if (!want.ok()) continue;
        const std::string want_key(whole.build(want.values));
        const FieldsResult got = streamed.extract_fields(line);
        ASSERT_TRUE(got.ok());
        if (got.escaped.empty()) continue;  // a short value: build() as before
        for (const std::size_t chunk : {std::size_t{16}, std::size_t{17}, std::size_t{1000}}) {
          pieces.stream_begin();
          for_each_unescaped_chunk(got.escaped[0], chunk, scratch,
                                   [&](std::string_view c) { pieces.stream_piece(c); });
          EXPECT_EQ(std::string(pieces.stream_finish()), want_key) << chunk << line.substr(0, 60);
        }
      }
    }
  }
}

// json_string_unescaped_length and the unescaper against simdjson itself,
// on random strings over an alphabet of escapes, surrogates, control bytes
// and UTF-8 pieces (valid and not).
TEST(JsonLongString, AgreesWithSimdjsonOnRandomStrings) {
  const std::vector<std::string> alphabet = {"a",
                                             " ",
                                             "\\n",
                                             "\\t",
                                             "\\\"",
                                             "\\\\",
                                             "\\/",
                                             "\\b",
                                             "\\u00e9",
                                             "\\u00E9",
                                             "\\ud83d",
                                             "\\uDE00",
                                             "\\udc00",
                                             "\\u12",
                                             "\\x",
                                             "\\",
                                             "\x01",
                                             "\t",
                                             "\x7F",
                                             "\xC3\xA9",
                                             "\xC3",
                                             "\xE3\x80\x80",
                                             "\xF0\x9F\x98\x80",
                                             "\xFF",
                                             "\xED\xA0\x80",
                                             "\\u0000",
                                             "\\uD800\\uDC00"};
  std::mt19937 rng(15);
  simdjson::ondemand::parser parser;
  for (int round = 0; round < 3000; ++round) {
    std::string raw;
    const int n = static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) raw += alphabet[rng() % alphabet.size()];
    const std::string doc = "{\"t\":\"" + raw + "\"}";
    simdjson::padded_string padded(doc);
    std::string_view want;
    bool ok = false;
    simdjson::ondemand::document d;
    if (parser.iterate(padded).get(d) == simdjson::SUCCESS) {
      ok = d["t"].get_string().get(want) == simdjson::SUCCESS;
    }
    const auto length = json_string_unescaped_length(raw);
    // A raw string that ends the token early (an unescaped quote, a last
    // backslash) is not a string's contents at all: the scanner never gives one.
    if (!ok && !length) continue;
    ASSERT_EQ(length.has_value(), ok) << raw;
    ASSERT_EQ(*length, want.size()) << raw;
    std::string got;
    unescape_json_string(raw, got);
    ASSERT_EQ(got, want) << raw;
  }
}

}  // namespace
}  // namespace bloomshard::io::key_extractor_long_tests
