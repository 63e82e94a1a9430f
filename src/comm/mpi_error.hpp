// Checked MPI calls: every MPI return code goes through check_mpi(), which
// turns a failure into an MpiError carrying the call's name, the MPI error
// code and MPI_Error_string's text. The Environment installs
// MPI_ERRORS_RETURN on MPI_COMM_WORLD so that errors come back as codes at
// all (the MPI default, MPI_ERRORS_ARE_FATAL, kills the job without a word
// about which call failed).
#pragma once

#include <stdexcept>
#include <string>

namespace bloomshard::comm {

/// A failed MPI call. what() reads "<call> failed: <MPI_Error_string> (code N)".
class MpiError : public std::runtime_error {
 public:
  /// Builds the message from `code` (MPI_Error_string) and `call`.
  MpiError(int code, std::string call);

  /// The MPI error code the call returned.
  [[nodiscard]] int code() const noexcept { return code_; }
  /// The MPI error class of code() (MPI_ERR_COUNT, MPI_ERR_ROOT, ...).
  [[nodiscard]] int error_class() const noexcept { return error_class_; }
  /// Name of the failed call, e.g. "MPI_Alltoallv".
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  /// MPI_Error_string's text for code() alone, without the call name.
  [[nodiscard]] const std::string& mpi_message() const noexcept { return mpi_message_; }

 private:
  int code_;
  int error_class_;
  std::string call_;
  std::string mpi_message_;
};

/// Throws MpiError(rc, call) unless rc == MPI_SUCCESS.
void check_mpi(int rc, const char* call);

}  // namespace bloomshard::comm
