// The store's view of one open checkpoint file: "read attribute A of
// object O", "read dataset D", "where does D lie in the file". The index
// reader (store/file_index.hpp) and the tier-2 slice views
// (store/tier2_slices.hpp) read through it, so the saved format's code has
// no HDF5 and no MPI in it; io/hdf5/hdf5_file_source.hpp is the HDF5 one, built
// against parallel HDF5 in io and against serial HDF5 in the Python module.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bloomshard::store {

/// Where a dataset's data lies in its file.
struct DatasetPlacement {
  bool contiguous = false;
  std::optional<std::uint64_t> address;  ///< none when zero-sized or never allocated
};

/// Read access to the objects of one file. `object` is "/" (the root
/// group) or a dataset path such as "/bloom/layer_0". Implementations throw
/// their own error type (naming the call) when a read fails; the callers
/// check existence first (has_attr, has_link), so a missing object is
/// reported in the format's words, not the library's.
class FileSource {
 public:
  virtual ~FileSource() = default;
  [[nodiscard]] virtual bool has_attr(const std::string& object, const char* attr) const = 0;
  /// A numeric attribute holding exactly one value, converted.
  [[nodiscard]] virtual std::uint64_t attr_u64(const std::string& object,
                                               const char* attr) const = 0;
  [[nodiscard]] virtual double attr_f64(const std::string& object, const char* attr) const = 0;
  [[nodiscard]] virtual std::string attr_string(const std::string& object,
                                                const char* attr) const = 0;
  /// True if `path` names an object (its parents exist).
  [[nodiscard]] virtual bool has_link(const std::string& path) const = 0;
  [[nodiscard]] virtual std::vector<std::uint64_t> dims(const std::string& dataset) const = 0;
  /// Bytes the dataset's data occupies in the file.
  [[nodiscard]] virtual std::uint64_t storage_bytes(const std::string& dataset) const = 0;
  /// A whole 1-D dataset as uint64 values (the caller bounds its length).
  [[nodiscard]] virtual std::vector<std::uint64_t> read_u64(const std::string& dataset) const = 0;
  /// The text of a dataset of one fixed-length string (up to its first
  /// NUL), or nullopt if its type is not a fixed-length string.
  [[nodiscard]] virtual std::optional<std::string> read_fixed_string(
      const std::string& dataset) const = 0;
  [[nodiscard]] virtual DatasetPlacement placement(const std::string& dataset) const = 0;
};

}  // namespace bloomshard::store
