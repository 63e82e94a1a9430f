// Checks of untrusted checkpoint metadata under their io names: the saved
// format lives in the store layer (store/validate.hpp).
#pragma once

#include "bloomshard/store/validate.hpp"

namespace bloomshard::io {

using store::check_offsets;
using store::check_run_list;
using store::checked_add;
using store::checked_mul;
using store::kMaxRunsPerGeneration;
using store::tier2_extents;
using store::Tier2Extents;

}  // namespace bloomshard::io
