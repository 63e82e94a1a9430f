// Checked HDF5 C calls: every call goes through check_h5() / check_id(),
// which turn a negative return into an Hdf5Error carrying the call's name
// and the text of HDF5's error stack (H5Ewalk), and every identifier lives
// in an Hid that closes it with the matching H5*close. HDF5's automatic
// error printing is switched off (quiet_hdf5_errors) so a failure is
// reported once, by whoever catches the exception.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>

namespace bloomshard::io {

/// A failed HDF5 call. what() reads "<call> failed: <innermost HDF5 error
/// descriptions, outermost first>".
class Hdf5Error : public std::runtime_error {
 public:
  Hdf5Error(std::string call, const std::string& stack_text);
  /// Name of the failed call, e.g. "H5Dwrite".
  [[nodiscard]] const std::string& call() const noexcept { return call_; }

 private:
  std::string call_;
};

/// Switches off HDF5's automatic error-stack printing for this thread
/// (H5Eset_auto2 with no callback). Idempotent and cheap after the first call;
/// every entry point of the checkpoint store calls it.
void quiet_hdf5_errors();

/// Throws Hdf5Error(call) if rc < 0 (herr_t and htri_t returns); returns rc.
int check_h5(int rc, const char* call);
/// As check_h5 for identifier-returning calls (H5I_INVALID_HID or < 0 fails).
hid_t check_hid(hid_t id, const char* call);

/// Owning HDF5 identifier. Knows which H5*close fits the kind of object.
/// Move-only. The destructor closes without throwing; call close() where a
/// close can fail in a way that matters (H5Fclose flushes the file).
class Hid {
 public:
  using Closer = herr_t (*)(hid_t);

  Hid() noexcept = default;
  Hid(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  Hid(Hid&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& o) noexcept;
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid();

  [[nodiscard]] hid_t get() const noexcept { return id_; }
  [[nodiscard]] bool valid() const noexcept { return id_ >= 0; }
  /// Closes now; throws Hdf5Error naming `call` if the close fails.
  void close(const char* call = "H5close");

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

/// Checked creation of each kind of owning handle.
[[nodiscard]] Hid file_hid(hid_t id, const char* call);
[[nodiscard]] Hid dataset_hid(hid_t id, const char* call);
[[nodiscard]] Hid dataspace_hid(hid_t id, const char* call);
[[nodiscard]] Hid datatype_hid(hid_t id, const char* call);
[[nodiscard]] Hid plist_hid(hid_t id, const char* call);
[[nodiscard]] Hid attribute_hid(hid_t id, const char* call);
[[nodiscard]] Hid group_hid(hid_t id, const char* call);

}  // namespace bloomshard::io
