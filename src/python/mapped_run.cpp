// MappedRun: open (serial HDF5; no MPI), the lazy per-slice check, lookup.
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

namespace {
enum SliceCheck : std::uint8_t { kUnchecked = 0, kChecked = 1, kBroken = 2 };
}  // namespace

MappedRun MappedRun::open(const std::filesystem::path& path, const io::CheckpointRunRef& ref,
                          std::uint32_t p, bool format1_generation) {
  MappedRun run;
  run.path_ = path;
  const auto fail = [&](const std::string& why) { throw StateError(path.string() + ": " + why); };
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    fail("missing run file (run " + std::to_string(ref.id) + ")");
  }
  io::quiet_hdf5_errors();
  io::Hid f = io::open_serial_file(path);
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
      fail("holds run " + std::to_string(attr(io::ckpt::kTier2Run)) + ", the generation names " +
           std::to_string(ref.id));
    }
    if (attr(io::ckpt::kNumSlices) != p) {
      fail("slice count differs from the generation's " + std::to_string(p));
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
    fail("holds " + std::to_string(e.keys) + " keys of " + std::to_string(e.bytes) +
         " bytes, the generation lists " + std::to_string(ref.keys) + " keys of " +
         std::to_string(ref.bytes));
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
  run.checked_ = std::make_unique<std::atomic<std::uint8_t>[]>(p);  // zero: kUnchecked
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

core::SliceBaseView MappedRun::checked_view(std::uint32_t s) const {
  // Racing first lookups may both check the slice: same result, no harm.
  std::uint8_t state = checked_[s].load(std::memory_order_acquire);
  if (state == kUnchecked) {
    std::string problem;
    try {
      const core::SliceBaseView v = view(s);
      problem = io::check_offsets(v.offsets, v.bytes.size());
    } catch (const std::exception& e) {
      problem = e.what();
    }
    state = problem.empty() ? kChecked : kBroken;
    checked_[s].store(state, std::memory_order_release);
    if (!problem.empty()) {
      throw StateError(path_.string() + " tier-2 slice " + std::to_string(s) + ": " + problem);
    }
  }
  if (state == kBroken) {
    throw StateError(path_.string() + " tier-2 slice " + std::to_string(s) +
                     ": offsets do not span the slice's bytes");
  }
  return view(s);
}

bool MappedRun::contains(std::uint32_t s, std::uint64_t fp, std::string_view key) const {
  return slice_keys_[s] != 0 && checked_view(s).contains(fp, key);
}

void MappedRun::verify(std::vector<std::string>& problems) const {
  for (std::uint32_t s = 0; s < slice_keys_.size(); ++s) {
    const std::string where = path_.string() + " tier-2 slice " + std::to_string(s);
    try {
      const core::SliceBaseView v = checked_view(s);
      if (io::tier2_slice_checksum(v) != checksums_[s]) {
        problems.push_back(where +
                           ": XXH3 checksum mismatch over /tier2/fingerprints, "
                           "/tier2/offsets, /tier2/bytes");
        continue;
      }
      core::validate_base(v);
    } catch (const std::exception& e) {
      problems.push_back(e.what());  // StateError already names the slice
    }
  }
}

}  // namespace bloomshard::python
