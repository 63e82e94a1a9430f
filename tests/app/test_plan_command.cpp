// `bloomshard plan --unit minhash`: a record counts as its B band keys of
// 16 bytes (plus, with confirmation, its b-bit signature beside each key),
// checked on the figures of the command's JSON and of minhash_key_inputs.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/cli/plan_command.hpp"

namespace bloomshard::app {
namespace {

// Runs `bloomshard plan ARGS --json`; its stdout, or "" when it failed.
std::string plan_json(std::vector<std::string> args) {
  args.emplace_back("--json");
  testing::internal::CaptureStdout();
  const int rc = run_plan(args);
  std::string out = testing::internal::GetCapturedStdout();
  return rc == kExitOk ? out : std::string();
}

double number(simdjson::dom::element doc, std::string_view pointer) {
  double v = -1;
  EXPECT_EQ(doc.at_pointer(pointer).get(v), simdjson::SUCCESS) << pointer;
  return v;
}

TEST(PlanCommand, MinHashCountsBandKeysPerRecord) {
  // 1M records at 2 ranks, 14 x 8: 14M band keys, 7M per rank; tier 2
  // on disk 16 B of fingerprint + offset + 16 B of band key each, and with
  // 4-bit confirmation 14 x 8 x 4 bits = 56 B more per key.
  const std::string out = plan_json({"--unit", "minhash", "--records", "1000000", "--ranks", "2"});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS) << out;
  std::string_view unit;
  ASSERT_EQ(doc["unit"].get(unit), simdjson::SUCCESS);
  EXPECT_EQ(unit, "minhash");
  EXPECT_EQ(number(doc, "/minhash/records"), 1e6);
  EXPECT_EQ(number(doc, "/minhash/keys"), 14e6);
  EXPECT_EQ(number(doc, "/unique_keys"), 14e6);
  EXPECT_EQ(number(doc, "/inputs/key_bytes"), 16.0);
  EXPECT_EQ(number(doc, "/minhash/tier2_payload_per_record"), 224.0);
  EXPECT_EQ(number(doc, "/minhash/with_confirmation/confirm_bits"), 4.0);
  EXPECT_EQ(number(doc, "/minhash/with_confirmation/tier2_payload_per_record"), 1008.0);
  // Annotate mode keeps each key's first record's position (8 B) and
  // answers each key with 16 B on the return path (position, matches, run).
  EXPECT_EQ(number(doc, "/minhash/with_confirmation/annotate_position_bytes_per_key"), 8.0);
  EXPECT_EQ(number(doc, "/minhash/with_confirmation/annotate_answer_bytes_per_key"), 16.0);
  EXPECT_EQ(number(doc, "/per_rank/tier2_disk_bytes"), 7e6 * (16 + 16));
  EXPECT_EQ(number(doc, "/minhash/with_confirmation/tier2_disk_bytes"), 7e6 * (16 + 16 + 56));
  EXPECT_GT(number(doc, "/minhash/with_confirmation/peak_rss_bytes"),
            number(doc, "/per_rank/peak_rss_bytes"));

