// What manifest_from_json refuses in a run manifest no build writes
// (docs/coverage.md, src/app/run): ranges of a split input that overlap,
// are empty, leave a gap or hold a cursor outside themselves; retracted
// offsets in range 0, outside what their range read, out of order or not
// numbers; a window digest without the manifest's version, or past the
// file's end; an empty skip reason, an unknown format, a reject count that
// is not a number. A state holding one must be refused by name, never
// resumed from: each would read a line twice, or not at all.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "app/feed/input_windows.hpp"
#include "app/run/run_manifest.hpp"

namespace bloomshard::app {
namespace {

// One split input of 200 bytes read as two ranges, and a plain input.
RunManifest split_manifest() {
  RunManifest m;
  m.run_id = "r";
  m.output_dir = "/out";
  m.input_windows_version = kInputWindowsVersion;
  m.input_window_bytes = kInputWindowBytes;
  InputProgress p;
  p.file.relative_path = "a.jsonl";
  p.file.size = 200;
  p.cursor = {5, 200};
  RangeProgress r0;
  r0.begin = 0, r0.end = 100, r0.cursor = {2, 50};
  RangeProgress r1;
  r1.begin = 100, r1.end = 200, r1.cursor = {3, 160}, r1.retracted = {110, 130};
  p.ranges = {r0, r1};
  p.window = InputWindow{200, 7};
  m.inputs.push_back(p);
  InputProgress q;
  q.file.relative_path = "b.jsonl";
  q.file.size = 10;
  m.inputs.push_back(q);
  return m;
}

// The refusal's message, or "" if the manifest was accepted.
std::string refusal_of_json(const std::string& json) {
  try {
    (void)manifest_from_json(json);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return {};
}

std::string refusal_of(const std::function<void(RunManifest&)>& change) {
  RunManifest m = split_manifest();
  change(m);
  return refusal_of_json(manifest_to_json(m));
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from << " not in " << text;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

constexpr const char* kRanges = "run manifest: ranges of input 'a.jsonl': ";

TEST(RunManifestCoverage, TheSplitManifestReadsBack) {
  const RunManifest m = manifest_from_json(manifest_to_json(split_manifest()));
  ASSERT_EQ(m.inputs.size(), 2U);
  ASSERT_EQ(m.inputs[0].ranges.size(), 2U);
  EXPECT_EQ(m.inputs[0].ranges[1].retracted, (std::vector<std::uint64_t>{110, 130}));
  EXPECT_EQ(m.inputs[0].window, (InputWindow{200, 7}));
}

TEST(RunManifestCoverage, RangesThatDoNotTileTheFileInOrderAreRefused) {
  const std::string order = std::string(kRanges) + "not in order or empty";
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[1].begin = 90; }), order);
  EXPECT_EQ(refusal_of([](RunManifest& m) {
              m.inputs[0].ranges[0].end = 0, m.inputs[0].ranges[0].cursor = {0, 0};
              m.inputs[0].ranges[1].begin = 0;
            }),
            order);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[1].end = 190; }),
            std::string(kRanges) + "they do not cover the file");
  EXPECT_EQ(
      refusal_of([](RunManifest& m) { m.inputs[0].file.compression = io::Compression::kGzip; }),
      std::string(kRanges) + "a compressed input is never split");
}

TEST(RunManifestCoverage, ACursorOutsideItsRangeIsRefused) {
  const std::string outside = std::string(kRanges) + "a cursor outside its range";
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[1].cursor = {1, 90}; }), outside);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[0].cursor = {2, 120}; }), outside);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[0].cursor = {0, 50}; }), outside);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[0].cursor = {2, 0}; }), outside);
}

TEST(RunManifestCoverage, RetractedOffsetsOutsideWhatTheirRangeReadAreRefused) {
  const std::string bad = std::string(kRanges) +
                          "a retracted offset in range 0, outside what its range read, or out of "
                          "order";
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[0].retracted = {10}; }), bad);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[1].retracted = {90}; }), bad);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[1].retracted = {160}; }), bad);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[1].retracted = {130, 110}; }), bad);
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].ranges[1].retracted = {110, 110}; }), bad);
  const std::string json = manifest_to_json(split_manifest());
  EXPECT_EQ(refusal_of_json(replaced(json, "[110,130]", "[\"110\",130]")),
            std::string(kRanges) + "a retracted offset is not a number");
}

TEST(RunManifestCoverage, WindowDigestsNeedTheManifestsVersionAndLieInsideTheFile) {
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.input_windows_version = 0; }),
            "run manifest: input 'a.jsonl' has a window digest but the manifest no "
            "'input_windows'");
  EXPECT_EQ(refusal_of([](RunManifest& m) { m.inputs[0].window->end = 201; }),
            "run manifest: field 'window_end' of input 'a.jsonl' is past its size");
  const std::string json = manifest_to_json(split_manifest());
  const std::string version = "\"input_windows\":" + std::to_string(kInputWindowsVersion);
  EXPECT_NE(
      refusal_of_json(replaced(json, version, "\"input_windows\":99")).find("input_windows 99 of"),
      std::string::npos);
}

TEST(RunManifestCoverage, AnEmptySkipReasonAnUnknownFormatAndABadRejectCountAreRefused) {
  const std::string json = manifest_to_json(split_manifest());
  EXPECT_EQ(refusal_of_json(replaced(json, "\"relative_path\":\"b.jsonl\"",
                                     "\"relative_path\":\"b.jsonl\",\"skipped\":\"\"")),
            "run manifest: empty skip reason");
  EXPECT_EQ(refusal_of_json(replaced(json, "\"format\":0", "\"format\":9")),
            "run manifest: unknown format or compression of input 'a.jsonl'");
  EXPECT_EQ(refusal_of_json(
                replaced(json, "\"rejected_by_reason\":{", "\"rejected_by_reason\":{\"x\":\"1\"")),
            "run manifest: bad reject count");
}

}  // namespace
}  // namespace bloomshard::app
