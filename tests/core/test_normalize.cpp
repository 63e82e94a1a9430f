// Normalization policies: canonically equivalent spellings become one key
// under nfc, stay distinct under none; case folding; invalid UTF-8 is refused
// (with the byte offset) only by the policies that need UTF-8; NUL bytes and
// the empty key survive every policy.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bloomshard/core/normalize.hpp"

namespace bloomshard::core {
namespace {

using namespace std::string_literals;

std::string normalized(NormalizePolicy p, std::string_view key) {
  std::string buf;
  return std::string(normalize_key(p, key, buf));
}

struct Equivalent {
  std::string composed;
  std::string decomposed;
};

const Equivalent kPairs[] = {
    {"\xC3\xA9"s, "e\xCC\x81"s},                                 // é = e + U+0301
    {"\xC3\x85"s, "A\xCC\x8A"s},                                 // Å = A + U+030A
    {"\xE2\x84\xAB"s, "A\xCC\x8A"s},                             // U+212B ANGSTROM SIGN -> Å
    {"\xEA\xB0\x80"s, "\xE1\x84\x80\xE1\x85\xA1"s},              // 가 = jamo ᄀ + ᅡ
    {"\xED\x95\x9C"s, "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"s},  // 한 = ᄒ + ᅡ + ᆫ
};

TEST(Normalize, NfcMergesCanonicalEquivalentsNoneKeepsThemApart) {
  for (const auto& [composed, decomposed] : kPairs) {
    SCOPED_TRACE(composed);
    EXPECT_NE(normalized(NormalizePolicy::kNone, composed),
              normalized(NormalizePolicy::kNone, decomposed));
    EXPECT_EQ(normalized(NormalizePolicy::kNfc, decomposed),
              normalized(NormalizePolicy::kNfc, composed));
    EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, decomposed),
              normalized(NormalizePolicy::kNfcCasefold, composed));
  }
  EXPECT_EQ(normalized(NormalizePolicy::kNfc, "A\xCC\x8A"s), "\xC3\x85"s);  // result is composed
  EXPECT_EQ(normalized(NormalizePolicy::kNfc, "\xE2\x84\xAB"s), "\xC3\x85"s);
}

TEST(Normalize, CasefoldFoldsAsciiAndBeyond) {
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, "HTTPS://Example.COM/A?b=C"),
            "https://example.com/a?b=c");
  EXPECT_EQ(normalized(NormalizePolicy::kNfc, "HTTPS://Example.COM/"), "HTTPS://Example.COM/");
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, "\xC3\x89"s), "\xC3\xA9"s);   // É -> é
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, "E\xCC\x81"s), "\xC3\xA9"s);  // E+acute -> é
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold,
                       "Stra\xC3\x9F"
                       "e"s),
            "strasse");  // ß -> ss
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, "\xCE\xA3\xCE\x99\xCE\xA3"s),
            normalized(NormalizePolicy::kNfcCasefold, "\xCF\x83\xCE\xB9\xCF\x82"s));  // ΣΙΣ ~ σις
}

// The issue-11 case: U+1FB3 U+0304 and its NFD U+03B1 U+0304 U+0345 are
// canonically equivalent. v1 folded U+1FB3 to U+03B1 U+03B9 before canonical
// reordering could move U+0304 ahead of the ypogegrammeni, so it gave two
// keys; v2 (D145) gives one. v1 stays as it was, for states saved with it.
TEST(Normalize, CasefoldV2IsCanonicalCaselessMatchingV1IsNot) {
  const std::string precomposed = "\xE1\xBE\xB3\xCC\x84"s;  // U+1FB3 U+0304
  const std::string nfd = "\xCE\xB1\xCC\x84\xCD\x85"s;      // U+03B1 U+0304 U+0345
  EXPECT_EQ(normalized(NormalizePolicy::kNfc, precomposed), normalized(NormalizePolicy::kNfc, nfd));
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, precomposed),
            normalized(NormalizePolicy::kNfcCasefold, nfd));
  // alpha with macron (U+1FB1) + iota: NFC of U+03B1 U+0304 U+03B9.
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, nfd), "\xE1\xBE\xB1\xCE\xB9"s);
  EXPECT_NE(normalized(NormalizePolicy::kNfcCasefoldV1, precomposed),
            normalized(NormalizePolicy::kNfcCasefoldV1, nfd));
  // Where v1 was right, both versions give the same key.
  for (const std::string& k : {"Stra\xC3\x9F"
                               "e"s,
                               "\xC3\x89"s, "HTTP://A.B/C"s, "\xCE\xA3\xCE\x99\xCE\xA3"s}) {
    EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, k),
              normalized(NormalizePolicy::kNfcCasefoldV1, k));
  }
}

