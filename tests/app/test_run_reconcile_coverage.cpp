// reconcile_inputs' cases the binary's tests leave out (counted by the
// coverage build): a split input that changed after it was finished or was
// replaced under the same size and mtime (never revalidated: its ranges
// were cut from the old bytes), a skipped input revalidated and read on,
// a revalidation that fails, and the ranks' own pass without a window
// check (rank 0 checked the windows when it planned the start).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/feed/input_windows.hpp"
#include "app/run/run_manifest.hpp"
#include "app/run/run_state.hpp"

namespace bloomshard::app {
namespace {

InputProgress progress_of(const std::string& rel, std::uint64_t size) {
  InputProgress p;
  p.file.relative_path = rel;
  p.file.size = size;
  p.file.mtime_ns = 1'700'000'000'000'000'000;
  return p;
}

// An input cut into two ranges at byte 500.
std::vector<RangeProgress> two_ranges() {
  std::vector<RangeProgress> ranges(2);
  ranges[0].end = 500;
  ranges[1].begin = 500;
  ranges[1].end = 1000;
  return ranges;
}

RunManifest manifest_of(InputProgress p) {
  RunManifest m;
  m.input_windows_version = kInputWindowsVersion;
  m.inputs = {std::move(p)};
  return m;
}

const RevalidateFn kSame = [](const InputProgress&, const io::InputFile&) { return std::string(); };
const WindowCheckFn kReplaced = [](const InputProgress&, const io::InputFile&) {
  return std::string("its first 4096 bytes differ");
};

TEST(ReconcileCoverage, ASplitInputThatChangedIsRefusedFinishedOrNotEvenToRevalidation) {
  InputProgress p = progress_of("big.jsonl", 1000);
  p.done = true;
  p.ranges = two_ranges();
  RunManifest m = manifest_of(p);
  io::InputFile now = p.file;
  now.size = 1200;
  const InputChanges ch = reconcile_inputs(m, {&now, 1}, &kSame);
  EXPECT_EQ(ch.refusal.rfind("input 'big.jsonl' was split into byte ranges and changed after it "
                             "was finished (size 1000 -> 1200 bytes (grew by 200)",
                             0),
            0U)
      << ch.refusal;
  EXPECT_NE(ch.refusal.find("; a split input cannot be revalidated"), std::string::npos)
      << ch.refusal;
  // Not started yet, its ranges are still the old bytes' cuts: refused too
  // (an unsplit input's new content would just be read).
  InputProgress unstarted = progress_of("big.jsonl", 1000);
  unstarted.ranges = two_ranges();
  RunManifest u = manifest_of(unstarted);
  const InputChanges uch = reconcile_inputs(u, {&now, 1}, &kSame);
  EXPECT_EQ(uch.refusal.rfind("input 'big.jsonl' was split into byte ranges and changed before all "
                              "were read (size 1000 -> 1200 bytes",
                              0),
            0U)
      << uch.refusal;
}

TEST(ReconcileCoverage, AStartedSplitInputReplacedUnderTheSameSizeAndMtimeIsRefused) {
  InputProgress p = progress_of("big.jsonl", 1000);
  p.ranges = two_ranges();
  p.ranges[0].cursor = {4, 120};
  p.window = InputWindow{.end = 1000, .digest = 42};
  RunManifest m = manifest_of(p);
  const io::InputFile now = p.file;
  const InputChanges ch = reconcile_inputs(m, {&now, 1}, &kSame, &kReplaced);
  EXPECT_EQ(ch.refusal.rfind("input 'big.jsonl' was split into byte ranges and was replaced after "
                             "some of its records were read: its size and mtime are the saved ones",
                             0),
            0U)
      << ch.refusal;
  EXPECT_NE(ch.refusal.find("but its first 4096 bytes differ; a split input cannot be revalidated"),
            std::string::npos)
      << ch.refusal;
}

TEST(ReconcileCoverage, ASkippedInputThatGrewIsRevalidatedAndReadOnFromItsCursor) {
  InputProgress p = progress_of("cut.jsonl.gz", 300);
  p.done = true;
  p.skipped = "broken at record 5 (gzip: invalid block)";
  p.cursor = {4, 90};
  RunManifest m = manifest_of(p);
  io::InputFile now = p.file;
  now.size = 400;
  now.mtime_ns += 1'000'000'000;
  const InputChanges ch = reconcile_inputs(m, {&now, 1}, &kSame);
  ASSERT_TRUE(ch.refusal.empty()) << ch.refusal;
  ASSERT_EQ(ch.notes.size(), 1U);
  EXPECT_NE(ch.notes[0].find("; revalidated: the records read so far are the same (4 records); it "
                             "was skipped there (broken at record 5 (gzip: invalid block)), "
                             "reading goes on now"),
            std::string::npos)
      << ch.notes[0];
  ASSERT_EQ(m.inputs.size(), 1U);
  EXPECT_FALSE(m.inputs[0].done);
  EXPECT_TRUE(m.inputs[0].skipped.empty());
  EXPECT_EQ(m.inputs[0].file.size, 400U);
  EXPECT_EQ(m.inputs[0].cursor, (io::InputCursor{4, 90}));
}

TEST(ReconcileCoverage, ARevalidationThatFailsIsTheRefusalWithItsReason) {
  InputProgress p = progress_of("a.jsonl", 300);
  p.cursor = {1, 30};
  RunManifest m = manifest_of(p);
  io::InputFile now = p.file;
  now.size = 20;
  const RevalidateFn shorter = [](const InputProgress&, const io::InputFile&) {
    return std::string("it now ends after 0");
  };
  const InputChanges ch = reconcile_inputs(m, {&now, 1}, &shorter);
  EXPECT_EQ(ch.refusal.rfind("input 'a.jsonl' changed after 1 of its records were read (size 300 "
                             "-> 20 bytes (shrank by 280)",
                             0),
            0U)
      << ch.refusal;
  EXPECT_NE(ch.refusal.find(" and cannot be revalidated: it now ends after 0"), std::string::npos)
      << ch.refusal;
}

TEST(ReconcileCoverage, WithoutAWindowCheckAStartedInputOfTheSameSizeAndMtimeGoesOn) {
  InputProgress p = progress_of("a.jsonl", 300);
  p.cursor = {2, 60};
  p.window = InputWindow{.end = 300, .digest = 42};
  RunManifest m = manifest_of(p);
  const io::InputFile now = p.file;
  const InputChanges ch = reconcile_inputs(m, {&now, 1}, &kSame, nullptr);
  EXPECT_TRUE(ch.refusal.empty()) << ch.refusal;
  EXPECT_TRUE(ch.notes.empty());
  // With the check, the same input is refused unless revalidated.
  RunManifest checked = manifest_of(p);
  EXPECT_FALSE(reconcile_inputs(checked, {&now, 1}, nullptr, &kReplaced).refusal.empty());
}

}  // namespace
}  // namespace bloomshard::app
