// Small helpers shared by the core tests.
#pragma once

#include <string>
#include <string_view>

namespace bloomshard::core::test {

/// prefix followed by the decimal text of n ("key-" + 42 -> "key-42").
template <class T>
std::string numbered(std::string_view prefix, T n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

}  // namespace bloomshard::core::test
