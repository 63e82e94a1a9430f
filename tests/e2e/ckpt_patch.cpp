// Test tool for tests/e2e/corruption.sh: rewrites one root attribute of a
// checkpoint file in place (e.g. format_version or hash_scheme), so the
// tests can present a "future" or "foreign" checkpoint without h5py.
// usage: ckpt_patch FILE ATTRIBUTE VALUE
//   integer attributes take a decimal VALUE (stored in the attribute's own
//   type); string attributes are replaced by a fixed-length string VALUE.
// Exit 0 on success, 1 with a message on stderr otherwise.
#include <hdf5.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

// Closes an HDF5 identifier with its matching close call.
class Handle {
 public:
  Handle(hid_t id, herr_t (*closer)(hid_t), const char* what) : id_(id), closer_(closer) {
    if (id_ < 0) throw std::runtime_error(std::string(what) + " failed");
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  [[nodiscard]] hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*closer_)(hid_t);
};

void check(herr_t rc, const char* what) {
  if (rc < 0) throw std::runtime_error(std::string(what) + " failed");
}

void patch_integer(hid_t attr, const std::string& value) {
  std::size_t used = 0;
  const std::uint64_t v = std::stoull(value, &used, 10);
  if (used != value.size()) throw std::runtime_error("'" + value + "' is not a decimal integer");
  check(H5Awrite(attr, H5T_NATIVE_UINT64, &v), "H5Awrite");
}

void patch_string(hid_t root, const char* name, const std::string& value) {
  check(H5Adelete(root, name), "H5Adelete");
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), "H5Tset_size");
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  Handle attr(H5Acreate2(root, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
              "H5Acreate2");
  check(H5Awrite(attr.get(), type.get(), value.c_str()), "H5Awrite");
}

void patch(const std::string& file, const std::string& name, const std::string& value) {
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "H5Fopen");
  Handle root(H5Gopen2(f.get(), "/", H5P_DEFAULT), H5Gclose, "H5Gopen2(/)");
  if (H5Aexists(root.get(), name.c_str()) <= 0) {
    throw std::runtime_error("no root attribute '" + name + "'");
  }
  H5T_class_t cls = H5T_NO_CLASS;
  {
    Handle attr(H5Aopen(root.get(), name.c_str(), H5P_DEFAULT), H5Aclose, "H5Aopen");
    Handle type(H5Aget_type(attr.get()), H5Tclose, "H5Aget_type");
    cls = H5Tget_class(type.get());
    if (cls == H5T_INTEGER) patch_integer(attr.get(), value);
  }
  if (cls == H5T_STRING) {
    patch_string(root.get(), name.c_str(), value);
  } else if (cls != H5T_INTEGER) {
    throw std::runtime_error("attribute '" + name + "' is neither an integer nor a string");
  }
  check(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), "H5Fflush");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ckpt_patch FILE ATTRIBUTE VALUE\n");
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  try {
    patch(argv[1], argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ckpt_patch %s: %s\n", argv[1], e.what());
    return 1;
  }
  return 0;
}
