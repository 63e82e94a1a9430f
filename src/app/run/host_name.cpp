#include "app/run/host_name.hpp"

#include <unistd.h>

namespace bloomshard::app {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

}  // namespace bloomshard::app
