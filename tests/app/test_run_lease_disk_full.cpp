// The lock record cannot be written, for real: the lock file on a small
// tmpfs filled to its last page (opening LOCK needs an inode, which is
// free; its record needs a page, which is not). In process, so that the
// failure paths are counted by the coverage build (e2e.lease_disk_full
// takes them through the binary, whose abort writes no counters). Root
// only (mount); skipped elsewhere.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "app/run/run_lease.hpp"
#include "lease_dir_test.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class RunLeaseDiskFullTest : public LeaseDirTest {
 protected:
  void SetUp() override {
    LeaseDirTest::SetUp();
    mount_ = dir_ / "full";
    fs::create_directories(mount_);
    if (::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=64k") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs (not root?): " << std::strerror(errno);
    }
    mounted_ = true;
    lock_ = mount_ / "LOCK";
    fill();
  }
  void TearDown() override {
    if (mounted_) ::umount(mount_.c_str());
    LeaseDirTest::TearDown();
  }

  // Writes page after page until the file system refuses one.
  void fill() const {
    std::ofstream filler(mount_ / "_filler", std::ios::binary);
    const std::vector<char> page(4096, 'x');
    for (int i = 0; i < 1024 && filler; ++i) {
      filler.write(page.data(), static_cast<std::streamsize>(page.size()));
      filler.flush();
    }
    ASSERT_EQ(fs::space(mount_).available, 0U) << "the tmpfs is not full";
  }

  fs::path mount_;
  fs::path lock_;
  bool mounted_ = false;
};

TEST_F(RunLeaseDiskFullTest, EitherModeRefusesNamingTheLockFileAndThenStartsOnceFreed) {
  for (const FencingMode mode : {FencingMode::kFcntl, FencingMode::kLease}) {
    LeaseRecord holder;
    try {
      (void)RunLease::acquire(lock_, mode, 0, holder);
      ADD_FAILURE() << "a lease was taken with no space for its record";
    } catch (const std::system_error& e) {
      EXPECT_EQ(e.code().value(), ENOSPC) << e.what();
      EXPECT_NE(std::string(e.what()).find("cannot write the lock file '" + lock_.string() + "'"),
                std::string::npos)
          << e.what();
    }
  }
  // The empty LOCK the refused starts left is no record: nobody holds it.
  fs::remove(mount_ / "_filler");
  LeaseRecord holder;
  std::optional<RunLease> lease = RunLease::acquire(lock_, FencingMode::kFcntl, 0, holder);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->epoch(), 1U);
  EXPECT_TRUE(lease->uses_fcntl());
}

}  // namespace
}  // namespace bloomshard::app
