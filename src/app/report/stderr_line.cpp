#include "app/report/stderr_line.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <string>

namespace bloomshard::app {

void write_stderr_line(std::string_view line) noexcept {
  try {
    std::string text(line);
    if (!text.ends_with('\n')) text += '\n';
    // Whatever the C++ and C streams still hold goes first, in order.
    std::cerr.flush();
    std::fflush(stderr);
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t n = ::write(STDERR_FILENO, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  } catch (...) {
    // Out of memory for the copy: nothing sensible is left to do.
  }
}

}  // namespace bloomshard::app
