// Edges of the run manifest's reader that the other manifest tests leave
// untaken (docs/coverage.md, src/app/run). The input_order object
// (input_order_manifest.cpp): a tag in a split input is read only where one
// of its ranges had read (anywhere once joined); an input_order that is not
// an object, a list missing, cut outputs of no input or out of order are
// refused. run_manifest.cpp: an empty range list, a window size of another
// build, half a window digest pair are refused; an optional counter absent
// reads as 0, a required one absent is refused. Each refusal names what.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "app/feed/input_windows.hpp"
#include "app/run/input_order_manifest.hpp"
#include "app/run/run_manifest.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {
namespace {

core::OrderTag order_tag(std::uint64_t input, std::uint64_t offset) {
  return *core::order_tag_base(input, 1U << 20, false) | offset;
}

// Input 0 finished (its output cut by the end pass), input 1 split in two
// ranges of 2500 bytes, read up to bytes 1000 and 3000.
RunManifest split_second_input() {
  RunManifest m;
  m.run_id = "r";
  for (const char* name : {"a", "b"}) {
    InputProgress p;
    p.file.relative_path = name;
    p.file.size = 5000;
    m.inputs.push_back(p);
  }
  m.inputs[0].done = true;
  m.inputs[0].cursor = {90, 5000};
  m.inputs[0].output_length = 1234;
  RangeProgress first;
  first.begin = 0;
  first.end = 2500;
  first.cursor = {10, 1000};
  RangeProgress second;
  second.begin = 2500;
  second.end = 5000;
  second.cursor = {5, 3000};
  m.inputs[1].ranges = {first, second};
  m.input_order = InputOrderProgress{};
  m.input_order->version = kInputOrderListVersion;  // the kept copies listed (version 1)
  m.input_order->kept = {{order_tag(1, 500), core::hash_key("x")}};
  m.input_order->cut_outputs = {{0, 1234}};
  return m;
}

// The manifest's JSON with `from` replaced by `to` once, read back: the
// error text, or "(read)".
std::string read_back(const RunManifest& m, const std::string& from, const std::string& to) {
  std::string json = manifest_to_json(m);
  const std::size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) json.replace(at, from.size(), to);
  try {
    (void)manifest_from_json(json);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(read)";
}

TEST(InputOrderManifestCoverage, ASplitInputsTagIsReadOnlyWhereOneOfItsRangesHadRead) {
  const RunManifest m = split_second_input();
  ASSERT_EQ(manifest_from_json(manifest_to_json(m)).input_order, m.input_order);
  const std::string kept = std::to_string(order_tag(1, 500));
  // In the second range's read part: read.
  EXPECT_EQ(read_back(m, kept, std::to_string(order_tag(1, 2800))), "(read)");
  // Between the first range's cursor and the second range's begin, and
  // past the second range's cursor: never read at the cut.
  EXPECT_NE(read_back(m, kept, std::to_string(order_tag(1, 1000))).find("'kept' entry 0: tag"),
            std::string::npos);
  EXPECT_NE(read_back(m, kept, std::to_string(order_tag(1, 2400))).find("names no record"),
            std::string::npos);
  EXPECT_NE(read_back(m, kept, std::to_string(order_tag(1, 3000))).find("names no record"),
            std::string::npos);
}

TEST(InputOrderManifestCoverage, AFinishedSplitInputsTagIsReadUpToItsSizeWhateverItsRanges) {
  RunManifest m = split_second_input();
  m.inputs[1].done = true;  // joined: every byte before its size was read
  m.inputs[1].output_length = 777;
  const std::string kept = std::to_string(order_tag(1, 500));
  // Between the ranges' saved cursors, and its last byte: read.
  EXPECT_EQ(read_back(m, kept, std::to_string(order_tag(1, 2400))), "(read)");
  EXPECT_EQ(read_back(m, kept, std::to_string(order_tag(1, 4999))), "(read)");
  EXPECT_NE(read_back(m, kept, std::to_string(order_tag(1, 5000))).find("names no record"),
            std::string::npos);
}

TEST(InputOrderManifestCoverage, AnInputOrderThatIsNotAnObjectOrLacksAListIsRefused) {
  RunManifest m = split_second_input();
  EXPECT_NE(read_back(m, "\"kept\":[", "\"kepd\":[").find("missing or bad list 'kept'"),
            std::string::npos);
  EXPECT_NE(read_back(m, "\"cut_outputs\":[", "\"cut_outputs\":{},\"x\":[")
                .find("missing or bad list 'cut_outputs'"),
            std::string::npos);
  m.input_order.reset();
  EXPECT_NE(read_back(m, "\"run_id\":", "\"input_order\":7,\"run_id\":")
                .find("run manifest: input_order: not an object"),
            std::string::npos);
  EXPECT_NE(read_back(m, "\"run_id\":", "\"input_order\":[],\"run_id\":").find("not an object"),
            std::string::npos);
}

TEST(InputOrderManifestCoverage, CutOutputsOfNoInputOrOutOfOrderAreRefused) {
  RunManifest m = split_second_input();
  m.inputs[1].done = true;
  m.inputs[1].output_length = 777;
  m.input_order->cut_outputs = {{0, 1234}, {1, 777}};
  ASSERT_EQ(manifest_from_json(manifest_to_json(m)).input_order, m.input_order);
  EXPECT_NE(read_back(m, "\"cut_outputs\":[0,1234,1,777]", "\"cut_outputs\":[0,1234,2,777]")
                .find("'cut_outputs' entry 1 names no finished input"),
            std::string::npos);
  EXPECT_NE(read_back(m, "\"cut_outputs\":[0,1234,1,777]", "\"cut_outputs\":[1,777,0,1234]")
                .find("'cut_outputs' entry 1 is out of order"),
            std::string::npos);
  EXPECT_NE(read_back(m, "\"cut_outputs\":[0,1234,1,777]", "\"cut_outputs\":[0,1234,0,1234]")
                .find("'cut_outputs' entry 1 is out of order"),
            std::string::npos);
}

// One unsplit input of 10 bytes with a window digest.
RunManifest windowed_input() {
  RunManifest m;
  m.run_id = "r";
  m.output_dir = "/out";
  m.input_windows_version = kInputWindowsVersion;
  m.input_window_bytes = kInputWindowBytes;
  InputProgress p;
  p.file.relative_path = "c.jsonl";
  p.file.size = 10;
  p.cursor = {1, 10};
  p.window = InputWindow{10, 7};
  m.inputs.push_back(p);
  m.counters.batch_duplicates = 5;
  return m;
}

TEST(RunManifestEdgesCoverage, AnEmptyRangeListIsRefusedEvenForAnEmptyFile) {
  RunManifest m = windowed_input();
  m.inputs[0].file.size = 0;
  m.inputs[0].cursor = {};
  m.inputs[0].window.reset();
  EXPECT_EQ(read_back(m, "\"output_length\":0", "\"output_length\":0,\"ranges\":[]"),
            "run manifest: ranges of input 'c.jsonl': they do not cover the file");
}

TEST(RunManifestEdgesCoverage, WindowsOfAnotherSizeOrHalfADigestPairAreRefused) {
  const RunManifest m = windowed_input();
  ASSERT_EQ(manifest_from_json(manifest_to_json(m)).inputs[0].window, (InputWindow{10, 7}));
  const std::string bytes = "\"input_window_bytes\":" + std::to_string(kInputWindowBytes);
  EXPECT_NE(read_back(m, bytes, "\"input_window_bytes\":" + std::to_string(kInputWindowBytes + 1))
                .find("bytes; this build reads version"),
            std::string::npos);
  // A digest without its end, and an end without its digest.
  EXPECT_EQ(read_back(m, "\"window_end\":10,", ""),
            "run manifest: field 'window_end' missing or malformed");
  EXPECT_EQ(read_back(m, ",\"window_digest\":7", ""),
            "run manifest: field 'window_digest' missing or malformed");
}

TEST(RunManifestEdgesCoverage, AnOptionalCounterAbsentReadsAsZeroARequiredOneIsRefused) {
  const RunManifest m = windowed_input();
  std::string json = manifest_to_json(m);
  const std::string optional = "\"batch_duplicates\":5,";
  const std::size_t at = json.find(optional);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(manifest_from_json(json).counters.batch_duplicates, 5U);
  json.erase(at, optional.size());
  EXPECT_EQ(manifest_from_json(json).counters.batch_duplicates, 0U);
  EXPECT_EQ(read_back(m, "\"records\":0,", ""),
            "run manifest: field 'records' missing or malformed");
}

}  // namespace
}  // namespace bloomshard::app
