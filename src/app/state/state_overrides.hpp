// The options a saved state fixes for the rest of its life: a resumed or
// incremental run goes on with the state's filter parameters whatever the
// job asks. Asking for another value is not an error (the same job file
// serves every run of a chain), but it must not pass silently: rank 0 says
// once, per option, which value is used.
#pragma once

#include <string>
#include <vector>

#include "app/options/dedup_options.hpp"
#include "bloomshard/core/scalable_bloom.hpp"

namespace bloomshard::app {

/// One line per option the user set explicitly (DedupConfig::explicit_options)
/// to a value the state's `saved` parameters override: --fpr, --capacity,
/// --slices ("the state's --fpr 0.001 is used; this job asked for 0.01").
/// Growth and tightening are fixed by the state too, but no option sets them.
[[nodiscard]] std::vector<std::string> state_override_notes(const DedupConfig& config,
                                                            const core::ScalableBloomParams& saved);

}  // namespace bloomshard::app
