// The CLI's self-check passes on a healthy build and reports its figures;
// each of its rules, fed the facts of a broken build, names what broke.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/self_check.hpp"

namespace bloomshard::core {
namespace {

TEST(SelfCheck, PassesAndReports) {
  const SelfCheckReport r = run_self_check();
  EXPECT_TRUE(r.ok) << r.text;
  EXPECT_NE(r.text.find("measured FPR"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("self-check ok"), std::string::npos) << r.text;
  std::printf("%s", r.text.c_str());
}

constexpr std::size_t kDistinct = 100;
constexpr std::size_t kRepeats = 30;
constexpr double kTarget = 0.01;

// The facts of a correct run of 100 distinct keys and 30 repeats: 31 keys
// maybe in tier 1 (the 30 repeats and one false positive), 99 absent.
SelfCheckFacts healthy() {
  SelfCheckFacts f;
  f.keys = kDistinct + kRepeats;
  f.fp_verdicts = 1;
  f.counters.decided = kDistinct + kRepeats;
  f.counters.tier1_maybe = kRepeats + 1;
  f.counters.tier1_absent = f.counters.decided - f.counters.tier1_maybe;
  f.counters.tier2_lookups = kRepeats + 1;
  f.counters.duplicates = kRepeats;
  f.counters.false_positives = 1;
  f.tier2_keys = kDistinct;
  f.bloom_layers = 2;
  f.fpr = 1.0 / kDistinct;
  return f;
}

std::vector<std::string> failures(const SelfCheckFacts& f) {
  return self_check_failures(f, kDistinct, kRepeats, kTarget);
}

TEST(SelfCheckRules, AHealthyRunBreaksNoRule) { EXPECT_TRUE(failures(healthy()).empty()); }

TEST(SelfCheckRules, EachBrokenFactIsNamedAlone) {
  using Names = std::vector<std::string>;
  SelfCheckFacts f = healthy();
  f.wrong_new = 2;
  EXPECT_EQ(failures(f), Names{"2 repeats not found (false negatives)"});
  f = healthy();
  f.wrong_dup = 3;
  EXPECT_EQ(failures(f), Names{"3 first copies dropped as duplicates"});
  f = healthy();
  f.keys = 131;  // one verdict more than the set decided
  EXPECT_EQ(failures(f), Names{"decided counter 130"});
  f = healthy();
  f.counters.tier1_absent -= 1;  // decided != absent + maybe
  EXPECT_EQ(failures(f), Names{"counters do not add up"});
  f = healthy();
  f.counters.tier2_lookups -= 1;  // a maybe that tier 2 never saw
  f.counters.false_positives -= 1;
  f.fp_verdicts -= 1;
  EXPECT_EQ(failures(f), Names{"counters do not add up"});
  f = healthy();
  f.counters.tier1_maybe += 1;  // lookups != duplicates + false positives only
  f.counters.tier1_absent -= 1;
  f.counters.tier2_lookups += 1;
  EXPECT_EQ(failures(f), Names{"counters do not add up"});
  f = healthy();
  f.counters.duplicates -= 1;  // one repeat counted a false positive
  f.counters.false_positives += 1;
  f.fp_verdicts += 1;
  EXPECT_EQ(failures(f), Names{"duplicates 29"});
  f = healthy();
  f.fp_verdicts = 0;
  EXPECT_EQ(failures(f), Names{"false-positive counter != verdicts"});
  f = healthy();
  f.tier2_keys = kDistinct - 1;
  EXPECT_EQ(failures(f), Names{"tier 2 holds 99 keys, expected 100"});
  f = healthy();
  f.bloom_layers = 1;
  EXPECT_EQ(failures(f), Names{"the filter did not grow past its first layer"});
  f = healthy();
  f.fpr = 1.5 * kTarget;  // at the bound: still passes
  EXPECT_TRUE(failures(f).empty());
  f.fpr = 1.5 * kTarget * 1.0001;
  EXPECT_EQ(failures(f), Names{"false-positive rate above 1.5x target"});
}

TEST(SelfCheckRules, EveryBrokenRuleIsListedInOrder) {
  SelfCheckFacts f;  // nothing decided, nothing held
  f.keys = 5;
  f.wrong_new = 1;
  f.wrong_dup = 1;
  f.fp_verdicts = 1;
  f.counters.tier1_maybe = 1;
  f.fpr = 1;
  EXPECT_EQ(failures(f),
            (std::vector<std::string>{
                "1 repeats not found (false negatives)", "1 first copies dropped as duplicates",
                "decided counter 0", "counters do not add up", "duplicates 0",
                "false-positive counter != verdicts", "tier 2 holds 0 keys, expected 100",
                "the filter did not grow past its first layer",
                "false-positive rate above 1.5x target"}));
}

}  // namespace
}  // namespace bloomshard::core
