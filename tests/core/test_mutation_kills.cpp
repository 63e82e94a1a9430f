// Tests written for mutants that survived the suite (tests/mutation/mutate.py,
// docs/testing.md "Mutation check"): each pins one boundary or one call of
// the sequential core that no other test told apart from a changed one.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bloom/sizing_plan.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "core/memory/huge_page_mapping.hpp"
#include "minhash/minhash_signature.hpp"

namespace bloomshard::core {
namespace {

// The what() of the std::invalid_argument that `f` throws, or a marker.
template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

// A target of exactly 0 is refused as outside (0, 0.5], not searched for:
// the search would end with another message ("needs more than ... bits").
TEST(MutationKills, AZeroFprTargetIsRefusedAsOutOfRangeNotSearched) {
  EXPECT_EQ(invalid_argument_of([] { (void)choose_geometry(0.0); }),
            "FPR target 0.000000 outside (0, 0.5]");
  EXPECT_NO_THROW((void)choose_geometry(0.5));
}

// A tightening of exactly 0 is refused: layer 0 alone would not notice
// (its target p (1 - r) r^0 is p), every later layer's target would be 0.
TEST(MutationKills, AZeroTighteningIsRefusedAtLayerZero) {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.fpr_target = 0.01;
  p.tightening = 0.0;
  EXPECT_EQ(invalid_argument_of([&] { (void)layer_geometry(p, 0); }),
            "tightening 0.000000 outside (0, 1)");
}

// The plan's sizes switch from one decimal to none at 100 MiB exactly.
TEST(MutationKills, MebibyteLabelsDropTheDecimalFrom100MiB) {
  constexpr double kMiB = 1048576.0;
  EXPECT_EQ(mib_label(99.94 * kMiB), "99.9 MiB");
  EXPECT_EQ(mib_label(100.0 * kMiB), "100 MiB");
  EXPECT_EQ(mib_label(100.3 * kMiB), "100 MiB");
  EXPECT_EQ(mib_label(2048.0 * kMiB), "2048 MiB");
}

// The 4-byte checks are their own branch: an overlong 4-byte sequence and
// one above U+10FFFF are refused, naming why.
TEST(MutationKills, FourByteSequencesOutOfRangeAreRefused) {
  const auto why = [](std::string_view text) {
    try {
      check_utf8(text);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(valid)");
  };
  EXPECT_EQ(why("\xF0\x80\x80\x80"), "invalid UTF-8 at byte 0: overlong 4-byte sequence");
  EXPECT_EQ(why("a\xF4\x90\x80\x80"), "invalid UTF-8 at byte 1: code point above U+10FFFF");
  EXPECT_EQ(why("\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"), "(valid)");  // U+10000, U+10FFFF
}

// The scalar kernel runs everywhere; on x86 the answer for the vector ones
// is the CPU's (this machine kind has AVX2), so their paths are tested.
TEST(MutationKills, TheScalarSignatureKernelIsAlwaysSupported) {
  EXPECT_TRUE(signature_isa_supported(SignatureIsa::kScalar));
#if defined(__x86_64__)
  EXPECT_EQ(signature_isa_supported(SignatureIsa::kAvx2), __builtin_cpu_supports("avx2") != 0);
#endif
}

// A mapping is the request rounded up to whole pages, never a page more:
// 4 KiB pages below 2 MiB, 2 MiB pages from there on. An exact multiple
// stays as it is (the tier-2 delta reserves tables of exact page sizes, and
// an extra 2 MiB page per table is memory the sizing plan does not count).
TEST(MutationKills, AMappingIsTheRequestRoundedUpToWholePagesNoMore) {
  using detail::HugePageMapping;
  constexpr std::size_t kSmall = 4096;
  constexpr std::size_t kHuge = HugePageMapping::kHugePageBytes;
  const struct {
    std::size_t request, mapped;
  } cases[] = {
      {1, kSmall},    {kSmall, kSmall},       {kSmall + 1, 2 * kSmall}, {3 * kSmall, 3 * kSmall},
      {kHuge, kHuge}, {kHuge + 1, 2 * kHuge}, {3 * kHuge, 3 * kHuge}};
  for (const auto& c : cases) {
    HugePageMapping m;
    m.grow_to(c.request);
    EXPECT_EQ(m.size(), c.mapped) << "request of " << c.request << " bytes";
  }
  HugePageMapping grown;  // growth rounds the same way
  grown.grow_to(kSmall);
  grown.grow_to(2 * kHuge);
  EXPECT_EQ(grown.size(), 2 * kHuge);
}

}  // namespace
}  // namespace bloomshard::core
