// The store's FileSource over HDF5 (io/hdf5/hdf5_file_source.hpp).
#include "io/hdf5/hdf5_file_source.hpp"

#include "io/hdf5/hdf5_read.hpp"

namespace bloomshard::io {
namespace {

// The object attributes live on: the file (root group) or a dataset.
class Object {
 public:
  Object(hid_t file, const std::string& path) : id_(file) {
    if (path != "/") {
      dataset_ = open_dataset(file, path);
      id_ = dataset_.get();
    }
  }
  [[nodiscard]] hid_t get() const noexcept { return id_; }

 private:
  Hid dataset_;
  hid_t id_;
};

}  // namespace

bool Hdf5FileSource::has_attr(const std::string& object, const char* attr) const {
  return io::has_attr(Object(file_, object).get(), attr);
}

std::uint64_t Hdf5FileSource::attr_u64(const std::string& object, const char* attr) const {
  return read_attr_u64(Object(file_, object).get(), attr);
}

double Hdf5FileSource::attr_f64(const std::string& object, const char* attr) const {
  return read_attr_f64(Object(file_, object).get(), attr);
}

std::string Hdf5FileSource::attr_string(const std::string& object, const char* attr) const {
  return read_attr_string(Object(file_, object).get(), attr);
}

bool Hdf5FileSource::has_link(const std::string& path) const { return io::has_link(file_, path); }

std::vector<std::uint64_t> Hdf5FileSource::dims(const std::string& dataset) const {
  return dataset_dims(open_dataset(file_, dataset).get());
}

std::uint64_t Hdf5FileSource::storage_bytes(const std::string& dataset) const {
  return H5Dget_storage_size(open_dataset(file_, dataset).get());
}

std::vector<std::uint64_t> Hdf5FileSource::read_u64(const std::string& dataset) const {
  return read_all_u64(open_dataset(file_, dataset).get(), dxpl_);
}

std::optional<std::string> Hdf5FileSource::read_fixed_string(const std::string& dataset) const {
  Hid d = open_dataset(file_, dataset);
  Hid type = datatype_hid(H5Dget_type(d.get()), "H5Dget_type");
  if (H5Tget_class(type.get()) != H5T_STRING ||
      check_h5(H5Tis_variable_str(type.get()), "H5Tis_variable_str") > 0) {
    return std::nullopt;
  }
  // One string: the caller checked that the dataset holds exactly one.
  std::string buf(H5Tget_size(type.get()), '\0');
  check_h5(H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, dxpl_, buf.data()),
           ("H5Dread(" + dataset + ")").c_str());
  const std::size_t nul = buf.find('\0');
  if (nul != std::string::npos) buf.resize(nul);
  return buf;
}

store::DatasetPlacement Hdf5FileSource::placement(const std::string& dataset) const {
  Hid d = open_dataset(file_, dataset);
  return {dataset_is_contiguous(d.get()), dataset_file_offset(d.get())};
}

}  // namespace bloomshard::io
