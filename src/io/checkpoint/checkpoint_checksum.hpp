// Per-slice checksums of a checkpoint under their io names: the saved
// format lives in the store layer (store/checksum.hpp).
#pragma once

#include "bloomshard/store/checksum.hpp"

namespace bloomshard::io {

using store::bloom_slice_checksum;
using store::manifest_checksum;
using store::tier2_slice_checksum;

}  // namespace bloomshard::io
