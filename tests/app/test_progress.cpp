#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "app/report/progress.hpp"

namespace bloomshard::app {
namespace {

constexpr ProgressSnapshot kHalfway{1'500'000, 450'000, 0, 50ULL << 20, 100ULL << 20};

TEST(ProgressBar, ShowsFractionCountsAndEta) {
  const std::string bar = ProgressReporter::format_bar(kHalfway, 10.0, 20);
  EXPECT_EQ(bar.rfind("[##########..........]", 0), 0U) << bar;
  EXPECT_NE(bar.find(" 50.0%"), std::string::npos) << bar;
  EXPECT_NE(bar.find("1.5M rec"), std::string::npos) << bar;
  EXPECT_NE(bar.find("150.0k rec/s"), std::string::npos) << bar;
  EXPECT_NE(bar.find("dup 30.0%"), std::string::npos) << bar;
  EXPECT_NE(bar.find("ETA 10s"), std::string::npos) << bar;
  EXPECT_EQ(bar.find('\n'), std::string::npos);
}

TEST(ProgressBar, ClampsOutOfRangeFractions) {
  const ProgressSnapshot over{10, 0, 0, 200, 100};
  EXPECT_EQ(ProgressReporter::format_bar(over, 1.0, 4).rfind("[####]", 0), 0U);
  const ProgressSnapshot unknown{10, 0, 0, 0, 0};
  EXPECT_EQ(ProgressReporter::format_bar(unknown, 1.0, 4).rfind("[....]", 0), 0U);
}

TEST(ProgressReporter, BarRedrawsInPlaceAndEndsWithOneNewline) {
  std::ostringstream out;
  {
    ProgressReporter p(true, 0, ProgressStyle::kBar, out);
    EXPECT_TRUE(p.bar());
    p.maybe_report(kHalfway);  // too early: nothing yet
    EXPECT_TRUE(out.str().empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    p.maybe_report(kHalfway);
    EXPECT_EQ(out.str().rfind("\r[", 0), 0U) << out.str();
    EXPECT_EQ(out.str().find('\n'), std::string::npos);
    p.finish();
    p.finish();
  }  // the destructor adds nothing after finish()
  const std::string text = out.str();
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << text;
  EXPECT_NE(text.find("\x1b[K"), std::string::npos);
}

TEST(ProgressReporter, ShortJobStillShowsItsFinalBar) {
  std::ostringstream out;
  ProgressReporter p(true, 0, ProgressStyle::kBar, out);
  p.maybe_report({10, 0, 0, 100, 100});
  p.finish();
  EXPECT_NE(out.str().find("100.0%"), std::string::npos) << out.str();
}

TEST(ProgressReporter, LinesAndDisabledReporters) {
  std::ostringstream lines;
  std::ostringstream silent;
  {
    ProgressReporter p(true, 1e-9, ProgressStyle::kLines, lines);
    ProgressReporter off(false, 1e-9, ProgressStyle::kBar, silent);
    EXPECT_FALSE(p.bar());
    EXPECT_FALSE(off.bar());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    p.maybe_report(kHalfway);
    off.maybe_report(kHalfway);
  }
  EXPECT_EQ(lines.str().rfind("progress: 1500000 records", 0), 0U) << lines.str();
  EXPECT_EQ(lines.str().find('\r'), std::string::npos);
  EXPECT_TRUE(silent.str().empty());
}

TEST(ProgressStyleName, ParsesTheThreeNames) {
  EXPECT_EQ(parse_progress_style("auto"), ProgressStyle::kAuto);
  EXPECT_EQ(parse_progress_style("bar"), ProgressStyle::kBar);
  EXPECT_EQ(parse_progress_style("lines"), ProgressStyle::kLines);
  EXPECT_FALSE(parse_progress_style("fancy"));
}

}  // namespace
}  // namespace bloomshard::app
