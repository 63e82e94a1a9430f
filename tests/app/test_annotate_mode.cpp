// Annotate mode pieces without MPI: the options, the manifest field and the
// run identity that pin the mode, and the exact attribute lines of both
// formats, written through real OutputWriter files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/feed/annotation_writer.hpp"
#include "app/options/dedup_options.hpp"
#include "app/round/key_order.hpp"
#include "app/run/run_manifest.hpp"
#include "app/run/run_state.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class AnnotateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-annotate-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "in");
    std::ofstream(dir_ / "in/a.jsonl") << "{\"id\":\"x\"}\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(AnnotateTest, OptionsParseAndBadValuesAreUsageErrors) {
  const std::string in = (dir_ / "in").string();
  ParsedDedup p = parse_dedup_options({"--input", in, "--output", "o"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.annotate.mode, RunMode::kFilter);
  p = parse_dedup_options(
      {"--input", in, "--output", "o", "--mode", "annotate", "--annotate-format", "dolma"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.annotate.mode, RunMode::kAnnotate);
  EXPECT_EQ(p.config.annotate.format, AnnotateFormat::kDolma);
  for (const auto& [option, value] : {std::pair{"--mode", "mark"}, {"--annotate-format", "bff"}}) {
    p = parse_dedup_options({"--input", in, "--output", "o", option, value});
    ASSERT_TRUE(p.exit_code);
    EXPECT_EQ(*p.exit_code, kExitUsage);
    EXPECT_NE(p.message.find(option), std::string::npos) << p.message;
  }
}

TEST_F(AnnotateTest, KeptCopyFirstKeepsTheInputOrderWithAndWithoutState) {
  const std::string in = (dir_ / "in").string();
  ParsedDedup p = parse_dedup_options(
      {"--input", in, "--output", "o", "--mode", "annotate", "--kept-copy", "first"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.kept_copy, KeptCopy::kFirstInInputOrder);
  EXPECT_TRUE(keeps_input_order(p.config));
  p = parse_dedup_options({"--input", in, "--output", "o", "--mode", "annotate", "--kept-copy",
                           "first", "--state", (dir_ / "st").string()});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_TRUE(keeps_input_order(p.config));
  // --unit paragraph in annotate mode: whole inputs only, as in filter mode
  // (--split-inputs auto given is refused; not given, inputs are read whole).
  p = parse_dedup_options({"--input", in, "--output", "o", "--mode", "annotate", "--kept-copy",
                           "first", "--unit", "paragraph", "--key-field", "text", "--split-inputs",
                           "auto"});
  ASSERT_TRUE(p.exit_code);
  EXPECT_NE(p.message.find("--kept-copy first --unit paragraph needs --split-inputs off"),
            std::string::npos)
      << p.message;
  p = parse_dedup_options({"--input", in, "--output", "o", "--mode", "annotate", "--kept-copy",
                           "first", "--unit", "paragraph", "--key-field", "text", "--split-inputs",
                           "off"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_TRUE(keeps_input_order(p.config));
}

TEST_F(AnnotateTest, TheModeIsInTheManifestAndTheRunIdentity) {
  EXPECT_EQ(run_mode_label({}), "filter");
  EXPECT_EQ(run_mode_label({RunMode::kAnnotate, AnnotateFormat::kDolma}), "annotate/dolma");
  EXPECT_EQ(run_mode_options("annotate/dolma"), "--mode annotate --annotate-format dolma");
  EXPECT_EQ(run_mode_options("filter"), "--mode filter");

  RunManifest m;
  m.run_id = "0123456789abcdef";
  const std::string filter_json = manifest_to_json(m);
  EXPECT_EQ(filter_json.find("\"mode\""), std::string::npos);  // as earlier builds wrote it
  EXPECT_EQ(manifest_from_json(filter_json).mode, "filter");
  m.mode = "annotate/bloomshard";
  EXPECT_EQ(manifest_from_json(manifest_to_json(m)).mode, "annotate/bloomshard");

  DedupConfig c;
  c.output_dir = (dir_ / "out").string();
  c.key.fields = {"id"};
  const std::vector<fs::path> paths{dir_ / "in"};
  const std::vector<io::InputFile> inputs = io::discover_inputs(paths);
  const std::string filter_id = run_identity(c, inputs);
  c.annotate = {RunMode::kAnnotate, AnnotateFormat::kBloomshard};
  const std::string annotate_id = run_identity(c, inputs);
  c.annotate.format = AnnotateFormat::kDolma;
  EXPECT_NE(filter_id, annotate_id);
  EXPECT_NE(run_identity(c, inputs), annotate_id);
}

TEST_F(AnnotateTest, BloomshardLinesInInputOrderWithVerdictsAndRejects) {
  std::vector<io::OutputWriter> outputs;
  outputs.push_back(io::OutputWriter::create(dir_ / "a.jsonl", io::Compression::kNone));
  outputs.push_back(io::OutputWriter::create(dir_ / "b.txt", io::Compression::kNone));
  RoundAnnotations notes(AnnotateFormat::kBloomshard, false);
  const std::vector<std::string_view> one{"caf\xc3\xa9"};
  const std::vector<std::string_view> two{"u\"rl", "t"};
  const std::vector<std::string_view> bad{"\xff"};
  notes.add_record(0, io::Format::kJsonLines, "{}", one, "k1");
  notes.add_reject(0, io::Format::kJsonLines, "nope", std::nullopt, "malformed JSON");
  notes.add_record(1, io::Format::kPlainLines, "line", std::vector<std::string_view>{"line"}, "l");
  notes.add_record(0, io::Format::kJsonLines, "{}", two, "k2");
  notes.add_reject(0, io::Format::kJsonLines, "{}", bad, "invalid UTF-8 for normalization");
  const std::vector<core::Verdict> verdicts{core::Verdict::kNew, core::Verdict::kDuplicate,
                                            core::Verdict::kNewAfterFalsePositive};
  const std::uint64_t bytes = notes.write(verdicts, outputs);
  EXPECT_EQ(notes.size(), 0U);  // cleared for the next round
  for (auto& o : outputs) o.close();
  const std::string a = read(dir_ / "a.jsonl");
  EXPECT_EQ(a,
            "{\"key\":\"caf\xc3\xa9\",\"duplicate\":false}\n"
            "{\"key\":null,\"duplicate\":false,\"reject\":\"malformed JSON\"}\n"
            "{\"key\":[\"u\\\"rl\",\"t\"],\"duplicate\":false}\n"
            "{\"key\":\"\xef\xbf\xbd\",\"duplicate\":false,"
            "\"reject\":\"invalid UTF-8 for normalization\"}\n");
  const std::string b = read(dir_ / "b.txt");
  EXPECT_EQ(b, "{\"key\":\"line\",\"duplicate\":true}\n");
  EXPECT_EQ(bytes, a.size() + b.size());
}

TEST_F(AnnotateTest, DigestKeysShowTheirDigestInHex) {
  std::vector<io::OutputWriter> outputs;
  outputs.push_back(io::OutputWriter::create(dir_ / "a.jsonl", io::Compression::kNone));
  RoundAnnotations notes(AnnotateFormat::kBloomshard, true);
  notes.add_record(0, io::Format::kJsonLines, "{}", std::vector<std::string_view>{"v"},
                   std::string_view("\x00\xab\x10", 3));
  (void)notes.write(std::vector<core::Verdict>{core::Verdict::kDuplicate}, outputs);
  outputs[0].close();
  EXPECT_EQ(read(dir_ / "a.jsonl"),
            "{\"key\":\"v\",\"key_digest\":\"00ab10\",\"duplicate\":true}\n");
}

TEST_F(AnnotateTest, DolmaSpansCountCharactersOfText) {
  std::vector<io::OutputWriter> outputs;
  outputs.push_back(io::OutputWriter::create(dir_ / "a.jsonl", io::Compression::kNone));
  RoundAnnotations notes(AnnotateFormat::kDolma, false);
  const std::vector<std::string_view> key{"k"};
  // "é😀x" is 7 bytes, 3 characters (Python len); escapes count once unescaped.
  notes.add_record(0, io::Format::kJsonLines,
                   "{\"text\":\"\xc3\xa9\xf0\x9f\x98\x80x\",\"id\":\"d1\"}", key, "k");
  notes.add_record(0, io::Format::kJsonLines, "{\"id\":7,\"text\":\"\\u00e9\\ud83d\\ude00x\"}", key,
                   "k");
  notes.add_record(0, io::Format::kJsonLines, "{\"text\":\"abc\"}", key, "k");
  notes.add_reject(0, io::Format::kJsonLines, "{\"id\":\"d4\"", std::nullopt, "malformed JSON");
  (void)notes.write(std::vector<core::Verdict>{core::Verdict::kNew, core::Verdict::kDuplicate,
                                               core::Verdict::kDuplicate},
                    outputs);
  outputs[0].close();
  EXPECT_EQ(read(dir_ / "a.jsonl"),
            "{\"id\":\"d1\",\"attributes\":{\"bloomshard_duplicate\":[]}}\n"
            "{\"id\":\"7\",\"attributes\":{\"bloomshard_duplicate\":[[0,3,1.0]]}}\n"
            "{\"id\":null,\"attributes\":{\"bloomshard_duplicate\":[[0,3,1.0]]}}\n"
            "{\"id\":null,\"attributes\":{\"bloomshard_duplicate\":[]},"
            "\"reject\":\"malformed JSON\"}\n");
}

TEST_F(AnnotateTest, NearMatchesGiveTheEstimateAndThePositionMatched) {
  std::vector<io::OutputWriter> outputs;
  outputs.push_back(io::OutputWriter::create(dir_ / "b.jsonl", io::Compression::kNone));
  outputs.push_back(io::OutputWriter::create(dir_ / "d.jsonl", io::Compression::kNone));
  // Input 2 at byte 14253 (order_position: input + 1 above bit 42).
  const std::uint64_t position = (std::uint64_t{3} << 42) | 14253U;
  // Run 5 of the state: the run whose inputs the input index names.
  const std::vector<std::optional<NearMatch>> matches{NearMatch{0.8761904761904762, position, 5},
                                                      std::nullopt, NearMatch{1.0, 0}};
  RoundAnnotations b(AnnotateFormat::kBloomshard, false);
  RoundAnnotations d(AnnotateFormat::kDolma, false);
  for (int i = 0; i < 3; ++i) {
    b.add_minhash_record(0, io::Format::kJsonLines, "{\"text\":\"abc\"}");
    d.add_minhash_record(1, io::Format::kJsonLines, "{\"id\":\"x\",\"text\":\"abc\"}");
  }
  b.add_reject(0, io::Format::kJsonLines, "{", std::nullopt, "malformed JSON");
  (void)b.write_near_matches(matches, outputs);
  (void)d.write_near_matches(matches, outputs);
  for (auto& o : outputs) o.close();
  EXPECT_EQ(read(dir_ / "b.jsonl"),
            "{\"duplicate\":true,\"similarity\":0.8761904761904762,"
            "\"match\":{\"run\":5,\"input\":2,\"offset\":14253}}\n"
            "{\"duplicate\":false}\n"
            "{\"duplicate\":true,\"similarity\":1,\"match\":null}\n"
            "{\"key\":null,\"duplicate\":false,\"reject\":\"malformed JSON\"}\n");
  EXPECT_EQ(read(dir_ / "d.jsonl"),
            "{\"id\":\"x\",\"attributes\":{\"bloomshard_duplicate\":[[0,3,1.0]],"
            "\"bloomshard_similarity\":[[0,3,0.8761904761904762]],"
            "\"bloomshard_match_input\":[[0,3,2]],\"bloomshard_match_offset\":[[0,3,14253]],"
            "\"bloomshard_match_run\":[[0,3,5]]}}\n"
            "{\"id\":\"x\",\"attributes\":{\"bloomshard_duplicate\":[],"
            "\"bloomshard_similarity\":[],\"bloomshard_match_input\":[],"
            "\"bloomshard_match_offset\":[],\"bloomshard_match_run\":[]}}\n"
            "{\"id\":\"x\",\"attributes\":{\"bloomshard_duplicate\":[[0,3,1.0]],"
            "\"bloomshard_similarity\":[[0,3,1]],\"bloomshard_match_input\":[],"
            "\"bloomshard_match_offset\":[],\"bloomshard_match_run\":[]}}\n");
}

// With a state too: whether the state keeps origins is the start's
// decision (e2e.minhash_confirm_origins), not the options'.
TEST_F(AnnotateTest, ConfirmedAnnotateIsAcceptedWithAndWithoutAState) {
  const std::string in = (dir_ / "in").string();
  const std::vector<std::string> base{
      "--input", in,        "--output", "o",        "--key-field",       "text",
      "--unit",  "minhash", "--mode",   "annotate", "--confirm-jaccard", "0.8"};
  ParsedDedup p = parse_dedup_options(base);
  EXPECT_FALSE(p.exit_code) << p.message;
  std::vector<std::string> with_state = base;
  with_state.insert(with_state.end(), {"--state", (dir_ / "st").string()});
  p = parse_dedup_options(with_state);
  EXPECT_FALSE(p.exit_code) << p.message;
}

}  // namespace
}  // namespace bloomshard::app
