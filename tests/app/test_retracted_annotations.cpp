// The end pass of the one input order in annotate mode, without MPI: a kept
// copy retracted for an earlier copy read later gets its attribute line
// flagged a duplicate, exactly as RoundAnnotations writes a duplicate's
// line; the input is read beside the attribute file to place each line, and
// everything that does not match the run is an error naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "app/feed/annotation_writer.hpp"
#include "app/round/retracted_annotations.hpp"
#include "app/round/retracted_line_cut.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// The test's key of an input line: the value of "id":"..." (none: a reject).
std::optional<std::string_view> id_of(std::string_view line) {
  const std::size_t at = line.find("\"id\":\"");
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t begin = at + 6;
  return line.substr(begin, line.find('"', begin) - begin);
}

std::optional<core::KeyHash> key_of(std::string_view line) {
  const std::optional<std::string_view> id = id_of(line);
  if (!id) return std::nullopt;
  return core::hash_key(*id);
}

// Input lines: a, b, a reject, a's second copy, c (the last, no newline).
// "b" holds a 4-byte code point, "c" an escaped one: 2 and 1 characters.
const std::vector<std::string> kLines = {
    "{\"id\":\"a\",\"text\":\"hello\"}\n",
    "{\"id\":\"b\",\"text\":\"x\xf0\x9f\x98\x80\"}\r\n",
    "not json\n",
    "{\"id\":\"a\",\"text\":\"zz\"}\n",
    "{\"id\":\"c\",\"text\":\"\\u00fc\"}",
};

class RetractedAnnotations : public ::testing::TestWithParam<io::Compression> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-flag-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (const std::string& l : kLines) {
      at_.push_back(input_.size());
      input_ += l;
    }
    const io::Compression c = GetParam();
    const std::string ext = c == io::Compression::kGzip   ? ".gz"
                            : c == io::Compression::kZstd ? ".zst"
                                                          : "";
    input_file_.absolute_path = dir_ / ("in.jsonl" + ext);
    input_file_.relative_path = "in.jsonl" + ext;
    input_file_.format = io::Format::kJsonLines;
    input_file_.compression = c;
    {
      io::OutputWriter w = io::OutputWriter::create(input_file_.absolute_path, c);
      w.write_bytes(input_);
      w.close();
    }
    input_file_.size = fs::file_size(input_file_.absolute_path);
    out_ = dir_ / ("out.jsonl" + ext);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The attribute file RoundAnnotations writes for kLines with `duplicate`
  // set for the records (not the reject) at those input lines, at `path`.
  std::string attributes(AnnotateFormat format, const std::vector<std::size_t>& duplicate,
                         const fs::path& path) const {
    std::vector<io::OutputWriter> outputs;
    outputs.push_back(io::OutputWriter::create(path, GetParam()));
    RoundAnnotations notes(format, false);
    std::vector<core::Verdict> verdicts;
    for (std::size_t i = 0; i < kLines.size(); ++i) {
      std::string_view line = kLines[i];
      while (line.ends_with('\n') || line.ends_with('\r')) line.remove_suffix(1);
      const std::optional<std::string_view> id = id_of(line);
      if (!id) {
        notes.add_reject(0, io::Format::kJsonLines, line, std::nullopt, "malformed JSON");
        continue;
      }
      notes.add_record(0, io::Format::kJsonLines, line, std::vector<std::string_view>{*id}, *id);
      const bool dup = std::find(duplicate.begin(), duplicate.end(), i) != duplicate.end();
      verdicts.push_back(dup ? core::Verdict::kDuplicate : core::Verdict::kNew);
    }
    (void)notes.write(verdicts, outputs);
    outputs[0].close();
    return decompressed(path);
  }
  std::string decompressed(const fs::path& path) const {
    io::InputFile f = input_file_;
    f.absolute_path = path;
    f.size = fs::file_size(path);
    io::RecordReader r({.prefix_digest = false});
    r.open(f);
    std::string text;
    io::Record rec;
    while (r.next(rec)) {
      text += rec.line;
      text += rec.terminator;
    }
    return text;
  }
  RetractedLine retracted(std::size_t line, std::string_view key) const {
    return {at_[line], core::hash_key(key)};
  }
  FlaggedLines flag(AnnotateFormat format, const std::vector<RetractedLine>& r) const {
    return flag_retracted_annotations(input_file_, out_, r, key_of, format, 1 << 20, {}, false);
  }
  // Expects flagging `r` to be refused with a message containing `why`, the
  // attribute file untouched and no temporary file left.
  void expect_refused(AnnotateFormat format, const std::vector<RetractedLine>& r,
                      const std::string& why) const {
    const std::string before = decompressed(out_);
    try {
      (void)flag(format, r);
      ADD_FAILURE() << "accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos)
          << "names no file: " << e.what();
    }
    EXPECT_FALSE(fs::exists(cut_output_temp_path(out_)));
    EXPECT_EQ(decompressed(out_), before);
  }

  fs::path dir_;
  std::string input_;
  std::vector<std::uint64_t> at_;
  io::InputFile input_file_;
  fs::path out_;
};

