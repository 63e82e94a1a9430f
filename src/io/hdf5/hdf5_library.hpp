// Which HDF5 this build was compiled against and which one it runs with,
// for `bloomshard version` and bug reports.
#pragma once

#include <string>

namespace bloomshard::io {

/// "1.10.8 (parallel)": the headers compiled against.
[[nodiscard]] std::string hdf5_build_version();

/// H5get_libversion: the library actually loaded.
[[nodiscard]] std::string hdf5_library_version();

}  // namespace bloomshard::io
