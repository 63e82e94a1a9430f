// The lockstep layout's shared outputs (io/output/positional_output.hpp):
// writes land at their offsets from the background thread, and on a local
// file system they wait for the file's flock, so that ranks of one node
// that write one file wait for each other asleep
// (io/output/local_write_lock.hpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io/durable/owned_fd.hpp"
#include "io/output/local_write_lock.hpp"
#include "io/output/positional_output.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::read_file;
using test::TempDir;
using test::write_file;

// An fd of `path` opened apart from the output's, as another rank's.
int open_other(const std::filesystem::path& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

TEST(LocalFileSystem, KnowsTmpfsAndRefusesProc) {
  const OwnedFd shm(open_other("/dev/shm"));
  if (shm.fd >= 0) {
    EXPECT_TRUE(on_local_file_system(shm.fd));
  }
  const OwnedFd proc(open_other("/proc/self/status"));  // procfs: not a file system of data
  ASSERT_GE(proc.fd, 0);
  EXPECT_FALSE(on_local_file_system(proc.fd));
  EXPECT_FALSE(on_local_file_system(-1));
}

TEST(PositionalOutput, WritesAtOffsetsFromTheBackground) {
  TempDir dir;
  const auto path = dir / "out.jsonl";
  write_file(path, "");
  PositionalOutput out = PositionalOutput::open(path);
  const std::string block1 = "c\nd\n";
  out.write_in_background(4, {std::string_view(block1)}, {});
  out.wait();
  const std::string a = "a\n";
  const std::string b = "b\n";
  out.write_at(0, std::vector<std::string_view>{a, b});
  out.close();
  EXPECT_EQ(read_file(path), "a\nb\nc\nd\n");
}

// An empty output whose flock another open of it (another rank's) holds.
class PositionalOutputLocked : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(path_, "");
    other_ = std::make_unique<OwnedFd>(open_other(path_));
    ASSERT_GE(other_->fd, 0);
    if (!on_local_file_system(other_->fd)) {
      GTEST_SKIP() << "/tmp is not on a local file system";
    }
    ASSERT_EQ(::flock(other_->fd, LOCK_EX), 0);
  }

  TempDir dir_;
  std::filesystem::path path_ = dir_ / "out.jsonl";
  std::unique_ptr<OwnedFd> other_;
};

TEST_F(PositionalOutputLocked, WaitsForTheFlockOfAnotherWriterOnALocalFileSystem) {
  const auto& path = path_;
  const OwnedFd& other = *other_;
  PositionalOutput out = PositionalOutput::open(path);
  const std::string line = "held\n";
  out.write_in_background(0, {std::string_view(line)}, {});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(read_file(path), "") << "the write went past another writer's lock";
  ASSERT_EQ(::flock(other.fd, LOCK_UN), 0);
  out.wait();
  EXPECT_EQ(read_file(path), line);
  // Released after the write: another writer takes it at once.
  EXPECT_EQ(::flock(other.fd, LOCK_EX | LOCK_NB), 0);
  ASSERT_EQ(::flock(other.fd, LOCK_UN), 0);
  out.close();
}

// A holder that never lets go (a rank stopped between its flock and its
// write) delays a write by about a second, never hangs it.
TEST_F(PositionalOutputLocked, WritesWithoutTheLockAfterASecondOfWaiting) {
  const auto& path = path_;
  PositionalOutput out = PositionalOutput::open(path);
  const std::string line = "late\n";
  const auto start = std::chrono::steady_clock::now();
  out.write_at(0, std::vector<std::string_view>{line});
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(read_file(path), line);
  EXPECT_GE(waited, std::chrono::milliseconds(900));
  EXPECT_LT(waited, std::chrono::seconds(10));
  out.close();
}

TEST(LocalWriteLock, HeldOnlyWhenEnabled) {
  TempDir dir;
  const auto path = dir / "f";
  write_file(path, "");
  const OwnedFd a(open_other(path));
  const OwnedFd b(open_other(path));
  {
    const LocalWriteLock off(a.fd, false);
    EXPECT_FALSE(off.held());
    EXPECT_EQ(::flock(b.fd, LOCK_EX | LOCK_NB), 0);
    ASSERT_EQ(::flock(b.fd, LOCK_UN), 0);
  }
  {
    const LocalWriteLock on(a.fd, true);
    EXPECT_TRUE(on.held());
    EXPECT_NE(::flock(b.fd, LOCK_EX | LOCK_NB), 0);
  }
  EXPECT_EQ(::flock(b.fd, LOCK_EX | LOCK_NB), 0);
}

}  // namespace
}  // namespace bloomshard::io
