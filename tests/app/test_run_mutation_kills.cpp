// Tests that kill the surviving mutants of the run and resume code and the
// guards (docs/testing.md "Mutation check"): each asserts behaviour a user
// sees (a refusal's words, a returned verdict), not how the code gets there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "app/guard/output_presence.hpp"
#include "app/run/run_manifest.hpp"
#include "app/run/run_state.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {
namespace {

RunManifest one_started_input(std::uint64_t records_read) {
  InputProgress p;
  p.file.relative_path = "half.jsonl";
  p.file.size = 100;
  p.file.mtime_ns = 1;
  p.cursor = {records_read, 10 * records_read};
  RunManifest m;
  m.inputs = {p};
  return m;
}

// The refusal of a changed started input counts the records read with the
// right number: "1 record", "2 records".
TEST(RunMutationKills, AChangedInputsRefusalCountsTheRecordsReadInTheRightNumber) {
  for (const std::uint64_t n : {1U, 2U}) {
    RunManifest m = one_started_input(n);
    std::vector<io::InputFile> now = {m.inputs[0].file};
    now[0].size = 120;
    const std::string refusal = reconcile_inputs(m, now).refusal;
    const std::string want = n == 1 ? "the 1 record read are unchanged" : "the 2 records read";
    EXPECT_NE(refusal.find(want), std::string::npos) << refusal;
  }
}

// A store error cut to its first line says how many lines followed; a
// trailing newline is no further line.
TEST(RunMutationKills, OneLineCountsTheLinesAfterTheFirstButNotATrailingNewline) {
  EXPECT_EQ(one_line("first\nX"),
            "first (+2 more characters, 1 more lines; `bloomshard verify --state DIR` lists all)");
  EXPECT_EQ(one_line("first\nsecond\nthird"),
            "first (+13 more characters, 2 more lines; `bloomshard verify --state DIR` lists all)");
  EXPECT_EQ(one_line("first\n"), "first");
  EXPECT_EQ(one_line("first"), "first");
}

// A message that begins with a line break (a list of problems, each on
// its own line) counts that first break too.
TEST(RunMutationKills, OneLineCountsALineBreakAtTheVeryStart) {
  EXPECT_EQ(one_line("\nsecond"),
            " (+7 more characters, 1 more lines; `bloomshard verify --state DIR` lists all)");
  EXPECT_EQ(one_line("\n\nthird"),
            " (+7 more characters, 2 more lines; `bloomshard verify --state DIR` lists all)");
}

// One missing output is named alone: no "(and 0 more ...)".
TEST(RunMutationKills, OneMissingOutputIsNamedWithoutACountOfOthers) {
  namespace fs = std::filesystem;
  const fs::path out =
      fs::temp_directory_path() / ("bloomshard-mutation-kills-" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  RunManifest m = one_started_input(3);
  m.inputs[0].output_length = 10;
  m.output_dir = out.string();
  const std::string why = missing_or_short_output(m, out);
  fs::remove_all(out);
  EXPECT_EQ(why.rfind("'" + (out / "half.jsonl").string() + "' has 10 committed bytes", 0), 0U)
      << why;
  EXPECT_EQ(why.find("more missing or short"), std::string::npos) << why;
}

// An unfinished input's output of a single committed byte (one empty text
// line kept) must be there too.
TEST(RunMutationKills, AOneByteOutputOfAnUnfinishedInputMustExist) {
  namespace fs = std::filesystem;
  const fs::path out =
      fs::temp_directory_path() / ("bloomshard-mutation-kills-1-" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  RunManifest m = one_started_input(1);
  m.inputs[0].output_length = 1;
  m.output_dir = out.string();
  const std::string why = missing_or_short_output(m, out);
  fs::remove_all(out);
  EXPECT_NE(why.find("half.jsonl' has 1 committed bytes in the checkpoint but is missing"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace bloomshard::app
