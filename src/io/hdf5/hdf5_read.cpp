// Serial reads of an HDF5 file (hdf5_read.hpp): nothing here needs MPI,
// so the Python module compiles this file against serial HDF5.
#include "io/hdf5/hdf5_read.hpp"

#include <string>
#include <vector>

namespace bloomshard::io {

Hid open_serial_file(const std::filesystem::path& path) {
  quiet_hdf5_errors();
  return file_hid(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
}

Hid open_dataset(hid_t loc, const std::string& name) {
  return dataset_hid(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), "H5Dopen2");
}

bool has_link(hid_t loc, const std::string& name) {
  // H5Lexists needs every parent to exist: check the path one level at a time.
  std::string prefix;
  std::size_t pos = 0;
  while (pos <= name.size()) {
    const std::size_t slash = name.find('/', pos);
    const std::size_t end = slash == std::string::npos ? name.size() : slash;
    prefix = name.substr(0, end);
    if (!prefix.empty() && prefix != "/") {
      if (check_h5(H5Lexists(loc, prefix.c_str(), H5P_DEFAULT), "H5Lexists") <= 0) return false;
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return true;
}

std::vector<std::uint64_t> dataset_dims(hid_t dset) {
  Hid space = dataspace_hid(H5Dget_space(dset), "H5Dget_space");
  const int rank = check_h5(H5Sget_simple_extent_ndims(space.get()), "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check_h5(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr),
           "H5Sget_simple_extent_dims");
  return {dims.begin(), dims.end()};
}

bool dataset_is_contiguous(hid_t dset) {
  Hid dcpl = plist_hid(H5Dget_create_plist(dset), "H5Dget_create_plist");
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  check_h5(layout, "H5Pget_layout");
  return layout == H5D_CONTIGUOUS;
}

std::optional<std::uint64_t> dataset_file_offset(hid_t dset) {
  const haddr_t addr = H5Dget_offset(dset);
  if (addr == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(addr);
}

std::vector<std::uint64_t> read_all_u64(hid_t dset, hid_t dxpl) {
  const std::vector<std::uint64_t> dims = dataset_dims(dset);
  // Hdf5Error, not a logic error: the shape comes from the file.
  if (dims.size() != 1) throw Hdf5Error("read_all_u64", "dataset is not 1-D");
  std::vector<std::uint64_t> out(static_cast<std::size_t>(dims[0]));
  if (out.empty()) return out;
  check_h5(H5Dread(dset, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, dxpl, out.data()), "H5Dread");
  return out;
}

bool has_attr(hid_t obj, const char* name) {
  return check_h5(H5Aexists(obj, name), "H5Aexists") > 0;
}

namespace {

// H5Aread writes every element of an attribute: one read into a single value
// (or one string) is safe only for an attribute holding exactly one, which a
// damaged or hostile file need not have (found by fuzz_checkpoint_loader).
void require_one_value(hid_t attr, const char* name) {
  Hid space = dataspace_hid(H5Aget_space(attr), "H5Aget_space");
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n != 1) {
    throw Hdf5Error("H5Aread", std::string("attribute ") + name + " holds " + std::to_string(n) +
                                   " values, expected one");
  }
}

}  // namespace

std::uint64_t read_attr_u64(hid_t obj, const char* name) {
  Hid attr = attribute_hid(H5Aopen(obj, name, H5P_DEFAULT), "H5Aopen");
  require_one_value(attr.get(), name);
  std::uint64_t value = 0;
  check_h5(H5Aread(attr.get(), H5T_NATIVE_UINT64, &value), "H5Aread");
  return value;
}

double read_attr_f64(hid_t obj, const char* name) {
  Hid attr = attribute_hid(H5Aopen(obj, name, H5P_DEFAULT), "H5Aopen");
  require_one_value(attr.get(), name);
  double value = 0;
  check_h5(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), "H5Aread");
  return value;
}

std::string read_attr_string(hid_t obj, const char* name) {
  Hid attr = attribute_hid(H5Aopen(obj, name, H5P_DEFAULT), "H5Aopen");
  require_one_value(attr.get(), name);
  Hid type = datatype_hid(H5Aget_type(attr.get()), "H5Aget_type");
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw Hdf5Error("read_attr_string", std::string("attribute ") + name + " is not a string");
  }
  const htri_t is_vl = check_h5(H5Tis_variable_str(type.get()), "H5Tis_variable_str");
  if (is_vl > 0) {
    char* text = nullptr;
    Hid mem = datatype_hid(H5Tcopy(type.get()), "H5Tcopy");
    check_h5(H5Aread(attr.get(), mem.get(), &text), "H5Aread");
    std::string out = text != nullptr ? text : "";
    H5free_memory(text);
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string buf(size, '\0');
  check_h5(H5Aread(attr.get(), type.get(), buf.data()), "H5Aread");
  buf.resize(buf.find('\0') == std::string::npos ? size : buf.find('\0'));
  return buf;
}

}  // namespace bloomshard::io
