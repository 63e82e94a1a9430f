// The dedup job's window glue without MPI: option parsing (also through
// parse_dedup_options), the refusal of a changed window, the header stamp,
// and where SlotClock::start opens slots (fresh, incremental per-run, a
// records slot that was full at the last checkpoint, one that was not);
// which slot rules --kept-copy first takes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/options/dedup_options.hpp"
#include "app/round/key_order.hpp"
#include "app/state/window_slots.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

TEST(WindowSlots, ParsesOptions) {
  EXPECT_EQ(parse_window_options(0, 0, ""), core::WindowSpec{});
  EXPECT_EQ(parse_window_options(3, 0, ""), (core::WindowSpec{3, core::SlotRule::kPerRun, 0}));
  EXPECT_EQ(parse_window_options(3, 500, ""), (core::WindowSpec{3, core::SlotRule::kRecords, 500}));
  EXPECT_EQ(parse_window_options(2, 0, "24h"),
            (core::WindowSpec{2, core::SlotRule::kWallSeconds, 86400}));
  EXPECT_THROW((void)parse_window_options(0, 500, ""), std::invalid_argument);
  EXPECT_THROW((void)parse_window_options(3, 500, "1h"), std::invalid_argument);
  EXPECT_THROW((void)parse_window_options(33, 0, ""), std::invalid_argument);
  try {
    (void)parse_window_options(3, 0, "1d");
    FAIL() << "1d accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--slot-every"), std::string::npos) << e.what();
  }
}

TEST(WindowSlots, DedupOptionsNeedState) {
  const fs::path dir =
      fs::temp_directory_path() / ("bloomshard-window-" + std::to_string(getpid()));
  fs::create_directories(dir / "in");
  const std::vector<std::string> base{
      "--input", (dir / "in").string(), "--output", (dir / "out").string(), "--window", "3"};
  const ParsedDedup no_state = parse_dedup_options(base);
  ASSERT_TRUE(no_state.exit_code);
  EXPECT_NE(no_state.message.find("--window needs --state"), std::string::npos);
  std::vector<std::string> with_state = base;
  with_state.insert(with_state.end(), {"--state", (dir / "s").string(), "--slot-records", "100"});
  const ParsedDedup ok = parse_dedup_options(with_state);
  ASSERT_FALSE(ok.exit_code) << ok.message;
  EXPECT_EQ(ok.config.window, (core::WindowSpec{3, core::SlotRule::kRecords, 100}));
  with_state.insert(with_state.end(), {"--slot-every", "1h"});
  const ParsedDedup both = parse_dedup_options(with_state);
  ASSERT_TRUE(both.exit_code);
  EXPECT_NE(both.message.find("exclude each other"), std::string::npos) << both.message;
  fs::remove_all(dir);
}

