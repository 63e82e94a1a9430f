// The names core gives its enumerations (docs/coverage.md): each value's
// name and label parse back to it, the parsers name what they refuse, and
// a value no build defines (a damaged byte read from a state, say) is
// named "unknown" and refused rather than taken for one that exists. The
// probe and signature ISAs are checked against the CPU flags the kernel
// reports in /proc/cpuinfo, not against the code's own detection.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_digest.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/text_normalize.hpp"
#include "core/minhash/minhash_signature.hpp"
#include "core/window/slot_window.hpp"

namespace bloomshard::core {
namespace {

// The message of the std::invalid_argument `f` throws, or a marker.
template <class F>
std::string name_refusal_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no refusal)";
}

// The "flags" line of the first CPU in /proc/cpuinfo, with spaces around.
std::string cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) return " " + line.substr(line.find(':') + 1) + " ";
  }
  return {};
}

bool cpu_has(const std::string& flag) {
  return cpu_flags().find(" " + flag + " ") != std::string::npos;
}

TEST(CoreCoverageNames, NormalizationPoliciesRoundTripAndAnUnknownValueIsRefused) {
  for (const NormalizePolicy p : kAllPolicies) {
    EXPECT_EQ(parse_policy(policy_label(p)), p) << policy_label(p);
  }
  EXPECT_EQ(policy_label(NormalizePolicy::kNfcCasefoldV1), "nfc-casefold/v1");
  EXPECT_EQ(policy_label(NormalizePolicy::kNfcCasefold), "nfc-casefold/v2");
  const auto bogus = static_cast<NormalizePolicy>(200);
  EXPECT_EQ(policy_name(bogus), "unknown");
  std::string out;
  EXPECT_EQ(name_refusal_of([&] { (void)normalize_key(bogus, "key", out); }),
            "normalize_key: unknown policy value 200");
  EXPECT_EQ(name_refusal_of([] { (void)parse_policy("nfkc"); }),
            "unknown normalization policy 'nfkc' (expected none, nfc, nfc-casefold or "
            "nfc-casefold/v1)");
}

