// create_directories_durably and replace_file_durably: what they leave on
// disk (their fsync order is checked by faults.crash_states, which replays a
// real job's calls under the strict POSIX model).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/durable/durable_entries.hpp"
#include "io/errors.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

TEST(IoDurableEntries, CreatesMissingDirectoriesAndToleratesExistingOnes) {
  TempDir dir;
  create_directories_durably(dir / "a/b/c");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "a/b/c"));
  create_directories_durably(dir / "a/b/c");  // all there: no-op
  create_directories_durably(dir / "a/b/d");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "a/b/d"));
}

TEST(IoDurableEntries, ADirectoryInTheWayIsNamed) {
  TempDir dir;
  test::write_file(dir / "file", "x");
  try {
    create_directories_durably(dir / "file/sub");
    FAIL() << "created a directory under a file";
  } catch (const OutputError& e) {
    EXPECT_EQ(e.path(), (dir / "file/sub").string());
  }
}

TEST(IoDurableEntries, ReplacesAFileWholeAndLeavesNoTemporary) {
  TempDir dir;
  replace_file_durably(dir / "marker.json", "first\n");
  EXPECT_EQ(test::read_file(dir / "marker.json"), "first\n");
  replace_file_durably(dir / "marker.json", "second, longer\n");
  EXPECT_EQ(test::read_file(dir / "marker.json"), "second, longer\n");
  replace_file_durably(dir / "marker.json", "");
  EXPECT_EQ(test::read_file(dir / "marker.json"), "");
  EXPECT_FALSE(std::filesystem::exists(dir / "marker.json.tmp"));
}

TEST(IoDurableEntries, AFailedReplaceNamesTheFileAndKeepsTheOldOne) {
  TempDir dir;
  replace_file_durably(dir / "m", "old");
  std::filesystem::create_directories(dir / "m.tmp");  // the temporary cannot be created
  try {
    replace_file_durably(dir / "m", "new");
    FAIL() << "replaced through a directory";
  } catch (const OutputError& e) {
    EXPECT_EQ(e.path(), (dir / "m.tmp").string());
  }
  EXPECT_EQ(test::read_file(dir / "m"), "old");
  EXPECT_THROW(replace_file_durably(dir / "no/such/dir/m", "x"), OutputError);
}

}  // namespace
}  // namespace bloomshard::io
