#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/cli/exit_codes.hpp"
#include "app/feed/input_feed.hpp"
#include "app/options/dedup_options.hpp"
#include "app/options/option_table.hpp"
#include "app/options/query_options.hpp"
#include "app/run/checkpointer.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class DedupOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-options-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "in");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write_job(const std::string& text) {
    const fs::path p = dir_ / "job.ini";
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(DedupOptionsTest, CommandLineValuesAreParsed) {
  const ParsedDedup p = parse_dedup_options(
      {"--input", (dir_ / "in").string(), "--output", (dir_ / "out").string(), "--key-field",
       "meta.id", "--capacity", "5000", "--fpr", "0.01", "--slices", "64", "--normalize",
       "nfc-casefold", "--batch-bytes", "65536"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.fields, std::vector<std::string>{"meta.id"});
  ASSERT_TRUE(p.config.capacity);
  EXPECT_EQ(*p.config.capacity, 5000U);
  EXPECT_DOUBLE_EQ(p.config.fpr, 0.01);
  EXPECT_EQ(p.config.slices, 64U);
  EXPECT_EQ(p.config.key.normalize, core::NormalizePolicy::kNfcCasefold);
  EXPECT_EQ(p.config.batch_bytes, 65536U);
  EXPECT_EQ(p.config.checkpoint_data_path, io::CheckpointDataPath::kAuto);  // the default
}

TEST_F(DedupOptionsTest, CheckpointIoComesFromTheCommandLineOrTheJobFile) {
  const std::string in = (dir_ / "in").string();
  ParsedDedup p = parse_dedup_options({"--input", in, "--output", "o", "--checkpoint-io", "mpiio"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.checkpoint_data_path, io::CheckpointDataPath::kMpiIo);
  EXPECT_EQ(p.config.batch_bytes, 0U);  // automatic: the job picks it by rank count
  p = parse_dedup_options(
      {"--config", write_job("input = " + in + "\noutput = o\ncheckpoint-io = direct\n")});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.checkpoint_data_path, io::CheckpointDataPath::kDirect);
}

TEST_F(DedupOptionsTest, JobFileFillsOptionsAndCommandLineWins) {
  const std::string job =
      write_job("input = " + (dir_ / "in").string() + "\noutput = " + (dir_ / "job-out").string() +
                "\nfpr = 0.02\nslices = 128\nkey-field = url\n");
  const ParsedDedup p = parse_dedup_options(
      {"--config", job, "--slices", "32", "--output", (dir_ / "cli-out").string()});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.slices, 32U);                              // command line wins
  EXPECT_EQ(p.config.output_dir, (dir_ / "cli-out").string());  // command line wins
  EXPECT_DOUBLE_EQ(p.config.fpr, 0.02);                         // from the job file
  EXPECT_EQ(p.config.key.fields, std::vector<std::string>{"url"});
  ASSERT_EQ(p.config.inputs.size(), 1U);
  EXPECT_FALSE(p.config.capacity);  // unset: estimated by the job
}

TEST_F(DedupOptionsTest, CommandLineInputsReplaceTheJobFilesList) {
  fs::create_directories(dir_ / "other");
  const std::string job = write_job("input = " + (dir_ / "in").string() + "\noutput = x\n");
  const ParsedDedup p =
      parse_dedup_options({"--config", job, "--input", (dir_ / "other").string()});
  ASSERT_FALSE(p.exit_code) << p.message;
  ASSERT_EQ(p.config.inputs.size(), 1U);
  EXPECT_EQ(p.config.inputs[0], (dir_ / "other").string());
}

