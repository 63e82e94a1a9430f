// reserve_space, the space check a checkpoint makes before HDF5 starts: a
// file system that refuses the reservation is reported (the text names the
// reason and the dir), one that has room is not. The refusal is the
// kernel's own: posix_fallocate past this process's RLIMIT_FSIZE fails
// with EFBIG, as past a full disk with ENOSPC, on any file system that
// implements fallocate (checked first: the test skips where none does).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <string>

#include "io/checkpoint/checkpoint_commit.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

// Lowers RLIMIT_FSIZE for its lifetime (SIGXFSZ ignored, so the call fails
// with EFBIG instead of killing the test); restores both after.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lower = old_;
    lower.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &lower) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool ok() const { return ok_; }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = SIG_DFL;
  bool ok_ = false;
};

TEST(CheckpointReserveSpace, RoomIsNoError) {
  TempDir dir;
  EXPECT_EQ(reserve_space(dir.path(), 1 << 20), "");
}

// Whether `dir`'s file system implements fallocate (tmpfs, ext4, xfs do).
bool has_fallocate(const TempDir& dir) {
  const std::string probe = (dir.path() / "probe").string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const int rc = ::posix_fallocate(fd, 0, 4096);
  ::close(fd);
  ::unlink(probe.c_str());
  return rc != EOPNOTSUPP && rc != EINVAL;
}

TEST(CheckpointReserveSpace, AReservationTheFileSystemRefusesIsReportedNamingTheDir) {
  TempDir dir;
  if (!has_fallocate(dir))
    GTEST_SKIP() << "no fallocate on " << dir.path() << ": nothing to refuse";
  std::string err;
  {
    FileSizeLimit limit(1 << 20);
    ASSERT_TRUE(limit.ok());
    err = reserve_space(dir.path(), std::uint64_t{64} << 20);
  }
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  EXPECT_NE(err.find("about 64 MiB in " + dir.path().string()), std::string::npos) << err;
}

}  // namespace
}  // namespace bloomshard::io
