// The name of the node this process runs on, for messages that must say
// where a rank failed and for the run lease's holder record.
#pragma once

#include <string>

namespace bloomshard::app {

/// gethostname(), or "?" when it fails (a message never fails for want of it).
[[nodiscard]] std::string host_name();

}  // namespace bloomshard::app
