// MappedRun: open (serial HDF5; no MPI), the per-slice check on first use, lookup.
#include "mapped_run.hpp"

#include <hdf5.h>

#include <bit>

#include "bloomshard/io/checkpoint_checksum.hpp"
#include "bloomshard/io/checkpoint_layout.hpp"
#include "bloomshard/io/checkpoint_validate.hpp"
#include "bloomshard/io/hdf5_call.hpp"
#include "bloomshard/io/hdf5_parallel.hpp"
#include "dataset_address.hpp"
#include "state_error.hpp"

namespace bloomshard::python {

static_assert(std::endian::native == std::endian::little,
              "the mapped checkpoint values are little-endian");

MappedRun MappedRun::open(const std::filesystem::path& path,
                          const std::filesystem::path& generation, const io::CheckpointRunRef& ref,
                          std::uint32_t p, bool format1_generation) {
  MappedRun run;
  run.path_ = path;
  const auto fail = [&](const std::string& why) { throw StateError(path.string() + ": " + why); };
  const std::string listed_by = "the generation file " + generation.filename().string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    fail("missing run file (run " + std::to_string(ref.id) + ", named in " + io::ckpt::kRunIds +
         " of " + generation.filename().string() + ")");
  }
  io::quiet_hdf5_errors();
  io::Hid f;
  try {
    f = io::open_serial_file(path);
  } catch (const std::exception& e) {
    fail(std::string("cannot open as HDF5 (truncated or damaged?): ") + e.what());
  }
  const hid_t file = f.get();
  if (!format1_generation) {
    const auto attr = [&](const char* name) {
      if (!io::has_attr(file, name)) fail(std::string("missing attribute ") + name);
      return io::read_attr_u64(file, name);
    };
    if (!io::has_attr(file, io::ckpt::kContent) ||
        io::read_attr_string(file, io::ckpt::kContent) != io::ckpt::kContentRun) {
      fail("not a tier-2 run file");
    }
    if (attr(io::ckpt::kFormatVersion) != 2) fail("run file format_version is not 2");
    if (attr(io::ckpt::kTier2Run) != ref.id) {
      fail("holds run " + std::to_string(attr(io::ckpt::kTier2Run)) + ", " + listed_by + " names " +
           std::to_string(ref.id) + " (" + io::ckpt::kRunIds + ")");
    }
    if (attr(io::ckpt::kNumSlices) != p) {
      fail("num_slices differs from the " + std::to_string(p) + " of " + listed_by);
    }
  }
  const auto column = [&](const char* name) {
    if (!io::has_link(file, name)) fail(std::string("missing dataset ") + name);
    io::Hid d = io::open_dataset(file, name);
    if (io::dataset_dims(d.get()) != std::vector<std::uint64_t>{p}) {
      fail(std::string("dataset ") + name + " does not have " + std::to_string(p) + " values");
    }
    return io::read_all_u64(d.get(), H5P_DEFAULT);
  };
  run.slice_keys_ = column(io::ckpt::kSliceKeys);
  run.slice_bytes_ = column(io::ckpt::kSliceBytes);
  run.checksums_ = column(io::ckpt::kTier2Checksums);
  io::Tier2Extents e = io::tier2_extents(run.slice_keys_, run.slice_bytes_, path.string());
  if (e.keys != ref.keys || e.bytes != ref.bytes) {
    fail(std::string(io::ckpt::kSliceKeys) + " and " + io::ckpt::kSliceBytes + " add up to " +
         std::to_string(e.keys) + " keys of " + std::to_string(e.bytes) + " bytes, " + listed_by +
         " lists " + std::to_string(ref.keys) + " keys of " + std::to_string(ref.bytes) +
         " bytes (" + io::ckpt::kRunKeys + ", " + io::ckpt::kRunBytes + ")");
  }
  run.fps_ = dataset_address(file, path.string(), io::ckpt::kFingerprints, e.keys, 8);
  run.offs_ = dataset_address(file, path.string(), io::ckpt::kOffsets, e.keys + p, 8);
  run.bytes_ = dataset_address(file, path.string(), io::ckpt::kBytes, e.bytes, 1);
  run.key_start_ = std::move(e.key_start);
  run.byte_start_ = std::move(e.byte_start);
  f.close("H5Fclose");
  run.mapping_ = io::FileMapping::map(path);
  // Only Bloom positives touch tier 2: no readahead around each probe.
  run.mapping_->advise_random();
  run.verdicts_ = SliceVerdicts(p);
  return run;
}

core::SliceBaseView MappedRun::view(std::uint32_t s) const {
  const std::uint64_t keys = slice_keys_[s];
  // range() refuses a range beyond the end of the file (a truncated file).
  const auto fp = mapping_->range(fps_ + key_start_[s] * 8, keys * 8, io::ckpt::kFingerprints);
  const auto off =
      mapping_->range(offs_ + (key_start_[s] + s) * 8, (keys + 1) * 8, io::ckpt::kOffsets);
  const auto by = mapping_->range(bytes_ + byte_start_[s], slice_bytes_[s], io::ckpt::kBytes);
  core::SliceBaseView v;
  v.fingerprints = {reinterpret_cast<const std::uint64_t*>(fp.data()), keys};
  v.offsets = {reinterpret_cast<const std::uint64_t*>(off.data()), keys + 1};
  v.bytes = {reinterpret_cast<const char*>(by.data()), by.size()};
  return v;
}

std::string MappedRun::check_slice(std::uint32_t s) const {
  const std::string where = path_.string() + " tier-2 slice " + std::to_string(s) + ": ";
  try {
    const core::SliceBaseView v = view(s);  // refuses ranges beyond the file's end
    if (std::string bad = io::check_offsets(v.offsets, v.bytes.size()); !bad.empty()) {
      return where + bad;
    }
    if (const std::uint64_t sum = io::tier2_slice_checksum(v); sum != checksums_[s]) {
      return where + "XXH3 checksum mismatch over " + io::ckpt::kFingerprints + ", " +
             io::ckpt::kOffsets + ", " + io::ckpt::kBytes + " (stored " +
             std::to_string(checksums_[s]) + " in " + io::ckpt::kTier2Checksums + ", computed " +
             std::to_string(sum) + ")";
    }
    core::validate_base(v);  // key order: the binary search relies on it
  } catch (const std::exception& e) {
    return where + e.what();
  }
  return {};
}

core::SliceBaseView MappedRun::checked_slice(std::uint32_t s) const {
  if (!verdicts_.known_good(s)) {
    verdicts_.require(s, [this](std::uint32_t x) { return check_slice(x); });
  }
  return view(s);
}

bool MappedRun::contains(std::uint32_t s, std::uint64_t fp, std::string_view key) const {
  // Empty slices are checked too: a damaged count could make a slice look empty.
  return checked_slice(s).contains(fp, key);
}

void MappedRun::verify(std::vector<std::string>& problems) const {
  for (std::uint32_t s = 0; s < slice_keys_.size(); ++s) {
    try {
      (void)checked_slice(s);
    } catch (const StateError& e) {
      problems.push_back(e.what());  // names file and slice
    }
  }
}

}  // namespace bloomshard::python
