// The read-only mapping of a checkpoint file under its io name: the saved
// format lives in the store layer (store/file_mapping.hpp).
#pragma once

#include "bloomshard/store/file_mapping.hpp"

namespace bloomshard::io {

using store::FileMapping;

}  // namespace bloomshard::io
