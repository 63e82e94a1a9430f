// See hdf5_parallel.hpp. Collective metadata (reads and writes) keeps N
// ranks from each reading the same object headers, and the contiguous,
// early-allocated layout gives every dataset a fixed file address.
#include "io/hdf5/hdf5_parallel.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "comm/mpi_error.hpp"

namespace bloomshard::io {
namespace {

// The hints for files created from now on: set_mpiio_hints(), else
// $BLOOMSHARD_MPIIO_HINTS read once.
std::mutex hints_mutex;
bool hints_set = false;
MpiIoHints hints;

MpiIoHints current_hints() {
  std::lock_guard lock(hints_mutex);
  if (!hints_set) {
    const char* env = std::getenv("BLOOMSHARD_MPIIO_HINTS");
    hints = parse_mpiio_hints(env != nullptr ? env : "");
    hints_set = true;
  }
  return hints;
}

// An MPI_Info holding `h` (MPI_INFO_NULL when empty), freed with the object.
class Info {
 public:
  explicit Info(const MpiIoHints& h) {
    if (h.empty()) return;
    comm::check_mpi(MPI_Info_create(&info_), "MPI_Info_create");
    for (const auto& [k, v] : h)
      comm::check_mpi(MPI_Info_set(info_, k.c_str(), v.c_str()), "MPI_Info_set");
  }
  ~Info() {
    if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
  }
  Info(const Info&) = delete;
  Info& operator=(const Info&) = delete;
  [[nodiscard]] MPI_Info get() const noexcept { return info_; }

