// HDF5 keeps an error stack per thread; the text is collected right after
// the failed call, before any other HDF5 call can clear it.
#include "io/hdf5/hdf5_call.hpp"

#include <string>
#include <utility>

namespace bloomshard::io {
namespace {

herr_t collect_error(unsigned n, const H5E_error2_t* err, void* client) {
  auto* text = static_cast<std::string*>(client);
  if (n > 0) *text += "; ";
  *text += err->desc != nullptr && err->desc[0] != '\0' ? err->desc : "(no description)";
  if (err->func_name != nullptr) {
    *text += " (";
    *text += err->func_name;
    *text += ")";
  }
  return 0;
}

std::string error_stack_text() {
  std::string text;
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &text) < 0 || text.empty()) {
    return "no HDF5 error detail";
  }
  return text;
}

}  // namespace

Hdf5Error::Hdf5Error(std::string call, const std::string& stack_text)
    : std::runtime_error(call + " failed: " + stack_text), call_(std::move(call)) {}

void quiet_hdf5_errors() {
  thread_local bool done = false;
  if (!done) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    done = true;
  }
}

int check_h5(int rc, const char* call) {
  if (rc < 0) throw Hdf5Error(call, error_stack_text());
  return rc;
}

hid_t check_hid(hid_t id, const char* call) {
  if (id < 0) throw Hdf5Error(call, error_stack_text());
  return id;
}

Hid& Hid::operator=(Hid&& o) noexcept {
  if (this != &o) {
    if (valid() && closer_ != nullptr) closer_(id_);
    id_ = std::exchange(o.id_, H5I_INVALID_HID);
    closer_ = o.closer_;
  }
  return *this;
}

Hid::~Hid() {
  if (valid() && closer_ != nullptr) closer_(id_);
}

void Hid::close(const char* call) {
  if (!valid()) return;
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  check_h5(closer_(id), call);
}

Hid file_hid(hid_t id, const char* call) { return {check_hid(id, call), H5Fclose}; }
Hid dataset_hid(hid_t id, const char* call) { return {check_hid(id, call), H5Dclose}; }
Hid dataspace_hid(hid_t id, const char* call) { return {check_hid(id, call), H5Sclose}; }
Hid datatype_hid(hid_t id, const char* call) { return {check_hid(id, call), H5Tclose}; }
Hid plist_hid(hid_t id, const char* call) { return {check_hid(id, call), H5Pclose}; }
Hid attribute_hid(hid_t id, const char* call) { return {check_hid(id, call), H5Aclose}; }
Hid group_hid(hid_t id, const char* call) { return {check_hid(id, call), H5Gclose}; }

}  // namespace bloomshard::io
