// Links the whole installed stack (app -> io -> comm -> core, MPI, HDF5,
// Boost) and prints the saved-format identifiers.
#include <iostream>

#include "app/cli/version.hpp"

int main() {
  std::cout << bloomshard::app::version_text();
  return bloomshard::app::tool_version().empty() ? 1 : 0;
}
