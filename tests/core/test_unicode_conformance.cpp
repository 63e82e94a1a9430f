// Conformance against the Unicode Consortium's own test data (Debian's
// unicode-data package, Unicode 15.0 like utf8proc 2.8): every line of
// NormalizationTest.txt gives one key for c1, c2, c3 and one for c4, c5
// under nfc and nfc-casefold (v2); every C and F mapping of CaseFolding.txt
// gives the code point and its folding one key under nfc-casefold. The data
// files must exist: a missing file fails the test (CI installs them).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bloomshard/core/normalize.hpp"

namespace bloomshard::core {
namespace {

const std::string kUnicodeDir = BLOOMSHARD_UNICODE_DATA_DIR;

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80U) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800U) {
    out += static_cast<char>(0xC0U | (cp >> 6));
    out += static_cast<char>(0x80U | (cp & 0x3FU));
  } else if (cp < 0x10000U) {
    out += static_cast<char>(0xE0U | (cp >> 12));
    out += static_cast<char>(0x80U | ((cp >> 6) & 0x3FU));
    out += static_cast<char>(0x80U | (cp & 0x3FU));
  } else {
    out += static_cast<char>(0xF0U | (cp >> 18));
    out += static_cast<char>(0x80U | ((cp >> 12) & 0x3FU));
    out += static_cast<char>(0x80U | ((cp >> 6) & 0x3FU));
    out += static_cast<char>(0x80U | (cp & 0x3FU));
  }
}

// "1E0A 0323" -> UTF-8.
std::string utf8_of_hex(const std::string& field) {
  std::istringstream in(field);
  std::string out;
  std::string hex;
  while (in >> hex) append_utf8(static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16)), out);
  return out;
}

std::vector<std::string> split_fields(const std::string& line, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(line);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

std::string key(NormalizePolicy p, const std::string& s) {
  std::string buf;
  return std::string(normalize_key(p, s, buf));
}

std::string hex_of(const std::string& s) {
  std::string out;
  char b[4];
  for (const char c : s) {
    std::snprintf(b, sizeof b, "%02X", static_cast<unsigned char>(c));
    out += b;
  }
  return out;
}

struct PipeCloser {
  void operator()(FILE* f) const noexcept { pclose(f); }
};

// NormalizationTest.txt.bz2, decompressed by bzip2 (Debian ships it so).
std::vector<std::string> normalization_test_lines() {
  const std::string path = kUnicodeDir + "/NormalizationTest.txt.bz2";
  std::vector<std::string> lines;
  if (!std::ifstream(path)) return lines;
  const std::unique_ptr<FILE, PipeCloser> pipe(popen(("bzip2 -dc '" + path + "'").c_str(), "r"));
  if (!pipe) return lines;
  std::string text;
  char chunk[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, pipe.get())) > 0) text.append(chunk, n);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

