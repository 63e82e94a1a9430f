// MpiError and check_mpi, including a real MPI call that fails under the
// MPI_ERRORS_RETURN handler the Environment installs.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "comm/communicator.hpp"
#include "comm/mpi_error.hpp"

namespace bloomshard::comm {
namespace {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

TEST(MpiError, SuccessDoesNotThrow) { EXPECT_NO_THROW(check_mpi(MPI_SUCCESS, "MPI_Barrier")); }

TEST(MpiError, CarriesCodeCallAndMpiText) {
  try {
    check_mpi(MPI_ERR_COUNT, "MPI_Fake");
    FAIL() << "no throw";
  } catch (const MpiError& e) {
    EXPECT_EQ(e.code(), MPI_ERR_COUNT);
    EXPECT_EQ(e.error_class(), MPI_ERR_COUNT);
    EXPECT_EQ(e.call(), "MPI_Fake");
    EXPECT_EQ(e.mpi_message(), mpi_error_string(MPI_ERR_COUNT));
    EXPECT_FALSE(e.mpi_message().empty());
    const std::string what = e.what();
    EXPECT_NE(what.find("MPI_Fake"), std::string::npos) << what;
    EXPECT_NE(what.find(e.mpi_message()), std::string::npos) << what;
  }
}

TEST(MpiError, RealCallWithInvalidRootThrowsInsteadOfAborting) {
  Communicator comm;
  try {
    (void)comm.broadcast("x", comm.size());  // root out of range on every rank
    FAIL() << "no throw";
  } catch (const MpiError& e) {
    EXPECT_EQ(e.error_class(), MPI_ERR_ROOT) << e.what();
    EXPECT_EQ(e.call(), "MPI_Bcast");
    EXPECT_EQ(e.mpi_message(), mpi_error_string(e.code()));
  }
  comm.barrier();  // the failed call left no rank behind
}

TEST(MpiError, IsARuntimeError) {
  EXPECT_THROW(check_mpi(MPI_ERR_ARG, "MPI_Fake"), std::runtime_error);
}

}  // namespace
}  // namespace bloomshard::comm