TEST_F(DedupOptionsTest, BadValuesExitWithUsageCodeAndAMessage) {
  const std::string in = (dir_ / "in").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--output", "o"}, "no --input"},
      {{"--input", in}, "no --output"},
      {{"--input", in, "--output", "o", "--fpr", "0"}, "--fpr"},
      {{"--input", in, "--output", "o", "--fpr", "abc"}, "fpr"},
      {{"--input", in, "--output", "o", "--normalize", "nfd"}, "nfd"},
      {{"--input", in, "--output", "o", "--slices", "16777217"}, "--slices"},
      {{"--input", in, "--output", "o", "--max-exchange-bytes", "100"}, "--max-exchange-bytes"},
      {{"--input", in, "--output", "o", "--exchange", "tree"}, "--exchange"},
      {{"--input", in, "--output", "o", "--capacity", "0"}, "--capacity"},
      {{"--input", in, "--output", "o", "--batch-bytes", "4095"}, "--batch-bytes"},
      {{"--input", in, "--output", "o", "--batch-bytes", "2147483648"}, "--batch-bytes"},
      {{"--input", (dir_ / "missing").string(), "--output", "o"}, "does not exist"},
      {{"--input", in, "--output", "o", "--no-such-option"}, "no-such-option"},
      {{"--input", in, "--output", "o", "--checkpoint-io", "posix"}, "--checkpoint-io"},
      {{"--config", (dir_ / "nope.ini").string()}, "cannot open job file"},
  };
  for (const auto& [args, needle] : cases) {
    const ParsedDedup p = parse_dedup_options(args);
    ASSERT_TRUE(p.exit_code) << needle;
    EXPECT_EQ(*p.exit_code, kExitUsage) << needle;
    EXPECT_NE(p.message.find(needle), std::string::npos) << p.message;
  }
}

TEST_F(DedupOptionsTest, HelpAndVersionExitZero) {
  const ParsedDedup help = parse_dedup_options({"--help"});
  ASSERT_TRUE(help.exit_code);
  EXPECT_EQ(*help.exit_code, kExitOk);
  EXPECT_NE(help.message.find("--key-field"), std::string::npos);
  const ParsedDedup version = parse_dedup_options({"--version"});
  ASSERT_TRUE(version.exit_code);
  EXPECT_NE(version.message.find("xxh3-128/v1"), std::string::npos);
}

TEST_F(DedupOptionsTest, KeySchemeOptions) {
  const std::string in = (dir_ / "in").string();
  ParsedDedup p = parse_dedup_options({"--input", in, "--output", "o"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key, core::KeyScheme{});  // id, reject, none, none, none
  p = parse_dedup_options({"--input", in, "--output", "o", "--key-field", "url", "--key-field",
                           "meta.title", "--missing-field", "empty", "--text-normalize", "ws-lower",
                           "--key-digest", "sha256"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.fields, (std::vector<std::string>{"url", "meta.title"}));
  EXPECT_EQ(p.config.key.missing, core::MissingField::kEmpty);
  EXPECT_EQ(p.config.key.text, core::TextNormalize::kWsLower);
  EXPECT_EQ(p.config.key.digest, core::KeyDigest::kSha256);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--key-digest", "md5"},
                                              {"--text-normalize", "nfkc"},
                                              {"--missing-field", "skip"},
                                              {"--key-field", "a,b"},
                                              {"--key-field", ""}}) {
    std::vector<std::string> args{"--input", in, "--output", "o"};
    args.insert(args.end(), bad.begin(), bad.end());
    p = parse_dedup_options(args);
    EXPECT_EQ(p.exit_code, kExitUsage) << bad[0] << " " << bad[1];
    EXPECT_NE(p.message.find(bad[0].substr(2)), std::string::npos) << p.message;
  }
}

TEST_F(DedupOptionsTest, KeyFieldsOfTheCommandLineReplaceTheJobFilesList) {
  const std::string job = write_job("input = " + (dir_ / "in").string() +
                                    "\noutput = x\nkey-field = url\nkey-field = title\n");
  ParsedDedup p = parse_dedup_options({"--config", job});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.fields, (std::vector<std::string>{"url", "title"}));
  p = parse_dedup_options({"--config", job, "--key-field", "id"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.fields, std::vector<std::string>{"id"});
}

TEST_F(DedupOptionsTest, ShippedContentJobFileParses) {
  const std::string job = std::string(BLOOMSHARD_TEST_DATA_DIR) + "/../../jobs/content-digest.ini";
  const ParsedDedup p = parse_dedup_options(
      {"--config", job, "--input", (dir_ / "in").string(), "--output", (dir_ / "o").string()});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.fields, std::vector<std::string>{"text"});
  EXPECT_EQ(p.config.key.text, core::TextNormalize::kWsLower);
  EXPECT_EQ(p.config.key.digest, core::KeyDigest::kSha256);
}

