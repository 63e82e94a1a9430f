#include "comm/mpi_library.hpp"

#include <mpi.h>

namespace bloomshard::comm {

std::string mpi_build_version() {
  std::string text = "MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION);
#if defined(OMPI_MAJOR_VERSION)
  text += ", Open MPI " + std::to_string(OMPI_MAJOR_VERSION) + "." +
          std::to_string(OMPI_MINOR_VERSION) + "." + std::to_string(OMPI_RELEASE_VERSION);
#endif
  return text;
}

std::string mpi_library_version() {
  // One of the few MPI calls allowed before MPI_Init (MPI 3.0, 8.1.1).
  char buffer[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(buffer, &length) != MPI_SUCCESS) return "unknown";
  std::string text(buffer, static_cast<std::size_t>(length));
  if (const auto end = text.find_first_of(",\n"); end != std::string::npos) text.resize(end);
  return text;
}

}  // namespace bloomshard::comm
