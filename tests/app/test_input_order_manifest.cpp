// The manifest's input_order object (app/run/input_order_manifest.hpp,
// docs/checkpoint-format.md): what a --kept-copy first run's owners know
// beyond tier 2 round-trips exactly in both versions (1: the kept copies
// listed in the manifest, states written before version 2; 2: counted, as
// rows of the generation), and a damaged or foreign one is refused naming
// the field and the entry, never read as something else.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "app/run/input_order_manifest.hpp"
#include "app/run/run_manifest.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {
namespace {

core::OrderTag tag(std::uint64_t input, std::uint64_t offset) {
  return *core::order_tag_base(input, 1U << 20, false) | offset;
}

RunManifest two_inputs() {
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
  m.inputs[1].cursor = {40, 3000};  // read up to byte 3000
  m.input_order = InputOrderProgress{};
  m.input_order->version = kInputOrderListVersion;
  m.input_order->watermark = core::order_position(tag(0, 100));
  m.input_order->kept = {{tag(0, 200), core::hash_key("x")}, {tag(1, 10), core::hash_key("y")}};
  m.input_order->retracted = {{tag(1, 2999), core::hash_key("z")}};
  m.input_order->cut_outputs = {{0, 1234}};
  return m;
}

// The JSON with `from` replaced by `to` once, read back: the error text.
std::string refusal(const RunManifest& m, const std::string& from, const std::string& to) {
  std::string json = manifest_to_json(m);
  const std::size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  json.replace(at, from.size(), to);
  try {
    (void)manifest_from_json(json);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(read)";
}

TEST(InputOrderManifest, RoundTripsAndIsAbsentForArrivalRuns) {
  const RunManifest m = two_inputs();
  EXPECT_EQ(manifest_from_json(manifest_to_json(m)).input_order, m.input_order);
  RunManifest arrival = m;
  arrival.input_order.reset();
  const std::string json = manifest_to_json(arrival);
  EXPECT_EQ(json.find("input_order"), std::string::npos);
  EXPECT_FALSE(manifest_from_json(json).input_order.has_value());
  RunManifest empty = arrival;  // a first run with nothing remembered yet
  empty.input_order = InputOrderProgress{};
  EXPECT_EQ(manifest_from_json(manifest_to_json(empty)).input_order, InputOrderProgress{});
}

TEST(InputOrderManifest, DamagedEntriesAreRefusedByName) {
  const RunManifest m = two_inputs();
  const std::string kept = std::to_string(tag(0, 200));
  EXPECT_NE(refusal(m, "\"version\":1", "\"version\":3").find("input_order: version 3"),
            std::string::npos);
  // A tag past what its input had read (its size, its cursor), of no input, or zero.
  EXPECT_NE(refusal(m, kept, std::to_string(tag(0, 5000))).find("'kept' entry 0: tag"),
            std::string::npos);
  const std::string retracted = std::to_string(tag(1, 2999));
  EXPECT_NE(refusal(m, retracted, std::to_string(tag(1, 3000))).find("'retracted' entry 0: tag"),
            std::string::npos);
  EXPECT_NE(refusal(m, kept, std::to_string(tag(2, 1))).find("'kept' entry 0"), std::string::npos);
  EXPECT_NE(refusal(m, kept, "0").find("names no record"), std::string::npos);
  // Before the watermark, out of order, a group cut short, not a number.
  EXPECT_NE(refusal(m, kept, std::to_string(tag(0, 50))).find("before the watermark"),
            std::string::npos);
  EXPECT_NE(refusal(m, kept, std::to_string(tag(1, 20))).find("'kept' entry 1 is out of order"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"retracted\":[", "\"retracted\":[7,").find("not groups of 3"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"retracted\":[", "\"retracted\":[\"7\",").find("'retracted' entry 0"),
            std::string::npos);
  // A cut output of an unfinished input, or of another length.
  EXPECT_NE(refusal(m, "\"cut_outputs\":[0,", "\"cut_outputs\":[1,").find("'cut_outputs' entry 0"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"cut_outputs\":[0,1234", "\"cut_outputs\":[0,1235").find("cut_outputs"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"watermark\":", "\"watermarc\":").find("'watermark'"), std::string::npos);
}

// Version 2: the kept copies are the generation's rows; the manifest names
// the dataset and counts them, and lists none (the retractions it lists).
RunManifest rows_manifest() {
  RunManifest m = two_inputs();
  m.input_order->version = kInputOrderRowsVersion;
  m.input_order->kept.clear();
  m.input_order->kept_rows = 7;
  return m;
}

// Version 3 (what this build writes): the retractions are rows too.
RunManifest retracted_rows_manifest() {
  RunManifest m = rows_manifest();
  m.input_order->version = kInputOrderVersion;
  m.input_order->retracted.clear();
  m.input_order->retracted_rows = 5;
  return m;
}

TEST(InputOrderManifest, VersionTwoNamesItsRowsAndListsNoKeptCopy) {
  const RunManifest m = rows_manifest();
  const std::string json = manifest_to_json(m);
  EXPECT_NE(json.find("\"version\":2,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"rows\":\"/input_order/rows\",\"kept_rows\":7"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"kept\":["), std::string::npos) << json;
  EXPECT_EQ(manifest_from_json(json).input_order, m.input_order);
  RunManifest listed = m;  // a writer never puts a list into version 2
  listed.input_order->kept = two_inputs().input_order->kept;
  EXPECT_THROW((void)manifest_to_json(listed), std::logic_error);
  EXPECT_NE(
      refusal(m, "\"rows\":\"/input_order/rows\"", "\"rows\":\"/input_order/kept\"").find("'rows'"),
      std::string::npos);
  EXPECT_NE(refusal(m, "\"kept_rows\":7", "\"kept_rows\":7,\"kept\":[]").find("has a 'kept' list"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"kept_rows\"", "\"kept_row\"").find("'kept_rows'"), std::string::npos);
}

TEST(InputOrderManifest, VersionThreeNamesItsRetractedRowsAndListsNoRetraction) {
  const RunManifest m = retracted_rows_manifest();
  const std::string json = manifest_to_json(m);
  EXPECT_NE(json.find("\"version\":3,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"rows\":\"/input_order/rows\",\"kept_rows\":7"), std::string::npos) << json;
  EXPECT_NE(json.find("\"retracted_dataset\":\"/input_order/retracted_rows\",\"retracted_rows\":5"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("\"retracted\":["), std::string::npos) << json;
  EXPECT_EQ(json.find("\"kept\":["), std::string::npos) << json;
  EXPECT_EQ(manifest_from_json(json).input_order, m.input_order);
  RunManifest listed = m;  // a writer never puts a retraction list into version 3
  listed.input_order->retracted = two_inputs().input_order->retracted;
  EXPECT_THROW((void)manifest_to_json(listed), std::logic_error);
  EXPECT_NE(refusal(m, "\"retracted_dataset\":\"/input_order/retracted_rows\"",
                    "\"retracted_dataset\":\"/input_order/rows\"")
                .find("'retracted_dataset'"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"retracted_rows\":5", "\"retracted_rows\":5,\"retracted\":[]")
                .find("has a 'retracted' list"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"retracted_rows\"", "\"retracted_row\"").find("'retracted_rows'"),
            std::string::npos);
  EXPECT_NE(refusal(m, "\"version\":3", "\"version\":4").find("reads versions 1 to 3"),
            std::string::npos);
  // Versions 1 and 2 still read (their lists as before).
  EXPECT_EQ(manifest_from_json(manifest_to_json(rows_manifest())).input_order,
            rows_manifest().input_order);
  EXPECT_EQ(manifest_from_json(manifest_to_json(two_inputs())).input_order,
            two_inputs().input_order);
}

TEST(InputOrderManifest, ARetractedRowIsCheckedAgainstTheInputs) {
  const RunManifest m = retracted_rows_manifest();
  const auto row = [&](core::OrderTag t) {
    return retracted_row_problem({t, core::hash_key("x")}, m, 4, "F");
  };
  EXPECT_EQ(row(tag(1, 2999)), "");
  EXPECT_EQ(row(tag(0, 50)), "");  // before the watermark: still waiting for the end pass
  EXPECT_NE(row(tag(1, 3000))
                .find("F: dataset /input_order/retracted_rows, tier-2 slice 4: the retraction of "
                      "tag " +
                      std::to_string(tag(1, 3000)) + " names no record"),
            std::string::npos)
      << row(tag(1, 3000));
  EXPECT_NE(row(tag(2, 1)).find("names no record"), std::string::npos);
  EXPECT_NE(row(0).find("names no record"), std::string::npos);
}

TEST(InputOrderManifest, ARowIsCheckedAgainstTheInputsAndTheWatermark) {
  const RunManifest m = rows_manifest();
  const std::uint64_t w = m.input_order->watermark;
  const auto row = [&](core::OrderTag t) {
    return kept_row_problem({t, core::hash_key("x")}, m, w, 3, "F");
  };
  EXPECT_EQ(row(tag(0, 200)), "");
  EXPECT_EQ(row(tag(1, 2999)), "");
  EXPECT_NE(row(tag(1, 3000))
                .find("F: dataset /input_order/rows, tier-2 slice 3: the kept copy "
                      "of tag " +
                      std::to_string(tag(1, 3000))),
            std::string::npos)
      << row(tag(1, 3000));
  EXPECT_NE(row(tag(1, 3000)).find("names no record"), std::string::npos);
  EXPECT_NE(row(tag(2, 1)).find("names no record"), std::string::npos);
  EXPECT_NE(row(0).find("names no record"), std::string::npos);
  EXPECT_NE(row(tag(0, 50)).find("before the watermark"), std::string::npos);
}

TEST(InputOrderManifest, TheMarkMustMatchTheVersion) {
  store::CheckpointHeader h;
  RunManifest m = rows_manifest();
  EXPECT_NE(input_order_mark_problem(h, m).find("lacks the input-order mark"), std::string::npos);
  h.input_order = true;
  EXPECT_NE(input_order_mark_problem(h, m).find("version 2 but its normalization text has the "
                                                "input-order/v1 mark"),
            std::string::npos)
      << input_order_mark_problem(h, m);
  h.input_order_rows = true;
  EXPECT_EQ(input_order_mark_problem(h, m), "");
  // Version 3 under the v2 mark, version 2 under v3: refused naming both.
  RunManifest v3 = retracted_rows_manifest();
  EXPECT_NE(input_order_mark_problem(h, v3).find("version 3 but its normalization text has the "
                                                 "input-order/v2 mark"),
            std::string::npos)
      << input_order_mark_problem(h, v3);
  h.input_order_retracted_rows = true;
  EXPECT_EQ(input_order_mark_problem(h, v3), "");
  EXPECT_NE(input_order_mark_problem(h, m).find("version 2 but its normalization text has the "
                                                "input-order/v3 mark"),
            std::string::npos)
      << input_order_mark_problem(h, m);
  h.input_order_retracted_rows = false;
  m.input_order->version = kInputOrderListVersion;
  EXPECT_NE(input_order_mark_problem(h, m).find("version 1"), std::string::npos);
  m.input_order.reset();
  EXPECT_NE(input_order_mark_problem(h, m).find("lacks an input_order object"), std::string::npos);
}

}  // namespace
}  // namespace bloomshard::app
