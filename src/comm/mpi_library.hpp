// Which MPI this build was compiled against and which one it runs with,
// for `bloomshard version` and bug reports. Neither needs MPI initialized.
#pragma once

#include <string>

namespace bloomshard::comm {

/// The MPI standard and implementation version of the headers compiled
/// against, e.g. "MPI 3.1, Open MPI 4.1.4".
[[nodiscard]] std::string mpi_build_version();

/// MPI_Get_library_version's first line (the library actually loaded).
[[nodiscard]] std::string mpi_library_version();

}  // namespace bloomshard::comm
