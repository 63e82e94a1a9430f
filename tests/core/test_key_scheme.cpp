// The key scheme (one struct, one write / read / compare) and the key
// builder: tuple encoding keeps ("ab","c") and ("a","bc") apart, a legacy
// scheme writes no attribute and gives the old key bytes, the streamed
// digest equals the digest of the materialized key, and differences name
// both sides.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "bloomshard/core/key_builder.hpp"
#include "bloomshard/core/key_scheme.hpp"

namespace bloomshard::core {
namespace {

std::string build(const KeyScheme& s, std::initializer_list<std::string_view> values) {
  KeyBuilder b(s);
  const std::vector<std::string_view> v(values);
  return std::string(b.build(v));
}

KeyScheme two_fields() {
  KeyScheme s;
  s.fields = {"url", "title"};
  return s;
}

TEST(KeyBuilder, TupleEncodingIsLengthPrefixed) {
  const KeyScheme s = two_fields();
  EXPECT_EQ(build(s, {"ab", "c"}), std::string("\x02"
                                               "ab"
                                               "\x01"
                                               "c"));
  EXPECT_EQ(build(s, {"a", "bc"}), std::string("\x01"
                                               "a"
                                               "\x02"
                                               "bc"));
  EXPECT_NE(build(s, {"ab", "c"}), build(s, {"a", "bc"}));
  EXPECT_NE(build(s, {"", "ab"}), build(s, {"ab", ""}));
  KeyScheme digested = s;
  for (const KeyDigest d : {KeyDigest::kXxh3_128, KeyDigest::kSha256}) {
    digested.digest = d;
    EXPECT_NE(build(digested, {"ab", "c"}), build(digested, {"a", "bc"}));
    EXPECT_EQ(build(digested, {"ab", "c"}), digest_key(d, build(s, {"ab", "c"})));
  }
}

TEST(KeyBuilder, Leb128) {
  std::string out;
  append_leb128(0, out);
  append_leb128(127, out);
  append_leb128(128, out);
  append_leb128(300, out);
  EXPECT_EQ(out, std::string("\x00\x7f\x80\x01\xac\x02", 6));
}

TEST(KeyBuilder, OneFieldKeyIsTheValue) {
  KeyScheme s;
  const std::string value = "https://example.org/x";
  KeyBuilder b(s);
  const std::array<std::string_view, 1> v{value};
  const std::string_view key = b.build(v);
  EXPECT_EQ(key, value);
  EXPECT_EQ(key.data(), value.data());  // not copied
  s.normalize = NormalizePolicy::kNfcCasefold;
  EXPECT_EQ(build(s, {"HeLLo"}), "hello");
}

TEST(KeyBuilder, StreamedWsDigestEqualsDigestOfTheText) {
  const std::string text = "  Hello,\r\n\tworld\xC2\xA0\xE3\x80\x80of  keys \n";
  for (const bool tuple : {false, true}) {
    KeyScheme plain;
    if (tuple) plain.fields = {"a", "b"};
    plain.text = TextNormalize::kWs;
    KeyScheme digested = plain;
    digested.digest = KeyDigest::kSha256;
    const std::string expect = tuple ? digest_key(KeyDigest::kSha256, build(plain, {text, text}))
                                     : digest_key(KeyDigest::kSha256, "Hello, world of keys");
    EXPECT_EQ(tuple ? build(digested, {text, text}) : build(digested, {text}), expect);
  }
  KeyScheme s;
  s.text = TextNormalize::kWs;
  s.digest = KeyDigest::kXxh3_128;
  EXPECT_THROW((void)build(s, {"bad \xFF"}), InvalidUtf8Error);
}

TEST(KeyScheme, LegacySchemeWritesNoAttributeAndReadsBack) {
  KeyScheme s;
  s.fields = {"meta.id"};
  s.normalize = NormalizePolicy::kNfc;
  EXPECT_TRUE(is_legacy_key_scheme(s));
  EXPECT_EQ(key_scheme_attribute(s), "");
  EXPECT_EQ(key_scheme_from_state("meta.id", "nfc/v1", ""), s);
}

TEST(KeyScheme, AttributeRoundTrip) {
  KeyScheme s = two_fields();
  s.missing = MissingField::kEmpty;
  s.normalize = NormalizePolicy::kNfcCasefoldV1;
  s.text = TextNormalize::kWsLower;
  s.digest = KeyDigest::kSha256;
  const std::string attr = key_scheme_attribute(s);
  EXPECT_EQ(attr,
            "key-scheme/v1; fields=url,title; missing=empty; text=ws-lower/v1; digest=sha256/v1");
  EXPECT_EQ(key_scheme_from_state(key_fields_text(s), "nfc-casefold/v1", attr), s);
  KeyScheme digest_only;
  digest_only.digest = KeyDigest::kXxh3_128;
  EXPECT_EQ(key_scheme_from_state("id", "none/v1", key_scheme_attribute(digest_only)), digest_only);
}

TEST(KeyScheme, UnreadableAttributesAreRefused) {
  EXPECT_THROW((void)key_scheme_from_state("id", "none/v1", "key-scheme/v2; fields=id"),
               std::invalid_argument);
  EXPECT_THROW((void)key_scheme_from_state("id", "none/v1", "key-scheme/v1; fields=id; zip=1"),
               std::invalid_argument);
  EXPECT_THROW((void)key_scheme_from_state("id", "none/v1", "key-scheme/v1; fields=other"),
               std::invalid_argument);
  EXPECT_THROW((void)key_scheme_from_state("id", "none/v1", "key-scheme/v1; fields=id; digest=md5"),
               std::invalid_argument);
}

TEST(KeyScheme, DifferencesNameBothSides) {
  KeyScheme saved;
  saved.digest = KeyDigest::kSha256;
  KeyScheme job;
  EXPECT_EQ(key_scheme_difference(saved, saved), "");
  EXPECT_EQ(key_scheme_difference(saved, job),
            "key digest (--key-digest) differs: the state has sha256/v1, this job asks for "
            "none/v1");
  job = saved;
  job.text = TextNormalize::kWs;
  EXPECT_NE(key_scheme_difference(saved, job).find("none/v1, this job asks for ws/v1"),
            std::string::npos);
  job = saved;
  job.fields = {"id", "title"};
  EXPECT_NE(key_scheme_difference(saved, job).find("'id', this job asks for 'id,title'"),
            std::string::npos);
  job = saved;
  job.missing = MissingField::kEmpty;
  EXPECT_NE(key_scheme_difference(saved, job).find("--missing-field"), std::string::npos);
}

TEST(KeyScheme, FieldNamesMayNotHoldTheSeparators) {
  KeyScheme s;
  EXPECT_EQ(key_scheme_problem(s), "");
  s.fields = {"a,b"};
  EXPECT_NE(key_scheme_problem(s), "");
  s.fields = {"a;b"};
  EXPECT_NE(key_scheme_problem(s), "");
  s.fields = {};
  EXPECT_NE(key_scheme_problem(s), "");
}

}  // namespace
}  // namespace bloomshard::core
