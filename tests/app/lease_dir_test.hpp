// The fixture of the lock-file tests (test_run_lease*.cpp): a fresh
// directory per test process holding the path of a LOCK file, and a forked
// child for "the other attempt" (fcntl locks are per process, so a second
// holder must be another process).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace bloomshard::app {

class LeaseDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("bloomshard-lease-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    file_ = dir_ / "LOCK";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `fn` in a forked child; returns its exit status (0..255, or -1).
  template <class Fn>
  static int in_child(Fn fn) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(fn());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::filesystem::path dir_;
  std::filesystem::path file_;
};

}  // namespace bloomshard::app
