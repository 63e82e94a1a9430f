// The self-check: ground truth comes from construction (key j of the stream
// is distinct or a repeat of an earlier one, decided by a fixed PRNG), so
// every verdict can be checked without a second set implementation.
#include "core/self_check.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::core {
namespace {

constexpr std::size_t kDistinct = 150'000;
constexpr std::size_t kRepeats = 50'000;
constexpr std::size_t kBatch = 4096;
constexpr double kFprTarget = 0.01;

std::string distinct_key(std::size_t i) {
  std::string k = "self-check/";
  k += std::to_string(i);
  switch (i % 5) {  // exercise NUL, non-ASCII and very short keys
    case 1:
      k.push_back('\0');
      k += "nul";
      break;
    case 2:
      k += "\xE6\x97\xA5\xF0\x9F\x98\x80";
      break;
    case 3:
      k = std::to_string(i);
      break;
    default:
      break;
  }
  return k;
}

// printf-style so the figures read naturally; the attribute keeps
// -Wformat=2 checking every call's arguments.
__attribute__((format(printf, 2, 3))) void line(std::string& text, const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  text += buf;
  text += '\n';
}

// The key stream and the truth about it: distinct keys in order, with
// repeats of already-emitted keys mixed in; repeat j points at an earlier
// position of the stream.
struct KeyStream {
  std::vector<std::string> keys;
  std::vector<std::uint8_t> expect_dup;
};

KeyStream make_stream() {
  std::mt19937_64 rng(0x5e1fc4ecULL);
  KeyStream s;
  s.keys.reserve(kDistinct + kRepeats);
  s.expect_dup.reserve(kDistinct + kRepeats);
  std::size_t emitted = 0;
  std::size_t repeats = 0;
  const std::string empty_key;
  while (emitted < kDistinct || repeats < kRepeats) {
    const bool repeat = emitted > 0 && repeats < kRepeats &&
                        (emitted == kDistinct || rng() % (kDistinct + kRepeats) < kRepeats);
    if (repeat) {
      s.keys.push_back(s.keys[rng() % s.keys.size()]);
      s.expect_dup.push_back(1);
      ++repeats;
    } else {
      s.keys.push_back(emitted == 0 ? empty_key : distinct_key(emitted));
      s.expect_dup.push_back(0);
      ++emitted;
    }
  }
  return s;
}

// Every key of the stream decided by `set`, in batches of kBatch.
std::vector<Verdict> decide_stream(TwoTierSet& set, const KeyStream& stream) {
  std::vector<KeyRef> refs(stream.keys.size());
  for (std::size_t i = 0; i < refs.size(); ++i) {
    refs[i] = {hash_key(stream.keys[i]), stream.keys[i]};
  }
  std::vector<Verdict> verdicts(refs.size());
  for (std::size_t at = 0; at < refs.size(); at += kBatch) {
    const std::size_t n = std::min(kBatch, refs.size() - at);
    set.decide_batch(std::span(refs).subspan(at, n), std::span(verdicts).subspan(at, n));
  }
  return verdicts;
}

// The verdicts against the truth.
struct VerdictTally {
  std::size_t wrong_dup = 0;      // kept copy reported as duplicate
  std::size_t wrong_new = 0;      // repeat reported as new (false negative)
  std::uint64_t fp_verdicts = 0;  // kNewAfterFalsePositive verdicts
};

VerdictTally tally(const std::vector<Verdict>& verdicts, const KeyStream& stream) {
  VerdictTally t;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const bool dup = verdicts[i] == Verdict::kDuplicate;
    t.wrong_dup += (!stream.expect_dup[i] && dup) ? 1U : 0U;
    t.wrong_new += (stream.expect_dup[i] && !dup) ? 1U : 0U;
    t.fp_verdicts += verdicts[i] == Verdict::kNewAfterFalsePositive ? 1U : 0U;
  }
  return t;
}

