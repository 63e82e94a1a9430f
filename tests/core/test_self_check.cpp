// The CLI's self-check passes on a healthy build and reports its figures.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/self_check.hpp"

namespace bloomshard::core {
namespace {

TEST(SelfCheck, PassesAndReports) {
  const SelfCheckReport r = run_self_check();
  EXPECT_TRUE(r.ok) << r.text;
  EXPECT_NE(r.text.find("measured FPR"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("self-check ok"), std::string::npos) << r.text;
  std::printf("%s", r.text.c_str());
}

}  // namespace
}  // namespace bloomshard::core
