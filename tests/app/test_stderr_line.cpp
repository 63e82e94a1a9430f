// write_stderr_line: the whole line in one write to fd 2, a newline added
// when missing. Checked through a pipe in place of stderr: one read() gets
// the whole line (a line written in pieces could come back in pieces).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "app/report/stderr_line.hpp"

namespace bloomshard::app {
namespace {

// Runs `write` with stderr redirected to a pipe; returns what one read() of
// the pipe gave.
template <class Write>
std::string one_read_of_stderr(Write write) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(fds[1], STDERR_FILENO);
  write();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fds[1]);
  std::string got(8192, '\0');
  const ssize_t n = ::read(fds[0], got.data(), got.size());
  ::close(fds[0]);
  got.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return got;
}

TEST(StderrLine, WholeLineInOneWriteWithItsNewline) {
  EXPECT_EQ(one_read_of_stderr([] { write_stderr_line("rank 1 of 2 on vm: error: full"); }),
            "rank 1 of 2 on vm: error: full\n");
  EXPECT_EQ(one_read_of_stderr([] { write_stderr_line("ends with its own\n"); }),
            "ends with its own\n");
  const std::string long_line(3000, 'x');  // under PIPE_BUF: one atomic pipe write
  EXPECT_EQ(one_read_of_stderr([&] { write_stderr_line(long_line); }), long_line + "\n");
}

}  // namespace
}  // namespace bloomshard::app
