// A checkpoint file's summary, read in one process (io/checkpoint/checkpoint_summary.hpp).
#include "io/checkpoint/checkpoint_summary.hpp"

#include <system_error>

#include "bloomshard/store/file_index.hpp"
#include "io/checkpoint/checkpoint_error.hpp"
#include "io/hdf5/hdf5_file_source.hpp"
#include "io/hdf5/hdf5_read.hpp"

namespace bloomshard::io {

CheckpointSummary read_checkpoint_summary(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw CheckpointError(file.string() + ": no such checkpoint file");
  }
  return with_file_context(file, [&] {
    quiet_hdf5_errors();
    Hid f = open_serial_file(file);
    return store::read_generation_index(Hdf5FileSource(f.get(), H5P_DEFAULT), file.string())
        .summary;
  });
}

}  // namespace bloomshard::io
