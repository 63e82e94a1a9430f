// Strict option parsing (app/options/exact_options.hpp) through the real dedup
// option set.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/cli/exit_codes.hpp"
#include "app/options/dedup_options.hpp"
#include "app/options/exact_options.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class ExactOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-exact-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "in");
    in_ = (dir_ / "in").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write_job(const std::string& text) {
    const fs::path p = dir_ / "job.ini";
    std::ofstream(p) << text;
    return p.string();
  }
  ParsedDedup parse(std::vector<std::string> extra) {
    std::vector<std::string> args{"--input", in_, "--output", "o"};
    args.insert(args.end(), extra.begin(), extra.end());
    return parse_dedup_options(args);
  }
  fs::path dir_;
  std::string in_;
};

TEST(DidYouMean, PrefixesThenNearNames) {
  const std::vector<std::string> names{"output", "overwrite", "key-field",
                                       "fpr",    "max-runs",  "max-key-bytes"};
  EXPECT_EQ(did_you_mean("out", names, "--"), " (did you mean --output?)");
  EXPECT_EQ(did_you_mean("key-f", names, "--"), " (did you mean --key-field?)");
  EXPECT_EQ(did_you_mean("fpp", names, "--"), " (did you mean --fpr?)");
  EXPECT_EQ(did_you_mean("max", names, "--"), " (did you mean --max-runs or --max-key-bytes?)");
  EXPECT_EQ(did_you_mean("outptu", names, "--"), " (did you mean --output?)");
  EXPECT_EQ(did_you_mean("zebra", names, "--"), "");
  EXPECT_EQ(did_you_mean("o", names, "--"), " (did you mean --output or --overwrite?)");
}

TEST_F(ExactOptionsTest, AbbreviationsAreRefusedWithTheOptionMeant) {
  for (const auto& [given, meant] : std::vector<std::pair<std::string, std::string>>{
           {"--key-f", "--key-field"}, {"--capa", "--capacity"}, {"--fp", "--fpr"}}) {
    const ParsedDedup p = parse({given, "1"});
    ASSERT_EQ(p.exit_code, kExitUsage) << given;
    EXPECT_NE(p.message.find("'" + given + "'"), std::string::npos) << p.message;
    EXPECT_NE(p.message.find("did you mean " + meant + "?"), std::string::npos) << p.message;
  }
  const ParsedDedup p = parse_dedup_options({"--input", in_, "--out", "o"});
  ASSERT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("did you mean --output?"), std::string::npos) << p.message;
}

TEST_F(ExactOptionsTest, StrayPositionalsAreRefused) {
  ParsedDedup p = parse({"extra"});
  ASSERT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("unexpected argument 'extra'"), std::string::npos) << p.message;
  // --input takes several values; a word after another option does not.
  p = parse({"--fpr", "0.01", "0.02"});
  ASSERT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("'0.02'"), std::string::npos) << p.message;
  // Whole names and --name=value still work.
  p = parse({"--fpr=0.01", "--key-field", "id"});
  EXPECT_FALSE(p.exit_code) << p.message;
}

TEST_F(ExactOptionsTest, JobFileKeysAreCheckedWithFileAndLine) {
  const std::string job = write_job("# a job\ninput = " + in_ + "\n\noutput = o\nfpp = 0.01\n");
  ParsedDedup p = parse_dedup_options({"--config", job});
  ASSERT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("job file '" + job +
                           "' line 5: unknown option 'fpp' (did you mean "
                           "--fpr?)"),
            std::string::npos)
      << p.message;
  p = parse_dedup_options({"--config", write_job("output = o\nkey-f = id\n")});
  ASSERT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("line 2: unknown option 'key-f' (did you mean --key-field?)"),
            std::string::npos)
      << p.message;
  p = parse_dedup_options({"--config", write_job("output = o\nconfig = other.ini\n")});
  ASSERT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("line 2: 'config' is a command-line option only"), std::string::npos)
      << p.message;
  p = parse_dedup_options({"--config", write_job("output = o\njust words\n")});
  ASSERT_EQ(p.exit_code, kExitUsage);
  EXPECT_NE(p.message.find("line 2: 'just words' is not 'name = value'"), std::string::npos)
      << p.message;
  p = parse_dedup_options({"--config", write_job("input = " + in_ + "\noutput = o  # here\n")});
  EXPECT_FALSE(p.exit_code) << p.message;
}

TEST_F(ExactOptionsTest, ExplicitOptionsAreThoseTheUserSet) {
  const ParsedDedup p =
      parse_dedup_options({"--config", write_job("input = " + in_ + "\ncapacity = 10\n"),
                           "--output", "o", "--fpr", "0.001"});
  ASSERT_FALSE(p.exit_code) << p.message;
  const auto& given = p.config.explicit_options;
  const auto has = [&given](const char* name) {
    return std::find(given.begin(), given.end(), name) != given.end();
  };
  EXPECT_TRUE(has("fpr"));       // given, even though equal to the default
  EXPECT_TRUE(has("capacity"));  // from the job file
  EXPECT_FALSE(has("slices"));   // left at its default
}

}  // namespace
}  // namespace bloomshard::app