TEST_P(RetractedAnnotations, FlaggedLinesAreTheLinesOfADuplicateVerdict) {
  for (const AnnotateFormat format : {AnnotateFormat::kBloomshard, AnnotateFormat::kDolma}) {
    // Written with a's second copy a duplicate; b and c (last line) retracted.
    (void)attributes(format, {3}, out_);
    const std::string want = attributes(format, {1, 3, 4}, dir_ / "want");
    const FlaggedLines done = flag(format, {retracted(1, "b"), retracted(4, "c")});
    EXPECT_EQ(done.lines, 2U);
    commit_cut_output(out_, false);
    const std::string got = decompressed(out_);
    EXPECT_EQ(got, want);
    EXPECT_EQ(done.growth,
              static_cast<std::int64_t>(want.size()) -
                  static_cast<std::int64_t>(attributes(format, {3}, dir_ / "was").size()));
    if (format == AnnotateFormat::kDolma) {
      EXPECT_NE(got.find("{\"id\":\"b\",\"attributes\":{\"bloomshard_duplicate\":[[0,2,1.0]]}}\n"),
                std::string::npos)
          << got;
      EXPECT_NE(got.find("{\"id\":\"c\",\"attributes\":{\"bloomshard_duplicate\":[[0,1,1.0]]}}\n"),
                std::string::npos)
          << got;
    } else {
      EXPECT_NE(got.find("{\"key\":\"b\",\"duplicate\":true}\n"), std::string::npos) << got;
    }
  }
}

TEST_P(RetractedAnnotations, WhatDoesNotMatchTheRunIsRefusedNamingTheFile) {
  for (const AnnotateFormat format : {AnnotateFormat::kBloomshard, AnnotateFormat::kDolma}) {
    (void)attributes(format, {3}, out_);
    // Another key at b's offset; an offset inside a line; the reject's line.
    expect_refused(format, {{at_[1], core::hash_key("x")}}, "does not hold the key");
    expect_refused(format, {{at_[1] + 1, core::hash_key("b")}}, "is not the start of a line");
    expect_refused(format, {{at_[2], core::hash_key("not json")}}, "does not hold the key");
    // a's second copy is a duplicate already: its line is no kept line.
    expect_refused(format, {retracted(3, "a")}, "is not a kept record's line");
    // Past the input's end: the attribute file ends first.
    expect_refused(format, {{input_.size() + 3, core::hash_key("c")}}, "ends before the line");
    // The other format's attribute file.
    const AnnotateFormat other =
        format == AnnotateFormat::kDolma ? AnnotateFormat::kBloomshard : AnnotateFormat::kDolma;
    expect_refused(other, {retracted(1, "b")}, "is not a kept record's line");
  }
  // An attribute file shorter than its input (written for 3 lines only).
  {
    io::OutputWriter w = io::OutputWriter::create(out_, GetParam());
    w.write_bytes("{\"key\":\"a\",\"duplicate\":false}\n{\"key\":\"b\",\"duplicate\":false}\n");
    w.close();
  }
  expect_refused(AnnotateFormat::kBloomshard, {retracted(4, "c")}, "ends before the line");
  // One longer than its input: the input ends before the retracted offset.
  {
    io::OutputWriter w = io::OutputWriter::create(out_, GetParam());
    for (int i = 0; i < 7; ++i) w.write_bytes("{\"key\":\"a\",\"duplicate\":false}\n");
    w.close();
  }
  expect_refused(AnnotateFormat::kBloomshard, {{input_.size() + 3, core::hash_key("c")}},
                 "ends before offset");
}

INSTANTIATE_TEST_SUITE_P(Compressions, RetractedAnnotations,
                         ::testing::Values(io::Compression::kNone, io::Compression::kGzip,
                                           io::Compression::kZstd));

TEST(DuplicateFlag, TurnsOnlyAKeptRecordsLineOfItsFormat) {
  DuplicateFlag bs(AnnotateFormat::kBloomshard);
  EXPECT_EQ(bs.flag("{\"key\":[\"u\",\"t\"],\"key_digest\":\"0a\",\"duplicate\":false}",
                    io::Format::kJsonLines, "{}"),
            "{\"key\":[\"u\",\"t\"],\"key_digest\":\"0a\",\"duplicate\":true}");
  EXPECT_FALSE(bs.flag("{\"key\":\"k\",\"duplicate\":true}", io::Format::kJsonLines, "{}"));
  EXPECT_FALSE(bs.flag("{\"key\":null,\"duplicate\":false,\"reject\":\"malformed JSON\"}",
                       io::Format::kJsonLines, "{}"));
  DuplicateFlag dolma(AnnotateFormat::kDolma);
  // A plain-line input's span covers the line: "é😀x" is 3 characters.
  EXPECT_EQ(dolma.flag("{\"id\":null,\"attributes\":{\"bloomshard_duplicate\":[]}}",
                       io::Format::kPlainLines, "\xc3\xa9\xf0\x9f\x98\x80x"),
            "{\"id\":null,\"attributes\":{\"bloomshard_duplicate\":[[0,3,1.0]]}}");
  EXPECT_FALSE(
      dolma.flag("{\"id\":null,\"attributes\":{\"bloomshard_duplicate\":[]},"
                 "\"reject\":\"malformed JSON\"}",
                 io::Format::kJsonLines, "{"));
  EXPECT_FALSE(dolma.flag("{\"key\":\"k\",\"duplicate\":false}", io::Format::kJsonLines, "{}"));
}

}  // namespace
}  // namespace bloomshard::app