void describe(std::string& text, const TwoTierSet& set, const ScalableBloomParams& params,
              std::size_t keys, double fpr) {
  const DecisionCounters& c = set.counters();
  line(text, "keys %zu (distinct %zu, repeats %zu), slices %u, bloom layers %zu", keys, kDistinct,
       kRepeats, params.num_slices, set.bloom().num_layers());
  line(text,
       "tier1 absent %llu, maybe %llu; tier2 lookups %llu: duplicates %llu, "
       "false positives %llu",
       static_cast<unsigned long long>(c.tier1_absent),
       static_cast<unsigned long long>(c.tier1_maybe),
       static_cast<unsigned long long>(c.tier2_lookups),
       static_cast<unsigned long long>(c.duplicates),
       static_cast<unsigned long long>(c.false_positives));
  line(text, "measured FPR %.4f%% (target %.2f%%); bloom %.1f KiB, tier-2 delta %.1f KiB",
       100.0 * fpr, 100.0 * kFprTarget, static_cast<double>(set.bloom().memory_bytes()) / 1024.0,
       static_cast<double>(set.exact().delta_bytes()) / 1024.0);
}

}  // namespace

std::vector<std::string> self_check_failures(const SelfCheckFacts& f, std::size_t distinct,
                                             std::size_t repeats, double fpr_target) {
  std::vector<std::string> failed;
  const DecisionCounters& c = f.counters;
  if (f.wrong_new != 0) {
    failed.push_back(std::to_string(f.wrong_new) + " repeats not found (false negatives)");
  }
  if (f.wrong_dup != 0) {
    failed.push_back(std::to_string(f.wrong_dup) + " first copies dropped as duplicates");
  }
  if (c.decided != f.keys) failed.push_back("decided counter " + std::to_string(c.decided));
  if (c.decided != c.tier1_absent + c.tier1_maybe || c.tier1_maybe != c.tier2_lookups ||
      c.tier2_lookups != c.duplicates + c.false_positives) {
    failed.emplace_back("counters do not add up");
  }
  if (c.duplicates != repeats) failed.push_back("duplicates " + std::to_string(c.duplicates));
  if (c.false_positives != f.fp_verdicts) failed.emplace_back("false-positive counter != verdicts");
  if (f.tier2_keys != distinct) {
    failed.push_back("tier 2 holds " + std::to_string(f.tier2_keys) + " keys, expected " +
                     std::to_string(distinct));
  }
  if (f.bloom_layers < 2) failed.emplace_back("the filter did not grow past its first layer");
  if (f.fpr > 1.5 * fpr_target) failed.emplace_back("false-positive rate above 1.5x target");
  return failed;
}

SelfCheckReport run_self_check() {
  SelfCheckReport report;
  report.ok = true;
  auto fail = [&report](const std::string& what) {
    if (report.ok) report.text += "FAILED:\n";
    report.ok = false;
    report.text += "  " + what + "\n";
  };
  const auto start = std::chrono::steady_clock::now();
  const KeyStream stream = make_stream();

  ScalableBloomParams params;
  params.initial_capacity = kDistinct / 4;  // forces the filter to grow
  params.fpr_target = kFprTarget;
  params.num_slices = 256;
  try {
    TwoTierSet set(params, SliceRange{0, params.num_slices});
    const std::vector<Verdict> verdicts = decide_stream(set, stream);
    const VerdictTally t = tally(verdicts, stream);
    const double fpr =
        static_cast<double>(set.counters().false_positives) / static_cast<double>(kDistinct);
    describe(report.text, set, params, verdicts.size(), fpr);
    const SelfCheckFacts facts{.keys = verdicts.size(),
                               .wrong_new = t.wrong_new,
                               .wrong_dup = t.wrong_dup,
                               .fp_verdicts = t.fp_verdicts,
                               .counters = set.counters(),
                               .tier2_keys = set.exact().size(),
                               .bloom_layers = set.bloom().num_layers(),
                               .fpr = fpr};
    for (const std::string& what : self_check_failures(facts, kDistinct, kRepeats, kFprTarget)) {
      fail(what);
    }
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  line(report.text, "%s in %.0f ms", report.ok ? "self-check ok" : "self-check FAILED", ms);
  return report;
}

}  // namespace bloomshard::core