// --kept-copy first takes a window of one slot a run (the whole run is the
// current slot) and refuses the slot rules whose slots end at round ends.
TEST(WindowSlots, KeptCopyFirstTakesPerRunSlotsOnly) {
  const fs::path dir =
      fs::temp_directory_path() / ("bloomshard-window-first-" + std::to_string(getpid()));
  fs::create_directories(dir / "in");
  const std::vector<std::string> base{"--input",     (dir / "in").string(),
                                      "--output",    (dir / "out").string(),
                                      "--state",     (dir / "s").string(),
                                      "--window",    "3",
                                      "--kept-copy", "first"};
  for (const char* mode : {"filter", "annotate"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--mode", mode});
    const ParsedDedup per_run = parse_dedup_options(args);
    ASSERT_FALSE(per_run.exit_code) << per_run.message;
    EXPECT_TRUE(keeps_input_order(per_run.config)) << mode;
    for (const auto& [option, value] :
         {std::pair{"--slot-records", "100"}, std::pair{"--slot-every", "1h"}}) {
      std::vector<std::string> slots = args;
      slots.insert(slots.end(), {option, value});
      const ParsedDedup refused = parse_dedup_options(slots);
      ASSERT_TRUE(refused.exit_code) << option;
      EXPECT_EQ(*refused.exit_code, kExitUsage);
      EXPECT_NE(refused.message.find(std::string("--kept-copy first cannot apply with ") + option),
                std::string::npos)
          << refused.message;
      EXPECT_NE(refused.message.find("round ends"), std::string::npos) << refused.message;
      // The arrival order takes every slot rule.
      slots[9] = "arrival";
      EXPECT_FALSE(parse_dedup_options(slots).exit_code) << option;
    }
  }
  fs::remove_all(dir);
}

TEST(WindowSlots, RefusesAChangedWindow) {
  io::CheckpointHeader plain;
  io::CheckpointHeader windowed;
  const core::WindowSpec three{3, core::SlotRule::kPerRun, 0};
  windowed.window = core::window_attribute(three);
  EXPECT_EQ(window_refusal(plain, {}), "");
  EXPECT_EQ(window_refusal(windowed, three), "");
  EXPECT_NE(window_refusal(plain, three).find("has no window"), std::string::npos);
  const std::string dropped = window_refusal(windowed, {});
  EXPECT_NE(dropped.find("--window 3, this job has no --window"), std::string::npos) << dropped;
  const std::string rule = window_refusal(windowed, {3, core::SlotRule::kRecords, 10});
  EXPECT_NE(rule.find("--slot-records 10"), std::string::npos) << rule;
  windowed.window = "window/v1; slots=x; slot=run";
  EXPECT_NE(window_refusal(windowed, three).find("cannot be read"), std::string::npos);
}

core::ScalableBloomParams small_params() {
  core::ScalableBloomParams p;
  p.initial_capacity = 100;
  p.num_slices = 4;
  return p;
}

TEST(WindowSlots, StartOpensSlotsWhereTheRuleSays) {
  const core::WindowSpec per_run{2, core::SlotRule::kPerRun, 0};
  const core::WindowSpec records{2, core::SlotRule::kRecords, 100};
  {  // fresh: slot 0, and the header says so
    core::TwoTierSet set(small_params(), {0, 4});
    SlotClock clock(per_run, 0);
    clock.start(set, true, false);
    EXPECT_EQ(set.bloom().window(), 2U);
    EXPECT_EQ(set.bloom().current_slot(), 0U);
    io::CheckpointHeader h;
    put_window(per_run, set, clock.progress(), h);
    EXPECT_EQ(h.window, "window/v1; slots=2; slot=run");
    EXPECT_EQ(h.window_slot, 0U);
    // incremental run of per-run slots: the next slot
    SlotClock next(per_run, 0);
    next.start(set, false, true);
    EXPECT_EQ(set.bloom().current_slot(), 1U);
    // a resume stays in its slot
    SlotClock resumed(per_run, 0);
    resumed.start(set, false, false);
    EXPECT_EQ(set.bloom().current_slot(), 1U);
  }
  {  // records slots: an incremental run continues the slot unless it was full
    core::TwoTierSet set(small_params(), {0, 4});
    SlotClock fresh(records, 0);
    fresh.start(set, true, false);
    SlotClock half(records, 50);
    half.start(set, false, true);
    EXPECT_EQ(set.bloom().current_slot(), 0U);
    EXPECT_EQ(half.progress(), 50U);
    SlotClock full(records, 100);  // stopped right at a boundary
    full.start(set, false, false);
    EXPECT_EQ(set.bloom().current_slot(), 1U);
    EXPECT_EQ(full.progress(), 0U);
  }
  {  // no window: nothing happens, the header stays plain
    core::TwoTierSet set(small_params(), {0, 4});
    SlotClock none({}, 0);
    none.start(set, true, false);
    EXPECT_EQ(set.bloom().window(), 0U);
    io::CheckpointHeader h;
    put_window({}, set, 0, h);
    EXPECT_EQ(h.window, "");
  }
}

}  // namespace
}  // namespace bloomshard::app