TEST(Normalize, InvalidUtf8ThrowsUnderNfcPassesUnderNone) {
  const std::string bad[] = {
      "abc\xFF"s,           // never-valid byte
      "\x80"s,              // lone continuation
      "ab\xC3"s,            // truncated
      "\xC0\xAF"s,          // overlong '/'
      "\xE0\x80\xAF"s,      // overlong 3-byte
      "\xED\xA0\x80"s,      // surrogate U+D800
      "\xF4\x90\x80\x80"s,  // above U+10FFFF
      "\xC3(x"s,            // bad continuation
      "\xE6\x97"s,          // CJK cut short
  };
  for (const auto& key : bad) {
    SCOPED_TRACE(::testing::PrintToString(key));
    EXPECT_THROW((void)normalized(NormalizePolicy::kNfc, key), InvalidUtf8Error);
    EXPECT_THROW((void)normalized(NormalizePolicy::kNfcCasefold, key), InvalidUtf8Error);
    EXPECT_THROW((void)normalized(NormalizePolicy::kNfcCasefoldV1, key), InvalidUtf8Error);
    std::string buf = "untouched";
    const std::string_view v = normalize_key(NormalizePolicy::kNone, key, buf);
    EXPECT_EQ(v, key);
    EXPECT_EQ(v.data(), key.data()) << "kNone must not copy";
    EXPECT_EQ(buf, "untouched");
  }
  try {
    (void)normalized(NormalizePolicy::kNfc, "abc\xFF"s);
  } catch (const InvalidUtf8Error& e) {
    EXPECT_NE(std::string(e.what()).find("byte 3"), std::string::npos) << e.what();
  }
  // Valid 4-byte and boundary code points pass.
  EXPECT_NO_THROW(
      (void)normalized(NormalizePolicy::kNfc, "\xF4\x8F\xBF\xBF\xEF\xBF\xBF\xF0\x9F\x98\x80"s));
}

TEST(Normalize, NulBytesAndEmptyKeySurvive) {
  for (const auto p : kAllPolicies) {
    SCOPED_TRACE(std::string(policy_name(p)));
    EXPECT_EQ(normalized(p, ""), "");
    EXPECT_EQ(normalized(p, "a\0b"s), "a\0b"s);
    EXPECT_EQ(normalized(p, "\0\0"s), "\0\0"s);
  }
  // NUL in the middle of a key that goes through utf8proc (non-ASCII).
  EXPECT_EQ(normalized(NormalizePolicy::kNfc, "e\xCC\x81\0e\xCC\x81"s), "\xC3\xA9\0\xC3\xA9"s);
  EXPECT_EQ(normalized(NormalizePolicy::kNfcCasefold, "\xC3\x89\0X"s), "\xC3\xA9\0x"s);
}

TEST(Normalize, ResultReplacesBufferAndIsStable) {
  std::string buf = "previous contents that are longer";
  EXPECT_EQ(normalize_key(NormalizePolicy::kNfc, "e\xCC\x81"s, buf), "\xC3\xA9"s);
  EXPECT_EQ(buf, "\xC3\xA9"s);
  // Idempotent: normalizing a normalized key changes nothing.
  const std::string mixed = "Caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80 K\xCC\x81"s;
  for (const auto p : kAllPolicies) {
    const std::string once = normalized(p, mixed);
    EXPECT_EQ(normalized(p, once), once);
  }
  // A 1 MiB non-ASCII key.
  std::string big;
  while (big.size() < (1U << 20)) big += "e\xCC\x81";
  const std::string n = normalized(NormalizePolicy::kNfc, big);
  EXPECT_EQ(n.size(), big.size() / 3 * 2);
}

TEST(Normalize, PolicyNamesRoundTrip) {
  for (const auto p :
       {NormalizePolicy::kNone, NormalizePolicy::kNfc, NormalizePolicy::kNfcCasefold}) {
    EXPECT_EQ(parse_policy(policy_name(p)), p);
  }
  for (const auto p : kAllPolicies) EXPECT_EQ(parse_policy(policy_label(p)), p);
  EXPECT_EQ(policy_name(NormalizePolicy::kNfcCasefold), "nfc-casefold");
  EXPECT_EQ(policy_label(NormalizePolicy::kNfcCasefold), "nfc-casefold/v2");
  EXPECT_EQ(policy_label(NormalizePolicy::kNfcCasefoldV1), "nfc-casefold/v1");
  EXPECT_EQ(policy_label(NormalizePolicy::kNfc), "nfc/v1");
  EXPECT_EQ(parse_policy("nfc-casefold"), NormalizePolicy::kNfcCasefold);  // bare = current
  EXPECT_THROW((void)parse_policy("nfc-casefold/v3"), std::invalid_argument);
  EXPECT_THROW((void)parse_policy("NFC"), std::invalid_argument);
  EXPECT_THROW((void)parse_policy(""), std::invalid_argument);
  EXPECT_FALSE(normalization_unicode_version().empty());
}

}  // namespace
}  // namespace bloomshard::core
