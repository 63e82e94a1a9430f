// See checkpoint_input_order.hpp: the input order's rows in a generation.
#include "io/checkpoint/checkpoint_input_order.hpp"

#include <mpi.h>

#include <cstddef>
#include <exception>

#include "comm/mpi_error.hpp"
#include "io/checkpoint/checkpoint_error.hpp"
#include "io/hdf5/hdf5_call.hpp"
#include "io/hdf5/hdf5_file_source.hpp"
#include "io/hdf5/hdf5_read.hpp"

namespace bloomshard::io {
namespace {

constexpr const char* kInputOrderGroup = "/input_order";
constexpr std::uint64_t kRowWords = 3;  // tag, hi, lo

// "" or why table `t`'s datasets' presence and shapes do not fit a state of
// `p` slices that has (`expected`, under the mark `mark`) or has not rows.
// The same on every rank.
std::string shape_problem(hid_t file, const std::string& where, std::uint32_t p, bool expected,
                          const store::InputOrderTable& t, const char* mark) {
  for (const char* name : {t.rows, t.offsets, t.checksums}) {
    const bool there = has_link(file, name);
    if (expected && !there) {
      return where + ": dataset " + name + " is missing, but the normalization text has the " +
             mark + " mark (the " + t.label + " are datasets of the generation)";
    }
    if (!expected && there) {
      return where + ": holds dataset " + name + ", but the normalization text lacks the " +
             t.since + " mark (rows without their mark)";
    }
  }
  if (!expected) return {};
  const auto one_d = [&](const char* name) {
    const Hid d = open_dataset(file, name);
    return dataset_dims(d.get());
  };
  const std::vector<std::uint64_t> rows = one_d(t.rows);
  if (rows.size() != 1 || rows[0] % kRowWords != 0) {
    return where + ": dataset " + t.rows + " is not 1-D of 3 values a row (tag, hi, lo)";
  }
  const std::vector<std::uint64_t> sums = one_d(t.checksums);
  if (sums.size() != 1 || sums[0] != p) {
    return where + ": dataset " + t.checksums + " is not 1-D of " + std::to_string(p) +
           " values (one per slice)";
  }
  const std::vector<std::uint64_t> offsets = one_d(t.offsets);
  if (offsets.size() != 1) return where + ": dataset " + t.offsets + " is not 1-D";
  return {};
}

}  // namespace

store::InputOrderSlices group_owned_input_order_rows(std::span<const store::InputOrderRow> mine,
                                                     core::SliceRange owned, std::uint32_t p,
                                                     const store::InputOrderTable& t) {
  store::InputOrderSlices g = store::group_input_order_rows(mine, p);
  if (g.offsets[owned.first] != 0 || g.offsets[owned.last] != g.rows.size()) {
    throw CheckpointError("a row of the " + std::string(t.label) + " (" + t.rows +
                          ") lies outside the slices [" + std::to_string(owned.first) + ", " +
                          std::to_string(owned.last) + ") this rank owns");
  }
  return g;
}

std::uint64_t write_input_order_rows(const comm::Communicator& comm, hid_t file, hid_t dxpl,
                                     const store::InputOrderSlices& grouped, core::SliceRange owned,
                                     std::uint32_t p, IoModeTracker& tracker,
                                     const store::InputOrderTable& t) {
  const std::uint64_t mine = grouped.rows.size();
  std::uint64_t before = 0;
  comm::check_mpi(MPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, comm.mpi_comm()),
                  "MPI_Exscan");
  if (comm.rank() == 0) before = 0;  // MPI leaves rank 0's result undefined
  const std::uint64_t total = comm.allreduce_sum(mine);
  // The second table finds the group the first one made (every rank alike).
  const Hid group = has_link(file, kInputOrderGroup) ? Hid() : create_group(file, kInputOrderGroup);
  Hid rows = create_contiguous_dataset(file, t.rows, H5T_STD_U64LE, total * kRowWords);
  Hid offsets = create_contiguous_dataset(file, t.offsets, H5T_STD_U64LE, std::uint64_t{p} + 1);
  Hid sums = create_contiguous_dataset(file, t.checksums, H5T_STD_U64LE, p);
  write_1d_collective(comm, rows.get(), dxpl, H5T_NATIVE_UINT64, before * kRowWords,
                      grouped.rows.data(), mine * kRowWords, 8, &tracker);
  // Offsets of the owned slices, moved to the file's rows; the rank owning
  // the last slice also writes the end (the total; ranks past P own none).
  const std::uint64_t count = owned.size() + (owned.last == p && owned.size() > 0 ? 1 : 0);
  const auto from = grouped.offsets.begin() + static_cast<std::ptrdiff_t>(owned.first);
  std::vector<std::uint64_t> at(from, from + static_cast<std::ptrdiff_t>(count));
  for (std::uint64_t& o : at) o += before;
  write_1d_collective(comm, offsets.get(), dxpl, H5T_NATIVE_UINT64, owned.first, at.data(),
                      at.size(), 8, &tracker);
  write_1d_collective(comm, sums.get(), dxpl, H5T_NATIVE_UINT64, owned.first,
                      grouped.checksums.data() + owned.first, owned.size(), 8, &tracker);
  return (mine * kRowWords + at.size() + owned.size()) * 8;
}

