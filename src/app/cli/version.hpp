// The tool's version and the identifiers of everything it saves, printed by
// `bloomshard version` and recorded in metrics and checkpoints.
#pragma once

#include <string>
#include <string_view>

namespace bloomshard::app {

/// The release version, e.g. "0.1.0".
[[nodiscard]] std::string_view tool_version() noexcept;

/// Several lines: version, hash scheme, Bloom layout, normalization.
[[nodiscard]] std::string version_text();

}  // namespace bloomshard::app
