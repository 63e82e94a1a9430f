// GoogleTest main for MPI test binaries: MPI lives in an Environment around
// all tests, only rank 0 prints the usual report (other ranks print just
// their failures, tagged with the rank), and the exit code is the result
// reduced over all ranks, so a failure on any rank fails the run everywhere.
// Every rank must run the same tests in the same order (same filter; no
// --gtest_shuffle without an explicit --gtest_random_seed).
#include <gtest/gtest.h>

#include <cstdio>

#include "comm/communicator.hpp"
#include "comm/environment.hpp"

namespace {

class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  bloomshard::comm::Environment env(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  if (env.rank() != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(env.rank()));
  }
  const int local_result = RUN_ALL_TESTS();
  const bool all_passed = bloomshard::comm::Communicator().all(local_result == 0);
  if (env.rank() == 0 && !all_passed && local_result == 0) {
    std::fprintf(stderr, "FAILED on another rank (see its [rank N] lines)\n");
  }
  return all_passed ? 0 : 1;
}