TEST(UnicodeConformance, NormalizationTestGivesOneKeyPerEquivalenceClass) {
  const std::vector<std::string> lines = normalization_test_lines();
  ASSERT_GT(lines.size(), 19000U) << "missing or short " << kUnicodeDir
                                  << "/NormalizationTest.txt.bz2 (package unicode-data, bzip2)";
  std::size_t cases = 0;
  std::size_t failures = 0;
  std::size_t v1_splits = 0;
  for (const std::string& line : lines) {
    if (line.empty() || line[0] == '#' || line[0] == '@') continue;
    const std::vector<std::string> f = split_fields(line.substr(0, line.find('#')), ';');
    ASSERT_GE(f.size(), 5U) << line;
    std::string c[5];
    for (int i = 0; i < 5; ++i) c[i] = utf8_of_hex(f[static_cast<std::size_t>(i)]);
    ++cases;
    // nfc is NFC itself: c2 == NFC(c1..c3), c4 == NFC(c4, c5).
    const bool nfc_ok =
        key(NormalizePolicy::kNfc, c[0]) == c[1] && key(NormalizePolicy::kNfc, c[1]) == c[1] &&
        key(NormalizePolicy::kNfc, c[2]) == c[1] && key(NormalizePolicy::kNfc, c[3]) == c[3] &&
        key(NormalizePolicy::kNfc, c[4]) == c[3];
    const std::string f1 = key(NormalizePolicy::kNfcCasefold, c[0]);
    const std::string f4 = key(NormalizePolicy::kNfcCasefold, c[3]);
    const bool fold_ok = key(NormalizePolicy::kNfcCasefold, c[1]) == f1 &&
                         key(NormalizePolicy::kNfcCasefold, c[2]) == f1 &&
                         key(NormalizePolicy::kNfcCasefold, c[4]) == f4 &&
                         key(NormalizePolicy::kNfcCasefold, f1) == f1;  // idempotent
    const std::string v1 = key(NormalizePolicy::kNfcCasefoldV1, c[0]);
    if (key(NormalizePolicy::kNfcCasefoldV1, c[1]) != v1 ||
        key(NormalizePolicy::kNfcCasefoldV1, c[2]) != v1) {
      ++v1_splits;
    }
    if (!nfc_ok || !fold_ok) {
      if (++failures <= 20) {
        ADD_FAILURE() << (nfc_ok ? "nfc-casefold" : "nfc") << " splits a class: " << line;
      }
    }
  }
  EXPECT_GT(cases, 19000U);
  EXPECT_EQ(failures, 0U) << "of " << cases << " lines";
  // The same check catches the v1 rules (kept for old states) splitting
  // classes, so it is not a check that cannot fail.
  EXPECT_GT(v1_splits, 0U);
  RecordProperty("v1_splits", static_cast<int>(v1_splits));
}

// Part 1 lists every code point that normalization changes or that takes
// part in a listed case; every other scalar value is its own NFC.
TEST(UnicodeConformance, CodePointsOutsidePart1AreTheirOwnNfc) {
  const std::vector<std::string> lines = normalization_test_lines();
  ASSERT_GT(lines.size(), 19000U);
  std::vector<bool> listed(0x110000, false);
  bool part1 = false;
  for (const std::string& line : lines) {
    if (line.rfind("@Part", 0) == 0) {
      part1 = line.rfind("@Part1", 0) == 0;
      continue;
    }
    if (!part1 || line.empty() || line[0] == '#') continue;
    listed[std::stoul(line.substr(0, line.find(';')), nullptr, 16)] = true;
  }
  std::size_t checked = 0;
  for (std::uint32_t cp = 0x80; cp < 0x110000; ++cp) {
    if (listed[cp] || (cp >= 0xD800U && cp <= 0xDFFFU)) continue;
    std::string s;
    append_utf8(cp, s);
    ASSERT_EQ(key(NormalizePolicy::kNfc, s), s) << "U+" << std::hex << cp;
    ++checked;
  }
  EXPECT_GT(checked, 1000000U);
}

TEST(UnicodeConformance, CaseFoldingCAndFMappingsGiveOneKey) {
  std::ifstream in(kUnicodeDir + "/CaseFolding.txt");
  ASSERT_TRUE(in) << "missing " << kUnicodeDir << "/CaseFolding.txt (package unicode-data)";
  std::string line;
  std::size_t mappings = 0;
  std::size_t failures = 0;
  std::size_t v1_misses = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split_fields(line, ';');
    ASSERT_GE(f.size(), 3U) << line;
    const std::string status = f[1].substr(f[1].find_first_not_of(' '), 1);
    if (status != "C" && status != "F") continue;  // S and T are not full folding
    ++mappings;
    const std::string from = utf8_of_hex(f[0]);
    const std::string to = utf8_of_hex(f[2]);
    const std::string a = key(NormalizePolicy::kNfcCasefold, from);
    const std::string b = key(NormalizePolicy::kNfcCasefold, to);
    if (a != b && ++failures <= 20) {
      ADD_FAILURE() << "nfc-casefold: " << line << " gives " << hex_of(a) << " vs " << hex_of(b);
    }
    if (key(NormalizePolicy::kNfcCasefoldV1, from) != key(NormalizePolicy::kNfcCasefoldV1, to)) {
      ++v1_misses;
    }
  }
  EXPECT_GT(mappings, 1400U);
  EXPECT_EQ(failures, 0U) << "of " << mappings << " C+F mappings";
  RecordProperty("v1_misses", static_cast<int>(v1_misses));
}

}  // namespace
}  // namespace bloomshard::core
