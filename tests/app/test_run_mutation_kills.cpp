// Tests that kill the surviving mutants of the run and resume code and the
// guards (docs/testing.md "Mutation check"): each asserts behaviour a user
// sees (a refusal's words, a returned verdict), not how the code gets there.
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace bloomshard::app
