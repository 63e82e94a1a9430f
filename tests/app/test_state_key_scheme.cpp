// The scheme of a state, read through state_scheme_of(): taken whole from
// the header, refused when this build cannot apply it; differences between
// two states and conflicts with given flags are named; query's options
// parse and refuse bad values.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/options/query_options.hpp"
#include "app/run/run_state.hpp"
#include "app/state/state_key_scheme.hpp"
#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {
namespace {

io::CheckpointHeader header(core::NormalizePolicy policy = core::NormalizePolicy::kNfc,
                            core::KeyDigest digest = core::KeyDigest::kNone) {
  core::KeyScheme key;
  key.fields = {"meta.url"};
  key.normalize = policy;
  key.digest = digest;
  io::CheckpointHeader h;
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.hash_seed = core::kDefaultHashSeed;
  h.bloom_layout = std::string(core::kBloomLayoutName);
  put_key_scheme(key, h);
  return h;
}

TEST(StateKeyScheme, TakenFromTheHeader) {
  const StateScheme s = state_scheme_of(header());
  EXPECT_EQ(s.key.normalize, core::NormalizePolicy::kNfc);
  EXPECT_EQ(s.key.fields, std::vector<std::string>{"meta.url"});
  EXPECT_EQ(s.hash_seed, core::kDefaultHashSeed);
  DedupConfig c;
  apply_state_scheme(s, c);
  EXPECT_EQ(c.key, s.key);
  EXPECT_EQ(normalization_identity(c.key), header().normalization);
  io::CheckpointHeader back;
  store_state_scheme(s, back);
  EXPECT_TRUE(state_scheme_difference(state_scheme_of(back), s).empty());
  // A digest scheme travels whole too.
  const StateScheme d =
      state_scheme_of(header(core::NormalizePolicy::kNfc, core::KeyDigest::kSha256));
  EXPECT_EQ(d.key.digest, core::KeyDigest::kSha256);
  EXPECT_NE(state_scheme_difference(s, d), "");
}

TEST(StateKeyScheme, RefusesWhatThisBuildCannotApply) {
  io::CheckpointHeader h = header();
  h.hash_scheme = "md5/v0";
  EXPECT_THROW((void)state_scheme_of(h), std::runtime_error);
  h = header();
  h.normalization = "nfc/v1 unicode 9.0.0";  // other Unicode tables
  EXPECT_THROW((void)state_scheme_of(h), std::runtime_error);
  h = header();
  h.normalization = "fancy/v7 unicode 15.0.0";
  EXPECT_THROW((void)state_scheme_of(h), std::runtime_error);
}

TEST(StateKeyScheme, DifferencesAreNamed) {
  const StateScheme a = state_scheme_of(header());
  StateScheme b = a;
  b.key.fields = {"id"};
  const std::string fields = state_scheme_difference(a, b);
  EXPECT_NE(fields.find("meta.url"), std::string::npos) << fields;
  EXPECT_NE(fields.find("id"), std::string::npos) << fields;
  b = a;
  b.hash_seed = 7;
  EXPECT_NE(state_scheme_difference(a, b).find("hash seed differs"), std::string::npos);
  const StateScheme c = state_scheme_of(header(core::NormalizePolicy::kNone));
  EXPECT_NE(state_scheme_difference(a, c).find("normalization differs"), std::string::npos);
}

KeySchemeFlags field(const char* f) {
  KeySchemeFlags flags;
  flags.key_fields = std::vector<std::string>{f};
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
  const StateScheme s = state_scheme_of(header(core::NormalizePolicy::kNfcCasefold));
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
  EXPECT_FALSE(ok.config.scheme_flags.key_fields);
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
  ASSERT_TRUE(flags.config.scheme_flags.key_fields);
  EXPECT_EQ(*flags.config.scheme_flags.key_fields, std::vector<std::string>{"url"});
  EXPECT_EQ(flags.config.scheme_flags.hash_seed.value_or(0), 3U);
}

}  // namespace
}  // namespace bloomshard::app
