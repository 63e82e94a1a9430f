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

KeyScheme minhash_key_scheme() {
  KeyScheme s;
  s.fields = {"text"};
  s.unit = KeyUnit::kMinHash;
  return s;
}

TEST(KeyScheme, MinHashAttributeRoundTrip) {
  KeyScheme s = minhash_key_scheme();
  const std::string attr = key_scheme_attribute(s);
  EXPECT_EQ(attr,
            "key-scheme/v1; fields=text; missing=reject; text=none/v1; digest=none/v1; "
            "unit=minhash/v1; shingle=word:5; bands=14; rows=8");
  EXPECT_EQ(key_scheme_from_state("text", "none/v1", attr), s);
  s.shingle = "char:24";
  s.bands = 20;
  s.rows = 13;
  s.missing = MissingField::kEmpty;
  EXPECT_EQ(key_scheme_from_state("text", "none/v1", key_scheme_attribute(s)), s);
  EXPECT_FALSE(is_legacy_key_scheme(s));
}

// The builds before --unit minhash know only unit=paragraph/v1: any other
// unit value is an unknown item to them, as an unknown version is to this one.
TEST(KeyScheme, MinHashStatesOfAnotherVersionOrBadItemsAreRefused) {
  const std::string good = key_scheme_attribute(minhash_key_scheme());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string a = good;
    a.replace(a.find(from), from.size(), to);
    return a;
  };
  for (const std::string& bad :
       {with("unit=minhash/v1", "unit=minhash/v2"), with("shingle=word:5", "shingle=word:0"),
        with("shingle=word:5", "shingle=word:05"), with("shingle=word:5", "shingle=line:5"),
        with("bands=14", "bands=0"), with("rows=8", "rows=4097"), with("rows=8", "rows=x"),
        with("digest=none/v1", "digest=xxh3-128/v1")}) {
    EXPECT_THROW((void)key_scheme_from_state("text", "none/v1", bad), std::invalid_argument) << bad;
  }
  EXPECT_THROW((void)key_scheme_from_state("text", "nfc/v1", good), std::invalid_argument);
}

TEST(KeyScheme, MinHashDifferencesNameTheOptionAndBothValues) {
  const KeyScheme saved = minhash_key_scheme();
  KeyScheme job = saved;
  EXPECT_EQ(key_scheme_difference(saved, job), "");
  job.shingle = "char:5";
  EXPECT_EQ(key_scheme_difference(saved, job),
            "--shingle differs: the state has word:5, this job asks for char:5");
  job = saved;
  job.bands = 20;
  EXPECT_EQ(key_scheme_difference(saved, job),
            "--bands differs: the state has 14, this job asks for 20");
  job = saved;
  job.rows = 13;
  EXPECT_EQ(key_scheme_difference(saved, job),
            "--rows differs: the state has 8, this job asks for 13");
  job = saved;
  job.unit = KeyUnit::kParagraph;
  EXPECT_NE(key_scheme_difference(saved, job).find("the state has minhash/v1"), std::string::npos);
  // The minhash items count only under --unit minhash.
  KeyScheme record;
  KeyScheme record_other = record;
  record_other.bands = 3;
  EXPECT_EQ(key_scheme_difference(record, record_other), "");
}

// --confirm-jaccard is one more item, written only when on (every other
// minhash attribute stays as it was); builds before it refuse the item, this
// one refuses forms other than 4 bits and a T outside (0, 1]; a job with
// another T, or none, differs naming both values.
TEST(KeyScheme, ConfirmJaccardIsAnItemOfTheMinHashScheme) {
  KeyScheme s = minhash_key_scheme();
  s.confirm_jaccard = 0.8;
  const std::string attr = key_scheme_attribute(s);
  EXPECT_EQ(attr,
            "key-scheme/v1; fields=text; missing=reject; text=none/v1; digest=none/v1; "
            "unit=minhash/v1; shingle=word:5; bands=14; rows=8; confirm-jaccard=0.8/b4");
  EXPECT_EQ(key_scheme_from_state("text", "none/v1", attr), s);
  const auto with = [&](const std::string& to) {
    std::string a = attr;
    a.replace(a.find("0.8/b4"), 6, to);
    return a;
  };
  for (const std::string& bad :
       {with("0.8/b8"), with("0.8"), with("1.5/b4"), with("0/b4"), with("x/b4"), with("/b4")}) {
    EXPECT_THROW((void)key_scheme_from_state("text", "none/v1", bad), std::invalid_argument) << bad;
  }
  KeyScheme job = minhash_key_scheme();
  EXPECT_EQ(key_scheme_difference(s, job),
            "--confirm-jaccard differs: the state has 0.8, this job asks for off");
  job.confirm_jaccard = 0.9;
  EXPECT_EQ(key_scheme_difference(s, job),
            "--confirm-jaccard differs: the state has 0.8, this job asks for 0.9");
  KeyScheme record;
  record.confirm_jaccard = 0.5;
  EXPECT_EQ(key_scheme_problem(record), "--confirm-jaccard applies to --unit minhash only");
}

TEST(KeyScheme, MinHashProblems) {
  KeyScheme s = minhash_key_scheme();
  EXPECT_EQ(key_scheme_problem(s), "");
  s.fields = {"a", "b"};
  EXPECT_NE(key_scheme_problem(s).find("one text field"), std::string::npos);
  s = minhash_key_scheme();
  s.digest = KeyDigest::kSha256;
  EXPECT_NE(key_scheme_problem(s).find("--key-digest"), std::string::npos);
  s = minhash_key_scheme();
  s.bands = 64;
  s.rows = 65;
  EXPECT_NE(key_scheme_problem(s).find("--bands 64 x --rows 65"), std::string::npos);
}

}  // namespace
}  // namespace bloomshard::core
