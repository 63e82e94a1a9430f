// discover_inputs / classify_path: recursive sorted walk, symlink policy,
// relative mirror paths and collision refusal.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "io/errors.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::vector<std::string> relative_paths(const std::vector<InputFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.relative_path);
  return out;
}

TEST(IoDiscover, ClassifiesByExtension) {
  const auto kind = [](std::string_view n) {
    const FileKind k = classify_path(n);
    return std::make_pair(k.format, k.compression);
  };
  using P = std::pair<Format, Compression>;
  EXPECT_EQ(kind("a.jsonl"), P(Format::kJsonLines, Compression::kNone));
  EXPECT_EQ(kind("a.ndjson.gz"), P(Format::kJsonLines, Compression::kGzip));
  EXPECT_EQ(kind("a.JSON.ZST"), P(Format::kJsonLines, Compression::kZstd));
  EXPECT_EQ(kind("a.txt.zst"), P(Format::kPlainLines, Compression::kZstd));
  EXPECT_EQ(kind("a.gz"), P(Format::kPlainLines, Compression::kGzip));
  EXPECT_EQ(kind("jsonl"), P(Format::kPlainLines, Compression::kNone));
  EXPECT_EQ(kind("a.jsonl.bak"), P(Format::kPlainLines, Compression::kNone));
  EXPECT_EQ(kind("a.gz.jsonl"), P(Format::kJsonLines, Compression::kNone));
}

TEST(IoDiscover, WalksRecursivelySortedRegularFilesOnly) {
  TempDir tmp;
  const fs::path d = tmp / "corpus";
  test::write_file(d / "b.txt", "b\n");
  test::write_file(d / "a/z.jsonl.gz", test::compress(Compression::kGzip, "{}\n"));
  test::write_file(d / "a/y.ndjson.zst", test::compress(Compression::kZstd, "{}\n"));
  test::write_file(d / "c.JSON", "{}\n");
  test::write_file(d / "sub/deeper/x.log", "12345");
  test::write_file(tmp / "outside/o.txt", "o\n");
  fs::create_directories(d / "emptydir");
  fs::create_symlink(tmp / "outside/o.txt", d / "link.txt");     // followed
  fs::create_directory_symlink(tmp / "outside", d / "dirlink");  // not descended
  fs::create_symlink(tmp / "nowhere", d / "dangling");           // skipped
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);            // skipped

  const std::vector<fs::path> args{d};
  const auto files = discover_inputs(args);
  EXPECT_EQ(relative_paths(files),
            (std::vector<std::string>{"a/y.ndjson.zst", "a/z.jsonl.gz", "b.txt", "c.JSON",
                                      "link.txt", "sub/deeper/x.log"}));
  for (const auto& f : files) {
    EXPECT_TRUE(f.absolute_path.is_absolute());
    EXPECT_GT(f.mtime_ns, 0);
    EXPECT_NO_THROW((void)output_path_for("/out", f.relative_path));
  }
  EXPECT_EQ(files[0].format, Format::kJsonLines);
  EXPECT_EQ(files[0].compression, Compression::kZstd);
  EXPECT_EQ(files[1].compression, Compression::kGzip);
  EXPECT_EQ(files[2].format, Format::kPlainLines);
  EXPECT_EQ(files[3].format, Format::kJsonLines);
  EXPECT_EQ(files[4].size, 2U);  // the link target's size
  EXPECT_EQ(files[5].size, 5U);
  EXPECT_EQ(files[5].absolute_path, d / "sub/deeper/x.log");

  // Same answer on a second call (every rank must agree).
  EXPECT_EQ(relative_paths(discover_inputs(args)), relative_paths(files));
}

TEST(IoDiscover, SkipsUnderscoreAndDotNamesInWalksButNotWhenNamed) {
  TempDir tmp;
  const fs::path d = tmp / "corpus";
  test::write_file(d / "keep.jsonl", "{}\n");
  test::write_file(d / "_SUCCESS", "");
  test::write_file(d / "_rejects/rank-0.jsonl", "{}\n");
  test::write_file(d / ".hidden/x.txt", "x\n");
  test::write_file(d / "sub/.part.crc", "c\n");
  test::write_file(d / "sub/_run.json", "{}\n");
  test::write_file(d / "sub/ok.txt", "ok\n");
  const std::vector<fs::path> args{d};
  EXPECT_EQ(relative_paths(discover_inputs(args)),
            (std::vector<std::string>{"keep.jsonl", "sub/ok.txt"}));
  const std::vector<fs::path> named{d / "_SUCCESS"};
  EXPECT_EQ(relative_paths(discover_inputs(named)), (std::vector<std::string>{"_SUCCESS"}));
}

TEST(IoDiscover, SeveralArgumentsArePrefixedByTheirName) {
  TempDir tmp;
  test::write_file(tmp / "d1/x.txt", "x");
  test::write_file(tmp / "d1/s/y.txt", "y");
  test::write_file(tmp / "d2/x.txt", "x");
  test::write_file(tmp / "single.jsonl", "{}");
  const std::vector<fs::path> args{tmp / "d2", tmp / "single.jsonl", tmp / "d1/"};
  const auto files = discover_inputs(args);
  EXPECT_EQ(relative_paths(files),
            (std::vector<std::string>{"d1/s/y.txt", "d1/x.txt", "d2/x.txt", "single.jsonl"}));
  EXPECT_EQ(files[0].absolute_path, tmp / "d1/s/y.txt");
  // One file alone: its name.
  const std::vector<fs::path> one{tmp / "d1/s/y.txt"};
  EXPECT_EQ(relative_paths(discover_inputs(one)), (std::vector<std::string>{"y.txt"}));
}

TEST(IoDiscover, CollisionsAndBadPathsAreRefused) {
  TempDir tmp;
  test::write_file(tmp / "a/data/f.txt", "1");
  test::write_file(tmp / "b/data/f.txt", "2");
  const std::vector<fs::path> same_name{tmp / "a/data", tmp / "b/data"};
  EXPECT_THROW((void)discover_inputs(same_name), InputError);
  const std::vector<fs::path> twice{tmp / "a/data/f.txt", tmp / "a/data/f.txt"};
  EXPECT_THROW((void)discover_inputs(twice), InputError);
  const std::vector<fs::path> missing{tmp / "nope"};
  EXPECT_THROW((void)discover_inputs(missing), InputError);
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  const std::vector<fs::path> fifo{tmp / "fifo"};
  EXPECT_THROW((void)discover_inputs(fifo), InputError);
  EXPECT_THROW((void)discover_inputs(std::span<const fs::path>{}), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::io
