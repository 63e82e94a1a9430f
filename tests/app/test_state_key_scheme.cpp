// The key scheme of a state, read through key_scheme_of(): taken whole from
// the header, refused when this build cannot apply it; differences between
// two states and conflicts with given flags are named; query's options
// parse and refuse bad values.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bloomshard/app/exit_codes.hpp"
#include "bloomshard/app/query_options.hpp"
#include "bloomshard/app/run_state.hpp"
#include "bloomshard/app/state_key_scheme.hpp"
#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {
namespace {

io::CheckpointHeader header(core::NormalizePolicy policy = core::NormalizePolicy::kNfc) {
  DedupConfig c;
  c.normalize = policy;
  io::CheckpointHeader h;
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.hash_seed = core::kDefaultHashSeed;
  h.bloom_layout = std::string(core::kBloomLayoutName);
  h.normalization = normalization_identity(c);
  h.key_field = "meta.url";
  h.key_encoding = "bytes";
  return h;
}

TEST(StateKeyScheme, TakenFromTheHeader) {
  const KeyScheme s = key_scheme_of(header());
  EXPECT_EQ(s.normalize, core::NormalizePolicy::kNfc);
  EXPECT_EQ(s.key_field, "meta.url");
  EXPECT_EQ(s.hash_seed, core::kDefaultHashSeed);
  DedupConfig c;
  apply_key_scheme(s, c);
  EXPECT_EQ(c.key_field, "meta.url");
  EXPECT_EQ(c.normalize, core::NormalizePolicy::kNfc);
  EXPECT_EQ(normalization_identity(c), header().normalization);
  io::CheckpointHeader back;
  store_key_scheme(s, back);
  EXPECT_TRUE(key_scheme_difference(key_scheme_of(back), s).empty());
}

TEST(StateKeyScheme, RefusesWhatThisBuildCannotApply) {
  io::CheckpointHeader h = header();
  h.hash_scheme = "md5/v0";
  EXPECT_THROW((void)key_scheme_of(h), std::runtime_error);
  h = header();
  h.normalization = "nfc/v1 unicode 9.0.0";  // other Unicode tables
  EXPECT_THROW((void)key_scheme_of(h), std::runtime_error);
  h = header();
  h.normalization = "fancy/v7 unicode 15.0.0";
  EXPECT_THROW((void)key_scheme_of(h), std::runtime_error);
}

TEST(StateKeyScheme, DifferencesAreNamed) {
  const KeyScheme a = key_scheme_of(header());
  KeyScheme b = a;
  b.key_field = "id";
  EXPECT_EQ(key_scheme_difference(a, b), "key field differs: 'meta.url' vs 'id'");
  b = a;
  b.hash_seed = 7;
  EXPECT_NE(key_scheme_difference(a, b).find("hash seed differs"), std::string::npos);
  const KeyScheme c = key_scheme_of(header(core::NormalizePolicy::kNone));
  EXPECT_NE(key_scheme_difference(a, c).find("normalization differs"), std::string::npos);
}

KeySchemeFlags field(const char* f) {
  KeySchemeFlags flags;
  flags.key_field = f;
  return flags;
}
KeySchemeFlags policy(const char* p) {
  KeySchemeFlags flags;
  flags.normalize = p;
  return flags;
}
KeySchemeFlags seed(std::uint64_t s) {
  KeySchemeFlags flags;
  flags.hash_seed = s;
  return flags;
}

TEST(StateKeyScheme, FlagsMustAgree) {
  const KeyScheme s = key_scheme_of(header(core::NormalizePolicy::kNfcCasefold));
  EXPECT_TRUE(key_scheme_conflict(s, {}).empty());
  EXPECT_TRUE(key_scheme_conflict(s, field("meta.url")).empty());
  EXPECT_NE(key_scheme_conflict(s, field("id")).find("--key-field 'id'"), std::string::npos);
  EXPECT_TRUE(key_scheme_conflict(s, policy("nfc-casefold")).empty());
  EXPECT_NE(key_scheme_conflict(s, policy("nfc-casefold/v1")), "");  // pinned other version
  EXPECT_NE(key_scheme_conflict(s, policy("none")), "");
  EXPECT_TRUE(key_scheme_conflict(s, seed(0)).empty());  // 0: the default seed
  EXPECT_NE(key_scheme_conflict(s, seed(5)), "");
}

TEST(QueryOptions, ParseAndRefuse) {
  ParsedQuery ok = parse_query_options(
      {"--state", "/tmp", "--input", "/tmp", "--output", "/tmp/q", "--emit", "misses"});
  EXPECT_FALSE(ok.exit_code) << ok.message;
  EXPECT_EQ(ok.config.emit, QueryEmit::kMisses);
  EXPECT_FALSE(ok.config.scheme_flags.key_field);
  ParsedQuery bad = parse_query_options(
      {"--state", "/tmp", "--input", "/tmp", "--output", "/tmp/q", "--emit", "both"});
  ASSERT_TRUE(bad.exit_code);
  EXPECT_EQ(*bad.exit_code, kExitUsage);
  EXPECT_NE(bad.message.find("--emit"), std::string::npos);
  ParsedQuery missing = parse_query_options({"--input", "/tmp", "--output", "/tmp/q"});
  ASSERT_TRUE(missing.exit_code);
  EXPECT_EQ(*missing.exit_code, kExitUsage);
  ParsedQuery flags = parse_query_options({"--state", "/tmp", "--input", "/tmp", "--output",
                                           "/tmp/q", "--key-field", "url", "--hash-seed", "3"});
  ASSERT_TRUE(flags.config.scheme_flags.key_field);
  EXPECT_EQ(*flags.config.scheme_flags.key_field, "url");
  EXPECT_EQ(flags.config.scheme_flags.hash_seed.value_or(0), 3U);
}

}  // namespace
}  // namespace bloomshard::app
