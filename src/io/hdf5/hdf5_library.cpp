#include "io/hdf5/hdf5_library.hpp"

#include <hdf5.h>

namespace bloomshard::io {

std::string hdf5_build_version() {
  std::string text = std::to_string(H5_VERS_MAJOR) + "." + std::to_string(H5_VERS_MINOR) + "." +
                     std::to_string(H5_VERS_RELEASE);
#if defined(H5_HAVE_PARALLEL)
  text += " (parallel)";
#else
  text += " (serial)";
#endif
  return text;
}

std::string hdf5_library_version() {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned release = 0;
  if (H5get_libversion(&major, &minor, &release) < 0) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace bloomshard::io