// Dedup and query register and check their shared options with the same
// group functions: one value, one rule and one message per option.
TEST_F(DedupOptionsTest, DedupAndQueryRefuseASharedOptionWithTheSameMessage) {
  const std::string in = (dir_ / "in").string();
  const std::vector<std::vector<std::string>> cases = {
      {"--batch-bytes", "4095"},  {"--batch-bytes", "2147483648"}, {"--max-key-bytes", "0"},
      {"--max-line-bytes", "10"}, {"--max-reject-fraction", "2"},  {"--on-input-error", "retry"},
  };
  for (const std::vector<std::string>& bad : cases) {
    std::vector<std::string> dedup_args{"--input", in, "--output", "o"};
    dedup_args.insert(dedup_args.end(), bad.begin(), bad.end());
    std::vector<std::string> query_args{"--state", in, "--input", in, "--output", "o"};
    query_args.insert(query_args.end(), bad.begin(), bad.end());
    const ParsedDedup dedup = parse_dedup_options(dedup_args);
    const ParsedQuery query = parse_query_options(query_args);
    ASSERT_EQ(dedup.exit_code, kExitUsage) << bad[0];
    ASSERT_EQ(query.exit_code, kExitUsage) << bad[0];
    EXPECT_NE(dedup.message.find(bad[0]), std::string::npos) << dedup.message;
    EXPECT_EQ(query.message, dedup.message) << bad[0];
  }
}

TEST_F(DedupOptionsTest, QueryTakesOnlyItsGroupsOptions) {
  const std::string in = (dir_ / "in").string();
  const ParsedQuery p =
      parse_query_options({"--state", in, "--input", in, "--output", "o", "--batch-bytes", "65536",
                           "--max-key-bytes", "100", "--on-input-error", "fail", "--overwrite"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.feed.batch_bytes, 65536U);
  EXPECT_EQ(p.config.feed.max_key_bytes, 100U);
  EXPECT_EQ(p.config.feed.on_input_error, OnInputError::kFail);
  EXPECT_TRUE(p.config.feed.overwrite);
  for (const char* dedup_only : {"--fpr", "--mode", "--window", "--lock-wait", "--exchange"}) {
    const ParsedQuery q =
        parse_query_options({"--state", in, "--input", in, "--output", "o", dedup_only, "1"});
    EXPECT_EQ(q.exit_code, kExitUsage) << dedup_only;
    EXPECT_NE(q.message.find("unrecognised option"), std::string::npos) << q.message;
  }
}

// A consumer stores only the groups it reads, built from the whole config.
TEST_F(DedupOptionsTest, ConsumersTakeTheirGroupsFromTheWholeConfig) {
  DedupConfig c;
  c.inputs = {"a", "b"};
  c.output_dir = "out";
  c.max_key_bytes = 77;
  c.state_dir = "st";
  c.keep_generations = 5;
  c.window.window = 3;
  const InputFeedConfig feed = c;
  EXPECT_EQ(feed.inputs, c.inputs);
  EXPECT_EQ(feed.output_dir, "out");
  EXPECT_EQ(feed.max_key_bytes, 77U);
  const CheckpointerConfig checkpoint = c;
  EXPECT_EQ(checkpoint.state_dir, "st");
  EXPECT_EQ(checkpoint.keep_generations, 5);
  EXPECT_EQ(checkpoint.window.window, 3U);
  QueryFeed query;
  query.batch_bytes = 4096;
  const InputFeedConfig from_query = query;
  EXPECT_EQ(from_query.batch_bytes, 4096U);
}

TEST(OptionTable, ListsOptionsInTheTablesOrderAndRefusesAnUnknownName) {
  namespace po = boost::program_options;
  po::options_description first;
  first.add_options()("alpha", "a")("beta", "b");
  po::options_description second;
  second.add_options()("beta", "other b")("gamma", "g");
  po::options_description out;
  constexpr std::string_view kOrder[] = {"gamma", "beta", "alpha"};
  add_in_order(out, {&first, &second}, kOrder);
  ASSERT_EQ(out.options().size(), 3U);
  EXPECT_EQ(out.options()[0]->long_name(), "gamma");
  EXPECT_EQ(out.options()[1]->description(), "b");  // the first pool that has it
  EXPECT_EQ(out.options()[2]->long_name(), "alpha");
  constexpr std::string_view kTypo[] = {"alpah"};
  po::options_description bad;
  EXPECT_THROW(add_in_order(bad, {&first}, kTypo), std::logic_error);
}

}  // namespace
}  // namespace bloomshard::app