  // The Bloom bits and the delta are those of 14M keys of 16 B: the same
  // as a record plan of 14M such records, ~13x those of the 1M records
  // (the layer geometry rounds each differently).
  const std::string as_keys = plan_json({"--records", "14000000", "--ranks", "2", "--key-bytes",
                                         "16", "--record-bytes", "36.571428571428571"});
  const std::string as_records = plan_json({"--records", "1000000", "--ranks", "2"});
  simdjson::dom::parser p2;
  simdjson::dom::parser p3;
  simdjson::dom::element keys;
  simdjson::dom::element records;
  ASSERT_EQ(p2.parse(as_keys).get(keys), simdjson::SUCCESS) << as_keys;
  ASSERT_EQ(p3.parse(as_records).get(records), simdjson::SUCCESS) << as_records;
  EXPECT_EQ(number(doc, "/per_rank/bloom_bytes"), number(keys, "/per_rank/bloom_bytes"));
  EXPECT_EQ(number(doc, "/per_rank/delta_bytes"), number(keys, "/per_rank/delta_bytes"));
  EXPECT_GT(number(doc, "/per_rank/bloom_bytes"), 12 * number(records, "/per_rank/bloom_bytes"));
}

TEST(PlanCommand, MinHashKeyInputs) {
  core::PlanInputs in;
  in.records = 1000;
  in.record_bytes = 4096;
  in.records_per_second = 2000;
  const core::PlanInputs keys = minhash_key_inputs(in, 20, 13, 0);
  EXPECT_EQ(keys.records, 20000U);
  EXPECT_EQ(keys.key_bytes, 16.0);
  EXPECT_EQ(keys.record_bytes, 4096.0 / 20);  // a round carries 20 keys per record
  EXPECT_EQ(keys.records_per_second, 40000.0);
  // 20 x 13 values at 4 bits: 130 B beside each band key.
  EXPECT_EQ(minhash_key_inputs(in, 20, 13, 4).key_bytes, 16.0 + 130);
  EXPECT_THROW((void)minhash_key_inputs(in, 0, 8, 0), std::invalid_argument);
  EXPECT_THROW((void)minhash_key_inputs(in, 64, 65, 0), std::invalid_argument);
}

TEST(PlanCommand, MinHashStartLinePlansBandKeys) {
  DedupConfig c;
  c.key.unit = core::KeyUnit::kMinHash;
  c.key.shingle = "word:5";
  c.key.bands = 14;
  c.key.rows = 8;
  InputSample sample;
  sample.files = 1;
  sample.records = 1000;
  sample.keys = 1000;
  sample.text_bytes = 4096.0 * 1000;
  sample.key_bytes = 4000;
  sample.estimated_records = 1000000;
  const std::string line = dedup_plan_line(c, sample, 0, 2, 0);
  EXPECT_NE(line.find("tier-2 payload 224 B per new record (1008 B with"), std::string::npos)
      << line;
  // Every record's 14 band keys counted new: 14M keys, not 1M records.
  EXPECT_NE(line.find("<= ~14.0M band keys -> peak RSS"), std::string::npos) << line;
  EXPECT_NE(line.find("[bloomshard plan --unit minhash --bands 14 --rows 8 --records 1000000 "
                      "--record-bytes 4096 --ranks 2 for the table]"),
            std::string::npos)
      << line;
}

// A confirming run that continues a state loads the forms of the state's
// band keys on top of the new ones: 116 B a key (56 B form + 60 B index)
// spread over the ranks; nothing for a run that does not confirm.
TEST(PlanCommand, LoadedFormsOfAConfirmingState) {
  DedupConfig c;
  c.key.unit = core::KeyUnit::kMinHash;
  c.key.bands = 14;
  c.key.rows = 8;
  c.key.confirm_jaccard = 0.8;
  // 4M keys on 2 ranks: 2M x 116 B = 221.3 MiB a rank.
  EXPECT_EQ(loaded_forms_plan(c, 4000000, 2),
            "; the state's forms of 4.0M band keys loaded ~221.3 MiB/rank");
  EXPECT_EQ(loaded_forms_plan(c, 0, 2), "");
  // A state that keeps origins: 12 B more a key (position and run).
  c.key.confirm_origins = true;
  EXPECT_EQ(loaded_forms_plan(c, 4000000, 2),
            "; the state's forms of 4.0M band keys loaded ~244.1 MiB/rank");
  c.key.confirm_origins = false;
  c.key.confirm_jaccard = 0.0;
  EXPECT_EQ(loaded_forms_plan(c, 4000000, 2), "");
}

// --kept-copy first plans each owner's order table (docs/inputs.md "Which
// copy of a duplicate is kept"): in the JSON, the table and the start line.
TEST(PlanCommand, KeptCopyFirstPlansTheOrderTable) {
  const std::vector<std::string> bench = {"--records",  "10000000", "--unique-fraction", "0.7",
                                          "--ranks",    "2",        "--record-bytes",    "160",
                                          "--capacity", "10000000"};
  std::vector<std::string> first = bench;
  first.insert(first.end(), {"--kept-copy", "first", "--inputs", "16"});
  std::vector<std::string> arrival_args = bench;
  arrival_args.insert(arrival_args.end(), {"--kept-copy", "arrival"});
  simdjson::dom::parser parser;
  const std::string a = plan_json(arrival_args);
  const std::string f = plan_json(first);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(f.empty());
  const simdjson::dom::element arrival = parser.parse(a);
  EXPECT_EQ(number(arrival, "/per_rank/order_table_bytes"), 0.0);
  simdjson::dom::parser parser2;
  const simdjson::dom::element ordered = parser2.parse(f);
  EXPECT_NEAR(number(ordered, "/per_rank/order_table_bytes"), 36.0 * 1048576, 1e3);
  EXPECT_EQ(number(arrival, "/per_rank/offset_map_bytes"), 0.0);
  EXPECT_GT(number(ordered, "/per_rank/offset_map_bytes"), 0.0);
  EXPECT_NEAR(
      number(ordered, "/per_rank/peak_rss_bytes") - number(arrival, "/per_rank/peak_rss_bytes"),
      number(ordered, "/per_rank/order_table_bytes") +
          number(ordered, "/per_rank/offset_map_bytes") +
          number(ordered, "/per_rank/retraction_bytes"),
      1e3);
  // The retractions waiting for the end pass: half the duplicates of the
  // 2 of 16 inputs read at a time, 48 bytes each on every rank.
  EXPECT_EQ(number(ordered, "/per_rank/retractions"), 187500.0);
  EXPECT_EQ(number(ordered, "/per_rank/retraction_bytes"), 187500.0 * 48);
  EXPECT_EQ(number(arrival, "/per_rank/retraction_bytes"), 0.0);
  // --layout lockstep: one round's table (4 MiB rounds of 2 ranks: 64K
  // keys, 24 bytes a slot), no offset maps, no retractions.
  std::vector<std::string> lockstep_args = first;
  lockstep_args.insert(lockstep_args.end(), {"--layout", "lockstep"});
  simdjson::dom::parser parser5;
  const simdjson::dom::element in_lockstep = parser5.parse(plan_json(lockstep_args));
  EXPECT_LT(number(in_lockstep, "/per_rank/order_table_bytes"),
            number(ordered, "/per_rank/order_table_bytes") / 10);
  EXPECT_EQ(number(in_lockstep, "/per_rank/retraction_bytes"), 0.0);
  EXPECT_EQ(number(in_lockstep, "/per_rank/offset_map_bytes"), 0.0);
  std::string_view kept;
  EXPECT_EQ(ordered.at_pointer("/inputs/kept_copy").get(kept), simdjson::SUCCESS);
  EXPECT_EQ(kept, "first");
  // Not given, as dedup: the first copy (the table planned for every
  // distinct key, no --inputs), and the arrival order under --unit minhash.
  simdjson::dom::parser parser3;
  const simdjson::dom::element defaulted = parser3.parse(plan_json(bench));
  EXPECT_EQ(defaulted.at_pointer("/inputs/kept_copy").get(kept), simdjson::SUCCESS);
  EXPECT_EQ(kept, "first");
  EXPECT_GT(number(defaulted, "/per_rank/order_table_bytes"),
            number(ordered, "/per_rank/order_table_bytes"));
  simdjson::dom::parser parser4;
  const simdjson::dom::element minhash =
      parser4.parse(plan_json({"--unit", "minhash", "--records", "1000000", "--ranks", "2"}));
  EXPECT_EQ(minhash.at_pointer("/inputs/kept_copy").get(kept), simdjson::SUCCESS);
  EXPECT_EQ(kept, "arrival");
  // With checkpoints (the plan's default, dedup's --state) each one also
  // saves the owners' remembered kept copies and their retractions (24
  // bytes each, rows of the generation), and the end pass writes one more
  // generation.
  const double remembered = 7e6 * 2.0 / 16.0;  // 2 of 16 inputs' distinct keys
  EXPECT_NEAR(number(ordered, "/per_checkpoint/bytes") - number(arrival, "/per_checkpoint/bytes"),
              (remembered + 187500.0) * 24, 1e3);
  EXPECT_EQ(number(ordered, "/per_checkpoint/checkpoints"),
            number(arrival, "/per_checkpoint/checkpoints") + 1);

  DedupConfig c;
  c.kept_copy = KeptCopy::kFirstInInputOrder;
  InputSample sample;
  sample.files = 3;
  sample.inputs = 16;
  sample.records = 30000;
  sample.keys = 30000;
  sample.duplicates = 9000;
  sample.text_bytes = 160.0 * 30000;
  sample.key_bytes = 16;
  sample.estimated_records = 10000000;
  // Plain inputs: the lockstep layout, one round's table.
  const std::string lockstep = dedup_plan_line(c, sample, 10000000, 2, 0);
  EXPECT_NE(lockstep.find(", order table 1.5 MiB)"), std::string::npos) << lockstep;
  // A compressed input: the tasks layout's table.
  sample.all_uncompressed = false;
  const std::string line = dedup_plan_line(c, sample, 10000000, 2, 0);
  EXPECT_NE(line.find(", order table 36.0 MiB)"), std::string::npos) << line;
  EXPECT_NE(line.find("--ranks 2 --kept-copy first --inputs 16 for the table]"), std::string::npos)
      << line;
  sample.all_uncompressed = true;
  // With --state too (a lockstep cut resumes in lockstep); the table
  // command says the layout.
  c.state_dir = "st";
  const std::string with_state = dedup_plan_line(c, sample, 10000000, 2, 0);
  EXPECT_NE(with_state.find(", order table 1.5 MiB)"), std::string::npos) << with_state;
  EXPECT_NE(with_state.find("--inputs 16 --layout lockstep for the table]"), std::string::npos)
      << with_state;
  c.state_dir.clear();
  c.kept_copy = KeptCopy::kArrival;
  EXPECT_EQ(dedup_plan_line(c, sample, 10000000, 2, 0).find("order table"), std::string::npos);
}

TEST(PlanCommand, RefusesWhatDoesNotApply) {
  EXPECT_EQ(run_plan({"--unit", "minhash", "--records", "10", "--ranks", "1", "--key-bytes", "8"}),
            kExitUsage);
  EXPECT_EQ(run_plan({"--unit", "paragraph", "--records", "10", "--ranks", "1"}), kExitUsage);
  EXPECT_EQ(run_plan({"--records", "10", "--ranks", "1", "--bands", "20"}), kExitUsage);
  EXPECT_EQ(run_plan({"--unit", "minhash", "--records", "10", "--ranks", "1", "--bands", "64",
                      "--rows", "65"}),
            kExitUsage);
  EXPECT_EQ(run_plan({"--records", "10", "--ranks", "1", "--kept-copy", "sometimes"}), kExitUsage);
  EXPECT_EQ(run_plan({"--records", "10", "--ranks", "1", "--layout", "blocks"}), kExitUsage);
  EXPECT_EQ(run_plan({"--records", "10", "--ranks", "1", "--kept-copy", "arrival", "--layout",
                      "lockstep"}),
            kExitUsage);
  EXPECT_EQ(
      run_plan({"--records", "10", "--ranks", "1", "--kept-copy", "arrival", "--inputs", "4"}),
      kExitUsage);
  EXPECT_EQ(
      run_plan({"--unit", "minhash", "--records", "10", "--ranks", "1", "--kept-copy", "first"}),
      kExitUsage);
}

}  // namespace
}  // namespace bloomshard::app
