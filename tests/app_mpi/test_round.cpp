// The dedup round's steps (app/round/round.hpp) on real ranks over real
// input files: read, route, decide, write and agree, round after round,
// in batch order (whole files) and in file order (a split input).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint_generations.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "round_rig.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
using test::first_copies;
using test::read_lines;
using test::RoundRig;
using test::SharedDir;
using test::write_lines;

// Lines whose keys repeat inside a file and across files: file f, line i.
std::vector<std::vector<std::string>> overlapping_files(std::size_t files, std::size_t lines) {
  std::vector<std::vector<std::string>> all(files);
  for (std::size_t f = 0; f < files; ++f) {
    for (std::size_t i = 0; i < lines; ++i) {
      all[f].push_back("k" + std::to_string((i * 7 + f * 3) % 41));
    }
  }
  return all;
}

// One file whose key space grows as it goes: new keys appear in every part
// of the file and repeat later, also across the ranges it is cut into.
std::vector<std::string> growing_file(int lines) {
  std::vector<std::string> out;
  std::uint64_t x = 12345;
  for (int i = 0; i < lines; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::uint64_t space = static_cast<std::uint64_t>(i) / 3 + 1;
    out.push_back("key-" + std::to_string((x >> 33) % space));
  }
  return out;
}

TEST(RoundSteps, EveryKeyIsKeptOnceInBatchOrder) {
  const comm::Communicator world;
  const SharedDir dir(world);
  const std::vector<std::vector<std::string>> inputs = overlapping_files(3, 120);
  const std::vector<std::string> names = {"a.txt", "b.txt", "c.txt"};
  if (world.rank() == 0) {
    for (std::size_t f = 0; f < names.size(); ++f)
      write_lines(dir.path() / "in" / names[f], inputs[f]);
  }
  world.barrier();
  RoundRig rig(world, dir.path() / "in", dir.path() / "out", 64, false);
  EXPECT_FALSE(rig.order().in_file_order());
  std::vector<RoundAgreement> seen;
  const RoundAgreement end = rig.run_to_end(&seen);
  rig.finish();
  const std::vector<std::vector<std::string>> one_reader = first_copies(inputs);
  std::size_t distinct = 0;
  for (const auto& f : one_reader) distinct += f.size();
  EXPECT_GT(seen.size(), 3U);  // 64-byte batches: many rounds
  EXPECT_EQ(end.input_errors, 0U);
  EXPECT_EQ(end.records, 360U);
  EXPECT_EQ(end.dropped, 360U - distinct);
  EXPECT_EQ(end.rejected, 0U);
  for (std::size_t r = 1; r < seen.size(); ++r) EXPECT_GE(seen[r].records, seen[r - 1].records);
  if (world.rank() != 0) return;
  std::map<std::string, int> copies;
  for (std::size_t f = 0; f < names.size(); ++f) {
    const std::vector<std::string> kept = read_lines(dir.path() / "out" / names[f]);
    for (const std::string& l : kept) ++copies[l];
    // Within a file, the kept lines are its first copies, in order.
    const std::vector<std::string> firsts_of_file = first_copies({inputs[f]})[0];
    std::size_t at = 0;
    for (const std::string& l : kept) {
      while (at < firsts_of_file.size() && firsts_of_file[at] != l) ++at;
      EXPECT_LT(at, firsts_of_file.size()) << names[f] << ": '" << l << "' out of order";
    }
    // One rank reads the files in order: exactly what one reader keeps.
    if (world.size() == 1) {
      EXPECT_EQ(kept, one_reader[f]) << names[f];
    }
  }
  EXPECT_EQ(copies.size(), distinct);
  for (const auto& [line, n] : copies) EXPECT_EQ(n, 1) << line;
}

TEST(RoundSteps, SplitInputKeepsWhatOneReaderKeeps) {
  const comm::Communicator world;
  const SharedDir dir(world);
  const std::vector<std::string> input = growing_file(900);
  if (world.rank() == 0) write_lines(dir.path() / "in" / "big.txt", input);
  world.barrier();
  RoundRig rig(world, dir.path() / "in", dir.path() / "out", 96, true);
  ASSERT_EQ(rig.order().in_file_order(), has_split_inputs(rig.manifest()));
  if (world.size() > 1) {
    EXPECT_TRUE(rig.order().in_file_order());  // the file is cut into ranges
  }
  const RoundAgreement end = rig.run_to_end();
  // Later ranges ran ahead of earlier ones: owners took kept copies back.
  const std::uint64_t retracted = world.allreduce_sum(std::uint64_t{rig.retracted()});
  if (world.size() > 1) {
    EXPECT_GT(retracted, 0U);
  }
  rig.finish();
  EXPECT_EQ(end.records, input.size());
  if (world.rank() != 0) return;
  EXPECT_EQ(read_lines(dir.path() / "out" / "big.txt"), first_copies({input})[0]);
}

// A checkpoint after round 3 holds exactly that round's cut: the filter's
// keys are the records kept so far, the manifest's counters the agreed
// ones; and the rounds go on from the re-based filter as if uncut.
TEST(RoundSteps, CheckpointAtARoundBoundaryHoldsThatRound) {
  const comm::Communicator world;
  const SharedDir dir(world);
  const std::vector<std::vector<std::string>> inputs = overlapping_files(2, 150);
  if (world.rank() == 0) {
    write_lines(dir.path() / "in" / "a.txt", inputs[0]);
    write_lines(dir.path() / "in" / "b.txt", inputs[1]);
  }
  world.barrier();
  RoundRig rig(world, dir.path() / "in", dir.path() / "out", 64, false, dir.path() / "state");
  RoundAgreement at_cut;
  for (int r = 0; r < 3; ++r) at_cut = rig.run_one();
  ASSERT_FALSE(at_cut.finished());
  rig.checkpoint();
  const io::CheckpointSummary saved =
      io::read_checkpoint_summary(io::generation_path(dir.path() / "state", 1));
  EXPECT_EQ(saved.tier2_keys, at_cut.records - at_cut.dropped - at_cut.rejected);
  const RunManifest m = manifest_from_json(saved.header.manifest_json);
  EXPECT_EQ(m.counters.records, at_cut.records);
  EXPECT_EQ(m.counters.dropped, at_cut.dropped);
  EXPECT_EQ(m.counters.rounds, 3U);
  const RoundAgreement end = rig.run_to_end();
  rig.finish();
  EXPECT_EQ(end.records, 300U);
  if (world.rank() != 0) return;
  std::map<std::string, int> copies;
  for (const char* name : {"a.txt", "b.txt"}) {
    for (const std::string& l : read_lines(dir.path() / "out" / name)) ++copies[l];
  }
  EXPECT_EQ(copies.size(), 41U);
  for (const auto& [line, n] : copies) EXPECT_EQ(n, 1) << line;
}

}  // namespace
}  // namespace bloomshard::app
