// The offset maps an InputFeed keeps for the end pass of the one input
// order (InputFeed::offset_map): for a whole uncompressed input written
// from its first byte, every kept line's input offset maps to its place in
// the output; a resumed output, a compressed one, a run not tagged in
// input order, and a feed still writing keep none (the end pass walks).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/round/round_batch.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class InputFeedOffsetMap : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bloomshard-feed-map-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    fs::create_directories(dir_ / "out");
    config_.key.fields = {"id"};
    config_.output_dir = (dir_ / "out").string();
    config_.batch_bytes = 64;  // a few records a round
    // Every third record a duplicate, a line without a key (a reject), a
    // CRLF line and a last line without newline.
    for (int i = 0; i < 40; ++i) {
      at_.push_back(input_.size());
      input_ += i == 7   ? "{\"no\":7}\n"
                : i == 9 ? "{\"id\":\"k9\",\"t\":\"crlf\"}\r\n"
                         : "{\"id\":\"k" + std::to_string(i) + "\",\"v\":" + std::to_string(i * i) +
                               "}" + (i == 39 ? "" : "\n");
    }
    std::ofstream(dir_ / "in" / "a.jsonl", std::ios::binary) << input_;
    const std::vector<fs::path> paths{dir_ / "in"};
    files_ = io::discover_inputs(paths);
    ASSERT_EQ(files_.size(), 1U);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Reads every record through `feed`, each third one a duplicate; returns
  // the input offsets of the kept records, in order.
  static std::vector<std::uint64_t> run(InputFeed& feed) {
    std::vector<std::uint64_t> kept;
    RoundBatch batch;
    std::vector<core::Verdict> verdicts;
    std::size_t n = 0;
    while (!feed.exhausted()) {
      feed.fill(batch);
      verdicts.clear();
      for (std::size_t i = 0; i < batch.size(); ++i, ++n) {
        const bool dup = n % 3 == 2;
        verdicts.push_back(dup ? core::Verdict::kDuplicate : core::Verdict::kNew);
        if (!dup && !batch.tags().empty()) kept.push_back(batch.tags()[batch.first_key(i)]);
      }
      feed.write_kept(batch, verdicts);
    }
    for (std::uint64_t& t : kept) t = core::order_offset(t);
    return kept;
  }
  FileTask whole_task() const {
    FileTask t;
    t.file = files_[0];
    return t;
  }
  std::string output() const {
    std::ifstream in(dir_ / "out" / "a.jsonl", std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  std::string line_at(std::uint64_t offset) const {
    const std::size_t end = input_.find('\n', offset);
    return input_.substr(offset, end == std::string::npos ? end : end + 1 - offset);
  }

  DedupConfig config_;
  fs::path dir_;
  std::string input_;
  std::vector<std::uint64_t> at_;
  std::vector<io::InputFile> files_;
};

TEST_F(InputFeedOffsetMap, AWholeOutputMapsEveryKeptLineToItsPlace) {
  InputFeed feed(config_, {whole_task()}, dir_ / "rejects.jsonl", false);
  feed.tag_keys_in_input_order();
  const std::vector<std::uint64_t> kept = run(feed);
  ASSERT_GT(kept.size(), 20U);
  const core::OutputOffsetMap* map = feed.offset_map(0);
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(feed.offset_map(1), nullptr) << "no such input";
  const std::string out = output();
  EXPECT_EQ(map->output_length(), out.size());
  EXPECT_GT(feed.offset_map_bytes(), 0U);
  core::OutputOffsetMap::Cursor c(*map);
  for (const std::uint64_t offset : kept) {
    const auto place = c.find(offset);
    ASSERT_TRUE(place) << offset;
    const std::string line = line_at(offset);
    EXPECT_EQ(out.substr(place->output_offset, line.size()), line) << offset;
  }
  // The reject and the duplicates map to nothing.
  core::OutputOffsetMap::Cursor c2(*map);
  EXPECT_FALSE(c2.find(at_[2])) << "a duplicate";
  EXPECT_FALSE(c2.find(at_[7])) << "the reject";
}

TEST_F(InputFeedOffsetMap, AResumedOutputKeepsNoMap) {
  // The first 5 lines were read and written by an earlier process.
  const std::string head = input_.substr(0, at_[5]);
  std::ofstream(dir_ / "out" / "a.jsonl", std::ios::binary) << head;
  FileTask task = whole_task();
  task.cursor.records = 5;
  task.cursor.decompressed_offset = at_[5];
  task.output_length = head.size();
  InputFeed feed(config_, {task}, dir_ / "rejects.jsonl", false);
  feed.tag_keys_in_input_order();
  (void)run(feed);
  EXPECT_EQ(feed.offset_map(0), nullptr);
  EXPECT_EQ(feed.offset_map_bytes(), 0U);
}

TEST_F(InputFeedOffsetMap, ARunNotInInputOrderKeepsNoMap) {
  InputFeed feed(config_, {whole_task()}, dir_ / "rejects.jsonl", false);
  (void)run(feed);  // arrival order: no tags
  EXPECT_EQ(feed.offset_map(0), nullptr);
}

TEST_F(InputFeedOffsetMap, AFeedStillWritingGivesNoMap) {
  InputFeed feed(config_, {whole_task()}, dir_ / "rejects.jsonl", false);
  feed.tag_keys_in_input_order();
  RoundBatch batch;
  feed.fill(batch);
  feed.write_kept(batch, std::vector<core::Verdict>(batch.size(), core::Verdict::kNew));
  ASSERT_FALSE(feed.exhausted());
  EXPECT_EQ(feed.offset_map(0), nullptr) << "the output is not done";
}

}  // namespace
}  // namespace bloomshard::app
