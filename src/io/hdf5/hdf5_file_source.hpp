// The store's FileSource over an open HDF5 file: the saved format's index
// reader and slice views (store/) read a checkpoint through it. Serial or
// collective as the file was opened (the transfer list decides how the few
// whole-dataset reads go). No MPI of its own: the Python module compiles it
// against serial HDF5.
#pragma once

#include <hdf5.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bloomshard/store/file_source.hpp"
#include "io/checkpoint/checkpoint_error.hpp"
#include "io/hdf5/hdf5_call.hpp"

namespace bloomshard::io {

class Hdf5FileSource final : public store::FileSource {
 public:
  /// Reads `file` (kept open by the caller) with transfer list `dxpl`
  /// (H5P_DEFAULT when serial; collective_dxpl() makes every rank call).
  Hdf5FileSource(hid_t file, hid_t dxpl) noexcept : file_(file), dxpl_(dxpl) {}

  bool has_attr(const std::string& object, const char* attr) const override;
  std::uint64_t attr_u64(const std::string& object, const char* attr) const override;
  double attr_f64(const std::string& object, const char* attr) const override;
  std::string attr_string(const std::string& object, const char* attr) const override;
  bool has_link(const std::string& path) const override;
  std::vector<std::uint64_t> dims(const std::string& dataset) const override;
  std::uint64_t storage_bytes(const std::string& dataset) const override;
  std::vector<std::uint64_t> read_u64(const std::string& dataset) const override;
  std::optional<std::string> read_fixed_string(const std::string& dataset) const override;
  store::DatasetPlacement placement(const std::string& dataset) const override;

 private:
  hid_t file_;
  hid_t dxpl_;
};

/// Runs f(); an Hdf5Error becomes CheckpointError "<file>: cannot read
/// checkpoint: <HDF5's text>".
template <class F>
auto with_file_context(const std::filesystem::path& file, F&& f) {
  try {
    return f();
  } catch (const Hdf5Error& e) {
    throw CheckpointError(file.string() + ": cannot read checkpoint: " + e.what());
  }
}

}  // namespace bloomshard::io