std::vector<std::string> read_input_order_rows(
    const comm::Communicator& comm, hid_t file, hid_t dxpl, const std::filesystem::path& where,
    std::uint32_t p, bool expected, core::SliceRange range, std::vector<store::InputOrderRow>* into,
    std::uint64_t* total_rows, const store::InputOrderTable& t, const char* mark) {
  std::vector<std::string> problems;
  const std::string name = where.string();
  std::vector<std::uint64_t> offsets, sums;
  std::uint64_t rows = 0;
  // Every rank reads the same metadata and tables, so every rank finds the
  // same problem here; an HDF5 failure on one rank alone is agreed below
  // before anyone reaches the collective read of the rows.
  try {
    with_file_context(where, [&] {
      if (std::string q = shape_problem(file, name, p, expected, t, mark); !q.empty()) {
        problems.push_back(std::move(q));
        return 0;
      }
      if (!expected) return 0;
      const Hid r = open_dataset(file, t.rows);
      rows = dataset_dims(r.get())[0] / kRowWords;
      const Hid o = open_dataset(file, t.offsets);
      offsets = read_all_u64(o.get(), dxpl);
      const Hid s = open_dataset(file, t.checksums);
      sums = read_all_u64(s.get(), dxpl);
      if (std::string q = store::check_input_order_offsets(offsets, rows, p, name, t); !q.empty()) {
        problems.push_back(std::move(q));
      }
      return 0;
    });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
  }
  if (total_rows != nullptr) *total_rows = rows;
  if (comm.any(!problems.empty()) || !expected) return problems;
  const std::uint64_t first = offsets[range.first];
  const std::uint64_t count = offsets[range.last] - first;
  std::vector<store::InputOrderRow> mine(static_cast<std::size_t>(count));
  try {
    with_file_context(where, [&] {
      const Hid r = open_dataset(file, t.rows);
      read_1d_collective(comm, r.get(), dxpl, H5T_NATIVE_UINT64, first * kRowWords, mine.data(),
                         count * kRowWords, 8);
      return 0;
    });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
    return problems;
  }
  for (std::uint32_t s = range.first; s < range.last; ++s) {
    const std::span<const store::InputOrderRow> slice(mine.data() + (offsets[s] - first),
                                                      offsets[s + 1] - offsets[s]);
    if (std::string q = store::check_input_order_slice(slice, s, p, sums[s], name, t); !q.empty()) {
      problems.push_back(std::move(q));
    }
  }
  if (into != nullptr && problems.empty()) *into = std::move(mine);
  return problems;
}

}  // namespace bloomshard::io
