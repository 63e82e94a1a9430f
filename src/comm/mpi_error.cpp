#include "comm/mpi_error.hpp"

#include <mpi.h>

#include <utility>

namespace bloomshard::comm {
namespace {

// MPI_Error_string and MPI_Error_class are among the few calls allowed
// before MPI_Init and after MPI_Finalize, so this works at any time.
std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS || len <= 0) {
    return "unknown MPI error";
  }
  return std::string(text, static_cast<std::size_t>(len));
}

int error_class_of(int code) {
  int cls = MPI_ERR_UNKNOWN;
  if (MPI_Error_class(code, &cls) != MPI_SUCCESS) return MPI_ERR_UNKNOWN;
  return cls;
}

}  // namespace

MpiError::MpiError(int code, std::string call)
    : std::runtime_error(call + " failed: " + error_text(code) + " (code " + std::to_string(code) +
                         ")"),
      code_(code),
      error_class_(error_class_of(code)),
      call_(std::move(call)),
      mpi_message_(error_text(code)) {}

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw MpiError(rc, call);
}

}  // namespace bloomshard::comm
