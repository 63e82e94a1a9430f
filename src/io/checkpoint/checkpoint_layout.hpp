// The checkpoint file layout's names and version, under their io names: the
// saved format lives in the store layer (store/layout.hpp).
#pragma once

#include "bloomshard/store/layout.hpp"

namespace bloomshard::io {

using store::kCheckpointFormatVersion;
using store::kOldestReadableFormatVersion;
namespace ckpt = store::ckpt;

}  // namespace bloomshard::io