TEST(CoreCoverageNames, KeyDigestsRoundTripWithTheirSizes) {
  EXPECT_EQ(key_digest_bytes(KeyDigest::kNone), 0U);
  EXPECT_EQ(key_digest_bytes(KeyDigest::kXxh3_128), 16U);
  EXPECT_EQ(key_digest_bytes(KeyDigest::kSha256), 32U);
  for (const KeyDigest d : kAllKeyDigests) {
    EXPECT_EQ(parse_key_digest(key_digest_name(d)), d);
    EXPECT_EQ(parse_key_digest(key_digest_label(d)), d);
    EXPECT_EQ(digest_key(d, "abc").size(), d == KeyDigest::kNone ? 3U : key_digest_bytes(d));
  }
  const auto bogus = static_cast<KeyDigest>(7);
  EXPECT_EQ(key_digest_name(bogus), "unknown");
  EXPECT_EQ(key_digest_bytes(bogus), 0U);
  EXPECT_EQ(name_refusal_of([] { (void)parse_key_digest("md5"); }),
            "unknown key digest 'md5' (expected none, xxh3-128 or sha256)");
  EXPECT_EQ(name_refusal_of([] { KeyDigester d(KeyDigest::kNone); }),
            "KeyDigester needs a digest, not none");
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += digits[static_cast<unsigned char>(c) >> 4];
    out += digits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

// FIPS 180-2's "abc" vector is the oracle; a reset forgets a half-fed key,
// finish starts the next one, and a moved digester goes on where it was.
TEST(CoreCoverageNames, Sha256DigesterResetsFinishesAndMoves) {
  const std::string abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  KeyDigester d(KeyDigest::kSha256);
  d.update("half a key");
  d.reset();
  d.update("a");
  KeyDigester moved(std::move(d));
  moved.update("bc");
  std::string out;
  moved.finish(out);
  EXPECT_EQ(hex(out), abc);
  KeyDigester other(KeyDigest::kXxh3_128);
  other = std::move(moved);
  EXPECT_EQ(other.kind(), KeyDigest::kSha256);
  other.update("abc");
  other.finish(out);
  EXPECT_EQ(hex(out), abc);
  EXPECT_EQ(hex(digest_key(KeyDigest::kSha256, "abc")), abc);
}

TEST(CoreCoverageNames, TextNormalizationsRoundTripAndAnUnknownValueIsNamed) {
  for (const TextNormalize t : kAllTextNormalizations) {
    EXPECT_EQ(parse_text_normalize(text_normalize_name(t)), t);
    EXPECT_EQ(parse_text_normalize(text_normalize_label(t)), t);
  }
  EXPECT_EQ(text_normalize_label(TextNormalize::kWsLower), "ws-lower/v1");
  EXPECT_EQ(text_normalize_name(static_cast<TextNormalize>(9)), "unknown");
  EXPECT_THROW((void)parse_text_normalize("lower"), std::invalid_argument);
}

TEST(CoreCoverageNames, ProbeIsasAreNamedAndSupportedAsTheCpuFlagsSay) {
  ASSERT_FALSE(cpu_flags().empty()) << "no flags line in /proc/cpuinfo";
  EXPECT_EQ(probe_isa_name(ProbeIsa::kScalar), "scalar");
  EXPECT_EQ(probe_isa_name(ProbeIsa::kAvx2), "avx2");
  EXPECT_EQ(probe_isa_name(ProbeIsa::kAvx512), "avx512");
  EXPECT_EQ(probe_isa_name(static_cast<ProbeIsa>(5)), "unknown");
  EXPECT_TRUE(probe_isa_supported(ProbeIsa::kScalar));
  EXPECT_EQ(probe_isa_supported(ProbeIsa::kAvx2), cpu_has("avx2"));
  EXPECT_EQ(probe_isa_supported(ProbeIsa::kAvx512), cpu_has("avx512f"));
  EXPECT_FALSE(probe_isa_supported(static_cast<ProbeIsa>(5)));  // a damaged byte: not supported
  const ProbeIsa widest = cpu_has("avx512f") ? ProbeIsa::kAvx512
                          : cpu_has("avx2")  ? ProbeIsa::kAvx2
                                             : ProbeIsa::kScalar;
  EXPECT_EQ(probe_isa(), widest);
}

TEST(CoreCoverageNames, SignatureIsasAreNamedAndSupportedAsTheCpuFlagsSay) {
  EXPECT_EQ(signature_isa_name(SignatureIsa::kScalar), "scalar");
  EXPECT_EQ(signature_isa_name(SignatureIsa::kAvx2), "avx2");
  EXPECT_EQ(signature_isa_name(SignatureIsa::kAvx512), "avx512");
  EXPECT_EQ(signature_isa_name(static_cast<SignatureIsa>(5)), "unknown");
  EXPECT_TRUE(signature_isa_supported(SignatureIsa::kScalar));
  EXPECT_EQ(signature_isa_supported(SignatureIsa::kAvx2), cpu_has("avx2"));
  EXPECT_EQ(signature_isa_supported(SignatureIsa::kAvx512),
            cpu_has("avx512f") && cpu_has("avx512dq"));
  EXPECT_FALSE(signature_isa_supported(static_cast<SignatureIsa>(5)));
}

// An ISA the CPU lacks falls back to the scalar probe: same answers, and
// accumulate ORs them into what `out` held.
TEST(CoreCoverageNames, AForcedProbeIsaAnswersAsTheScalarProbeWithOrWithoutAccumulate) {
  LayerLayout layout;
  layout.blocks_per_slice = 4;
  layout.k = 7;
  BlockWords words(layout.num_slices * layout.blocks_per_slice * kBlockWords, 0);  // aligned
  std::vector<KeyHash> hashes;
  for (std::uint64_t i = 0; i < 100; ++i) hashes.push_back({i * 0x9E3779B97F4A7C15ULL, ~i * 31});
  std::vector<KeyHash> inserted(hashes.begin(), hashes.begin() + 50);
  ASSERT_EQ(insert_layer_batch(words.data(), layout, inserted), 50U);
  std::vector<std::uint8_t> scalar(hashes.size());
  query_layer_batch_isa(ProbeIsa::kScalar, words.data(), layout, hashes, scalar, false);
  for (std::size_t i = 0; i < 50; ++i) ASSERT_EQ(scalar[i], 1U) << i;  // no false negative
  for (const ProbeIsa isa : {ProbeIsa::kAvx2, ProbeIsa::kAvx512, static_cast<ProbeIsa>(5)}) {
    std::vector<std::uint8_t> got(hashes.size(), 0);
    query_layer_batch_isa(isa, words.data(), layout, hashes, got, false);
    EXPECT_EQ(got, scalar) << probe_isa_name(isa);
    std::vector<std::uint8_t> accumulated(hashes.size(), 1);
    query_layer_batch_isa(isa, words.data(), layout, hashes, accumulated, true);
    EXPECT_EQ(accumulated, std::vector<std::uint8_t>(hashes.size(), 1)) << probe_isa_name(isa);
  }
}

TEST(CoreCoverageNames, WindowAttributeRefusalsNameTheItem) {
  EXPECT_EQ(name_refusal_of([] { (void)parse_window_attribute("slots=3; slot=run"); }),
            "window attribute 'slots=3; slot=run' does not start with 'window/v1; '");
  EXPECT_EQ(name_refusal_of([] { (void)parse_window_attribute("window/v1; slots"); }),
            "window item 'slots' has no '='");
  EXPECT_EQ(name_refusal_of([] { (void)parse_window_attribute("window/v1; slots=3; slots=4"); }),
            "unknown or repeated window item 'slots=4'");
  EXPECT_EQ(name_refusal_of([] { (void)parse_window_attribute("window/v1; slot=run; slot=run"); }),
            "unknown or repeated window item 'slot=run'");
  EXPECT_EQ(name_refusal_of([] { (void)parse_window_attribute("window/v1; slot=run"); }),
            "window attribute lacks 'slots' or 'slot'");
  EXPECT_EQ(
      name_refusal_of([] { (void)parse_window_attribute("window/v1; slots=3; slot=seconds:"); }),
      "slot seconds '' is not a non-negative integer");
  EXPECT_EQ(
      name_refusal_of([] { (void)parse_window_attribute("window/v1; slots=3; slot=records:5x"); }),
      "slot records '5x' is not a non-negative integer");
  EXPECT_EQ(name_refusal_of([] { (void)parse_window_attribute("window/v1; slots=99; slot=run"); }),
            "window slots 99");
  EXPECT_EQ(name_refusal_of([] {
              check_window({3, SlotRule::kPerRun, 5});
            }),
            "a per-run slot has no size");
  EXPECT_EQ(name_refusal_of([] {
              check_window({kMaxWindow + 1, SlotRule::kPerRun, 0});
            }),
            "--window 33 outside [1, 32]");
  EXPECT_EQ(window_attribute({2, static_cast<SlotRule>(9), 0}), "window/v1; slots=2; slot=");
  EXPECT_EQ(describe_window({4, SlotRule::kWallSeconds, 60}), "--window 4 --slot-every 60s");
  EXPECT_EQ(describe_window({4, SlotRule::kPerRun, 0}), "--window 4");
  EXPECT_EQ(name_refusal_of([] { (void)parse_duration_seconds("307445734561825861m"); }),
            "duration '307445734561825861' out of range");
  EXPECT_EQ(parse_duration_seconds("307445734561825860m"), 307445734561825860ULL * 60);
}

}  // namespace
}  // namespace bloomshard::core