 private:
  MPI_Info info_ = MPI_INFO_NULL;
};

Hid parallel_fapl(const comm::Communicator& comm, bool with_hints = false) {
  Hid fapl = plist_hid(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(FILE_ACCESS)");
  const Info info(with_hints ? current_hints() : MpiIoHints{});
  check_h5(H5Pset_fapl_mpio(fapl.get(), comm.mpi_comm(), info.get()), "H5Pset_fapl_mpio");
  check_h5(H5Pset_all_coll_metadata_ops(fapl.get(), 1), "H5Pset_all_coll_metadata_ops");
  check_h5(H5Pset_coll_metadata_write(fapl.get(), 1), "H5Pset_coll_metadata_write");
  check_h5(H5Pset_alignment(fapl.get(), 1, kFileAlignment), "H5Pset_alignment");
  return fapl;
}

Hid dataset_create_plist() {
  Hid dcpl = plist_hid(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(DATASET_CREATE)");
  check_h5(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  check_h5(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  check_h5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  return dcpl;
}

// A dataspace that selects nothing, for ranks taking part in a collective
// transfer with no data.
Hid empty_selection(hid_t dset_space) {
  check_h5(H5Sselect_none(dset_space), "H5Sselect_none");
  const hsize_t one = 1;
  Hid mem = dataspace_hid(H5Screate_simple(1, &one, nullptr), "H5Screate_simple");
  check_h5(H5Sselect_none(mem.get()), "H5Sselect_none");
  return mem;
}

void track(hid_t dxpl, IoModeTracker* tracker) {
  if (tracker == nullptr) return;
  H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
  check_h5(H5Pget_mpio_actual_io_mode(dxpl, &mode), "H5Pget_mpio_actual_io_mode");
  ++tracker->calls;
  if (mode == H5D_MPIO_NO_COLLECTIVE) ++tracker->non_collective;
  std::uint32_t local_cause = 0;
  std::uint32_t global_cause = 0;
  check_h5(H5Pget_mpio_no_collective_cause(dxpl, &local_cause, &global_cause),
           "H5Pget_mpio_no_collective_cause");
  tracker->no_collective_cause |= global_cause;
  tracker->last_mode = static_cast<int>(mode);
}

template <class Transfer>
void transfer_1d(const comm::Communicator& comm, hid_t dset, std::uint64_t file_start,
                 std::uint64_t count, std::size_t elem_size, Transfer&& transfer) {
  const std::uint64_t per_piece = kMaxIoPieceBytes / elem_size;
  const std::uint64_t local_pieces = (count + per_piece - 1) / per_piece;
  const std::uint64_t pieces = comm.allreduce_max(local_pieces);
  for (std::uint64_t i = 0; i < pieces; ++i) {
    Hid file_space = dataspace_hid(H5Dget_space(dset), "H5Dget_space");
    Hid mem_space;
    std::uint64_t done = 0;
    if (i < local_pieces) {
      done = i * per_piece;
      const hsize_t start = file_start + done;
      const hsize_t n = std::min(per_piece, count - done);
      check_h5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr),
               "H5Sselect_hyperslab");
      mem_space = dataspace_hid(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
    } else {
      mem_space = empty_selection(file_space.get());
    }
    transfer(mem_space.get(), file_space.get(), done * elem_size);
  }
}

}  // namespace

MpiIoHints parse_mpiio_hints(std::string_view spec) {
  MpiIoHints out;
  std::size_t pos = 0;
  while (pos < spec.size()) {
    std::size_t end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == 0 || eq == std::string_view::npos || eq + 1 == item.size() ||
        item.find_first_of(" \t") != std::string_view::npos) {
      throw std::invalid_argument("MPI-IO hint '" + std::string(item) +
                                  "' is not key=value (no spaces)");
    }
    out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return out;
}

void set_mpiio_hints(MpiIoHints h) {
  std::lock_guard lock(hints_mutex);
  hints = std::move(h);
  hints_set = true;
}

MpiIoHints mpiio_hints() { return current_hints(); }

Hid create_parallel_file(const comm::Communicator& comm, const std::filesystem::path& path) {
  quiet_hdf5_errors();
  Hid fapl = parallel_fapl(comm, true);
  return file_hid(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "H5Fcreate");
}

Hid open_parallel_file(const comm::Communicator& comm, const std::filesystem::path& path) {
  quiet_hdf5_errors();
  Hid fapl = parallel_fapl(comm);
  return file_hid(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), "H5Fopen");
}

Hid collective_dxpl() {
  Hid dxpl = plist_hid(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(DATASET_XFER)");
  check_h5(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  return dxpl;
}

hid_t default_dxpl() noexcept { return H5P_DEFAULT; }

Hid create_group(hid_t loc, const char* name) {
  return group_hid(H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate2");
}

Hid create_contiguous_dataset(hid_t loc, const char* name, hid_t file_type, std::uint64_t length) {
  const hsize_t dims = length;
  Hid space = dataspace_hid(H5Screate_simple(1, &dims, nullptr), "H5Screate_simple");
  Hid dcpl = dataset_create_plist();
  return dataset_hid(
      H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
      "H5Dcreate2");
}

Hid create_contiguous_dataset_2d(hid_t loc, const char* name, hid_t file_type, std::uint64_t rows,
                                 std::uint64_t cols) {
  const std::array<hsize_t, 2> dims{rows, cols};
  Hid space = dataspace_hid(H5Screate_simple(2, dims.data(), nullptr), "H5Screate_simple");
  Hid dcpl = dataset_create_plist();
  return dataset_hid(
      H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
      "H5Dcreate2");
}

void write_1d_collective(const comm::Communicator& comm, hid_t dset, hid_t dxpl, hid_t mem_type,
                         std::uint64_t file_start, const void* data, std::uint64_t count,
                         std::size_t elem_size, IoModeTracker* tracker) {
  static const std::uint64_t dummy = 0;
  const auto* base =
      data != nullptr ? static_cast<const char*>(data) : reinterpret_cast<const char*>(&dummy);
  transfer_1d(comm, dset, file_start, count, elem_size,
              [&](hid_t mem, hid_t file, std::uint64_t byte_offset) {
                check_h5(H5Dwrite(dset, mem_type, mem, file, dxpl, base + byte_offset), "H5Dwrite");
                track(dxpl, tracker);
              });
}

void read_1d_collective(const comm::Communicator& comm, hid_t dset, hid_t dxpl, hid_t mem_type,
                        std::uint64_t file_start, void* data, std::uint64_t count,
                        std::size_t elem_size) {
  std::uint64_t dummy = 0;
  char* base = data != nullptr ? static_cast<char*>(data) : reinterpret_cast<char*>(&dummy);
  transfer_1d(comm, dset, file_start, count, elem_size,
              [&](hid_t mem, hid_t file, std::uint64_t byte_offset) {
                check_h5(H5Dread(dset, mem_type, mem, file, dxpl, base + byte_offset), "H5Dread");
              });
}

namespace {

std::pair<Hid, Hid> column_block_spaces(hid_t dset, std::uint64_t rows, std::uint64_t col_begin,
                                        std::uint64_t col_end) {
  Hid file_space = dataspace_hid(H5Dget_space(dset), "H5Dget_space");
  const std::array<hsize_t, 2> start{0, col_begin};
  const std::array<hsize_t, 2> count{rows, col_end - col_begin};
  Hid mem_space;
  if (rows == 0 || col_end == col_begin) {
    mem_space = empty_selection(file_space.get());
  } else {
    check_h5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                 count.data(), nullptr),
             "H5Sselect_hyperslab");
    mem_space = dataspace_hid(H5Screate_simple(2, count.data(), nullptr), "H5Screate_simple");
  }
  return {std::move(file_space), std::move(mem_space)};
}

}  // namespace

void read_columns_2d(hid_t dset, hid_t dxpl, hid_t mem_type, std::uint64_t rows,
                     std::uint64_t col_begin, std::uint64_t col_end, void* data,
                     std::size_t elem_size) {
  if (rows * (col_end - col_begin) * elem_size >= kMaxIoPieceBytes) {
    throw std::length_error("read_columns_2d: block of 1 GiB or more");
  }
  auto [file_space, mem_space] = column_block_spaces(dset, rows, col_begin, col_end);
  std::uint64_t dummy = 0;
  check_h5(H5Dread(dset, mem_type, mem_space.get(), file_space.get(), dxpl,
                   data != nullptr ? data : &dummy),
           "H5Dread");
}

void write_columns_2d(hid_t dset, hid_t dxpl, hid_t mem_type, std::uint64_t rows,
                      std::uint64_t col_begin, std::uint64_t col_end, const void* data,
                      std::size_t elem_size, IoModeTracker* tracker) {
  if (rows * (col_end - col_begin) * elem_size >= kMaxIoPieceBytes) {
    throw std::length_error("write_columns_2d: block of 1 GiB or more");
  }
  auto [file_space, mem_space] = column_block_spaces(dset, rows, col_begin, col_end);
  static const std::uint64_t dummy = 0;
  check_h5(H5Dwrite(dset, mem_type, mem_space.get(), file_space.get(), dxpl,
                    data != nullptr ? data : &dummy),
           "H5Dwrite");
  track(dxpl, tracker);
}

namespace {

void write_scalar_attr(hid_t obj, const char* name, hid_t file_type, hid_t mem_type,
                       const void* value) {
  Hid space = dataspace_hid(H5Screate(H5S_SCALAR), "H5Screate");
  Hid attr = attribute_hid(H5Acreate2(obj, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                           "H5Acreate2");
  check_h5(H5Awrite(attr.get(), mem_type, value), "H5Awrite");
  attr.close("H5Aclose");
}

}  // namespace

void write_attr_u64(hid_t obj, const char* name, std::uint64_t value) {
  write_scalar_attr(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}
void write_attr_u32(hid_t obj, const char* name, std::uint32_t value) {
  write_scalar_attr(obj, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, &value);
}
void write_attr_u8(hid_t obj, const char* name, std::uint8_t value) {
  write_scalar_attr(obj, name, H5T_STD_U8LE, H5T_NATIVE_UINT8, &value);
}
void write_attr_f64(hid_t obj, const char* name, double value) {
  write_scalar_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

Hid string_type(std::size_t length) {
  Hid type = datatype_hid(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check_h5(H5Tset_size(type.get(), length + 1), "H5Tset_size");
  check_h5(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "H5Tset_strpad");
  check_h5(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return type;
}

void write_attr_string(hid_t obj, const char* name, const std::string& value) {
  Hid type = string_type(value.size());
  write_scalar_attr(obj, name, type.get(), type.get(), value.c_str());
}

}  // namespace bloomshard::io
