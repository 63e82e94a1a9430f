// The notes a saved state's parameters produce (app/state/state_overrides.hpp).
#include <gtest/gtest.h>

#include "app/state/state_overrides.hpp"

namespace bloomshard::app {
namespace {

TEST(StateOverrideNotes, OnlyGivenOptionsThatDiffer) {
  core::ScalableBloomParams saved;
  saved.fpr_target = 0.001;
  saved.initial_capacity = 1000000;
  saved.num_slices = 4096;
  DedupConfig c;
  c.fpr = 0.01;
  c.capacity = 5000;
  c.slices = 256;
  EXPECT_TRUE(state_override_notes(c, saved).empty());  // none given explicitly
  c.explicit_options = {"fpr", "capacity", "slices"};
  const std::vector<std::string> notes = state_override_notes(c, saved);
  ASSERT_EQ(notes.size(), 3U);
  EXPECT_EQ(notes[0], "the state's --fpr 0.001 is used; this job asked for 0.01");
  EXPECT_EQ(notes[1], "the state's --capacity 1000000 is used; this job asked for 5000");
  EXPECT_EQ(notes[2], "the state's --slices 4096 is used; this job asked for 256");
  c.fpr = 0.001;
  c.capacity = 1000000;
  c.slices = 4096;
  EXPECT_TRUE(state_override_notes(c, saved).empty());  // given, but the same
}

}  // namespace
}  // namespace bloomshard::app
