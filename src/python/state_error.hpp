// The one exception of the read-only state reader (the Python module raises
// it as bloomshard.StateError): a state that cannot be opened or used.
#pragma once

#include <stdexcept>

namespace bloomshard::python {

/// what() names the file (and dataset or slice) and the cause.
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace bloomshard::python
