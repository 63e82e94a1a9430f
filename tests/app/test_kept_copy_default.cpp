// Which copy a run keeps when --kept-copy is not given (docs/inputs.md
// "Which copy of a duplicate is kept"): the first copy in input order where
// input_order_limit() lets it apply, the arrival order elsewhere, and a rule
// asked for where it cannot apply is refused. (A resume without the option
// takes its state's rule: e2e.input_order_state.*.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/options/dedup_options.hpp"
#include "app/round/key_order.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class KeptCopyDefault : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-kept-copy-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "in");
    std::ofstream(dir_ / "in/a.jsonl") << "{\"id\":\"x\",\"text\":\"a\"}\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  ParsedDedup parse(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--input", (dir_ / "in").string(), "--output",
                                     (dir_ / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return parse_dedup_options(args);
  }
  fs::path dir_;
};

TEST_F(KeptCopyDefault, WholeRecordsKeepTheFirstCopyInInputOrderWithoutTheOption) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{},
        {"--state", (dir_ / "st").string()},
        {"--mode", "annotate"},
        {"--window", "3", "--state", (dir_ / "st").string()}}) {
    const ParsedDedup p = parse(extra);
    ASSERT_FALSE(p.exit_code) << p.message;
    EXPECT_EQ(p.config.kept_copy, KeptCopy::kFirstInInputOrder);
    EXPECT_FALSE(kept_copy_chosen(p.config));
    EXPECT_TRUE(keeps_input_order(p.config));
  }
}

TEST_F(KeptCopyDefault, WhereTheFirstCopyCannotApplyTheDefaultIsTheArrivalOrder) {
  const std::string state = (dir_ / "st").string();
  const std::vector<std::vector<std::string>> limited = {
      {"--unit", "minhash", "--key-field", "text"},
      {"--window", "2", "--state", state, "--slot-records", "100"},
  };
  for (const std::vector<std::string>& extra : limited) {
    const ParsedDedup p = parse(extra);
    ASSERT_FALSE(p.exit_code) << p.message;
    EXPECT_EQ(p.config.kept_copy, KeptCopy::kArrival) << extra.front();
    EXPECT_FALSE(keeps_input_order(p.config));
    EXPECT_FALSE(input_order_limit(p.config).empty()) << extra.front();
  }
}

TEST_F(KeptCopyDefault, ParagraphRunsKeepTheFirstCopyAndReadTheirInputsWhole) {
  ParsedDedup p = parse({"--unit", "paragraph", "--key-field", "text"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.kept_copy, KeptCopy::kFirstInInputOrder);
  EXPECT_FALSE(p.config.split_inputs);
  EXPECT_TRUE(keeps_input_order(p.config));
  // --split-inputs auto given: the arrival order when not chosen, refused
  // when --kept-copy first is.
  p = parse({"--unit", "paragraph", "--key-field", "text", "--split-inputs", "auto"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.kept_copy, KeptCopy::kArrival);
  EXPECT_TRUE(p.config.split_inputs);
  p = parse({"--unit", "paragraph", "--key-field", "text", "--split-inputs", "auto", "--kept-copy",
             "first"});
  ASSERT_TRUE(p.exit_code);
  EXPECT_NE(p.message.find("--split-inputs off"), std::string::npos) << p.message;
  // The arrival order chosen: inputs split as before.
  p = parse({"--unit", "paragraph", "--key-field", "text", "--kept-copy", "arrival"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_TRUE(p.config.split_inputs);
}

TEST_F(KeptCopyDefault, AskedForWhereItCannotApplyIsRefusedByName) {
  const ParsedDedup p = parse({"--unit", "minhash", "--key-field", "text", "--kept-copy", "first"});
  ASSERT_TRUE(p.exit_code);
  EXPECT_EQ(*p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("--kept-copy first"), std::string::npos) << p.message;
}

TEST_F(KeptCopyDefault, TheArrivalOrderIsAnExplicitChoiceFromTheCommandLineOrTheJobFile) {
  ParsedDedup p = parse({"--kept-copy", "arrival"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.kept_copy, KeptCopy::kArrival);
  EXPECT_TRUE(kept_copy_chosen(p.config));
  EXPECT_FALSE(keeps_input_order(p.config));
  // An explicit first is chosen too (a resume then must match the state).
  p = parse({"--kept-copy", "first"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_TRUE(kept_copy_chosen(p.config));
  // From a job file.
  const fs::path job = dir_ / "job.ini";
  std::ofstream(job) << "kept-copy = arrival\n";
  p = parse({"--config", job.string()});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.kept_copy, KeptCopy::kArrival);
  EXPECT_TRUE(kept_copy_chosen(p.config));
}

}  // namespace
}  // namespace bloomshard::app
