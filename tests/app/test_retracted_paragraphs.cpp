// The end pass under --kept-copy first --unit paragraph
// (app/round/retracted_paragraphs.hpp): a retracted paragraph is cut from
// the line of the record that kept it, with the removals the line had
// (re-derived from it), the record dropped when the fraction now drops it;
// a retraction that does not match the files is refused naming the output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "app/round/retracted_paragraphs.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "core/paragraph/paragraph_keyer.hpp"

namespace bloomshard::app {
namespace {
namespace fs = std::filesystem;

constexpr std::uint64_t kSeed = 5;
const std::string kA = R"({"id":"a","text":"p1 x\np2 x\np3 x"})";  // at 0
const std::string kBad = R"({"id":"b","text":42})";
const std::string kC = R"({"id":"c","text":"p2 x\nq1 x"})";
const std::string kCWritten = R"({"id":"c","text":"q1 x"})";  // p2 was a duplicate there

class RetractedParagraphsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-retpar-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    key_.fields = {"text"};
    key_.unit = core::KeyUnit::kParagraph;
    key_.digest = core::KeyDigest::kXxh3_128;
    key_.min_paragraph_bytes = 2;
    write(dir_ / "in.jsonl", kA + "\n" + kBad + "\n" + kC + "\n");
    write(dir_ / "out.jsonl", kA + "\n" + kCWritten + "\n");
    input_.absolute_path = dir_ / "in.jsonl";
    input_.relative_path = "in.jsonl";
    input_.size = fs::file_size(input_.absolute_path);
    input_.format = io::Format::kJsonLines;
    texts_ = {{kA, "p1 x\np2 x\np3 x"}, {kC, "p2 x\nq1 x"}, {kCWritten, "q1 x"}};
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void write(const fs::path& p, const std::string& s) {
    std::ofstream(p, std::ios::binary) << s;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The key hash of paragraph `p` of `text`, as the run keys it.
  core::KeyHash hash_of(const std::string& text, std::size_t p) const {
    core::ParagraphKeyer keyer(key_);
    keyer.key_text(text);
    return core::hash_key(keyer.key(p), kSeed);
  }
  ParagraphRecut cut(std::span<const RetractedLine> retracted) {
    const ParagraphTextOf text_of = [&](std::string_view line) -> std::optional<std::string> {
      if (line.ends_with('\n')) line.remove_suffix(1);
      const auto it = texts_.find(std::string(line));
      if (it == texts_.end()) return std::nullopt;
      return it->second;
    };
    return cut_retracted_paragraphs(input_, dir_ / "out.jsonl", retracted, text_of, key_, kSeed,
                                    1 << 20, {}, false);
  }
  fs::path dir_;
  core::KeyScheme key_;
  io::InputFile input_;
  std::map<std::string, std::string> texts_;
};

TEST_F(RetractedParagraphsTest, CutsTheParagraphFromTheRecordThatKeptIt) {
  const RetractedLine r[] = {{1, hash_of("p1 x\np2 x\np3 x", 1)}};
  const ParagraphRecut done = cut(r);
  EXPECT_EQ(read(cut_output_temp_path(dir_ / "out.jsonl")), R"({"id":"a","text":"p1 x\np3 x"})"
                                                            "\n" +
                                                                kCWritten + "\n");
  EXPECT_EQ(done.lines_changed, 1u);
  EXPECT_EQ(done.lines_dropped, 0u);
  EXPECT_EQ(done.records_changed, 1);
  EXPECT_EQ(done.paragraphs_removed, 1);
  EXPECT_EQ(done.text_bytes_removed, 5);
  EXPECT_EQ(read(dir_ / "out.jsonl"), kA + "\n" + kCWritten + "\n") << "the output untouched";
}

TEST_F(RetractedParagraphsTest, AddsToTheRemovalsTheLineHadAndDropsOverTheFraction) {
  key_.drop_if_removed_fraction = 0.9;
  const std::uint64_t c = kA.size() + 1 + kBad.size() + 1;  // record c's offset
  const RetractedLine r[] = {{c + 1, hash_of("p2 x\nq1 x", 1)}};
  ParagraphRecut done = cut(r);
  EXPECT_EQ(read(cut_output_temp_path(dir_ / "out.jsonl")), kA + "\n");
  EXPECT_EQ(done.lines_dropped, 1u);
  EXPECT_EQ(done.records_changed, -1);
  EXPECT_EQ(done.paragraphs_removed, -1) << "the dropped record's cut no longer counts";
}

TEST_F(RetractedParagraphsTest, RefusesWhatDoesNotMatchTheFiles) {
  const std::uint64_t bad = kA.size() + 1;
  const std::uint64_t c = bad + kBad.size() + 1;
  const auto refused = [&](RetractedLine r, const std::string& why) {
    try {
      const RetractedLine one[] = {r};
      (void)cut(one);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("out.jsonl"), std::string::npos) << m;
      EXPECT_NE(m.find(why), std::string::npos) << m;
    }
    EXPECT_FALSE(fs::exists(cut_output_temp_path(dir_ / "out.jsonl")));
  };
  refused({1, hash_of("p1 x\np2 x\np3 x", 2)}, "is no keyed paragraph of that key");
  refused({bad, hash_of("p1 x", 0)}, "lies in a rejected record");
  refused({c, hash_of("p2 x\nq1 x", 0)}, "was cut already");
  refused({c + kC.size() + 1, hash_of("p1 x", 0)}, "lies past the input's last record");
  refused({kA.size(), hash_of("p1 x", 0)}, "starts no paragraph of a record");
}

// Annotate mode: the retracted paragraph joins its record's listed spans, in
// both formats, the line written as the run writes it (bloomshard: byte
// spans of the paragraphs and `duplicate` once the fraction drops it;
// dolma: code point spans of the cuts); a span list that names no
// paragraph of the record is refused.
TEST_F(RetractedParagraphsTest, AnnotateModeAddsTheParagraphToTheRecordsSpans) {
  key_.drop_if_removed_fraction = 0.6;  // record c with p2 cut (5 of 9 bytes) is kept
  const std::uint64_t c = kA.size() + 1 + kBad.size() + 1;
  const std::string reject = R"({"reject":"paragraph field is not a string"})";
  const auto run = [&](AnnotateFormat format, std::span<const RetractedLine> r) {
    const ParagraphTextOf text_of = [&](std::string_view line) -> std::optional<std::string> {
      if (line.ends_with('\n')) line.remove_suffix(1);
      const auto it = texts_.find(std::string(line));
      if (it == texts_.end()) return std::nullopt;
      return it->second;
    };
    return flag_retracted_paragraphs(input_, dir_ / "out.jsonl", r, text_of, key_, kSeed, format,
                                     1 << 20, {}, false);
  };
  // Record a ("p1 x\np2 x\np3 x") kept all; record c ("p2 x\nq1 x") had p2 cut.
  write(dir_ / "out.jsonl", R"({"duplicate":false,"paragraphs":3,"duplicate_spans":[]})"
                            "\n" +
                                reject + "\n" +
                                R"({"duplicate":false,"paragraphs":2,"duplicate_spans":[[0,4]]})" +
                                "\n");
  const RetractedLine in_a[] = {{1, hash_of("p1 x\np2 x\np3 x", 1)}};
  ParagraphRecut done = run(AnnotateFormat::kBloomshard, in_a);
  EXPECT_EQ(read(cut_output_temp_path(dir_ / "out.jsonl")),
            R"({"duplicate":false,"paragraphs":3,"duplicate_spans":[[5,9]]})"
            "\n" +
                reject + "\n" + R"({"duplicate":false,"paragraphs":2,"duplicate_spans":[[0,4]]})" +
                "\n");
  EXPECT_EQ(done.lines_changed, 1u);
  EXPECT_EQ(done.lines_dropped, 0u);
  EXPECT_EQ(done.records_changed, 1);
  fs::remove(cut_output_temp_path(dir_ / "out.jsonl"));
  // q1 of record c as well: all of its text, over the fraction: dropped.
  const RetractedLine in_c[] = {{c + 1, hash_of("p2 x\nq1 x", 1)}};
  done = run(AnnotateFormat::kBloomshard, in_c);
  EXPECT_NE(read(cut_output_temp_path(dir_ / "out.jsonl"))
                .find(R"({"duplicate":true,"paragraphs":2,"duplicate_spans":[[0,4],[5,9]]})"),
            std::string::npos);
  EXPECT_EQ(done.lines_dropped, 1u);
  EXPECT_EQ(done.records_changed, -1);
  fs::remove(cut_output_temp_path(dir_ / "out.jsonl"));
  // Dolma: cuts in code points (the paragraph and its separator).
  write(dir_ / "out.jsonl", R"({"id":"a","attributes":{"bloomshard_duplicate":[]}})"
                            "\n" +
                                reject + "\n" +
                                R"({"id":"c","attributes":{"bloomshard_duplicate":[[0,5,1.0]]}})" +
                                "\n");
  done = run(AnnotateFormat::kDolma, in_a);
  EXPECT_EQ(read(cut_output_temp_path(dir_ / "out.jsonl")).substr(0, 62),
            R"({"id":"a","attributes":{"bloomshard_duplicate":[[5,10,1.0]]}})"
            "\n");
  fs::remove(cut_output_temp_path(dir_ / "out.jsonl"));
  // A listed span that is no paragraph of the record: refused by name.
  write(dir_ / "out.jsonl", R"({"id":"a","attributes":{"bloomshard_duplicate":[[1,5,1.0]]}})"
                            "\n" +
                                reject + "\n");
  try {
    (void)run(AnnotateFormat::kDolma, in_a);
    ADD_FAILURE() << "accepted a span list that names no paragraph";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not list its paragraphs"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(cut_output_temp_path(dir_ / "out.jsonl")));
}

}  // namespace
}  // namespace bloomshard::app
