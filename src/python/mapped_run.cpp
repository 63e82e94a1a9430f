// MappedRun: open (serial HDF5; no MPI), the per-slice check on first use, lookup.
#include "mapped_run.hpp"

#include <hdf5.h>

#include <bit>
#include <utility>

#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/layout.hpp"
#include "io/hdf5/hdf5_call.hpp"
#include "io/hdf5/hdf5_file_source.hpp"
#include "io/hdf5/hdf5_read.hpp"
#include "state_error.hpp"

namespace bloomshard::python {

static_assert(std::endian::native == std::endian::little,
              "the mapped checkpoint values are little-endian");

MappedRun MappedRun::open(const std::filesystem::path& path,
                          const std::filesystem::path& generation,
                          const store::CheckpointRunRef& ref, std::uint32_t p,
                          bool format1_generation, std::uint64_t form_bytes, bool origins) {
  MappedRun run;
  run.path_ = path;
  const auto fail = [&](const std::string& why) { throw StateError(path.string() + ": " + why); };
  const std::string listed_by = "the generation file " + generation.filename().string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    fail("missing run file (run " + std::to_string(ref.id) + ", named in " + store::ckpt::kRunIds +
         " of " + generation.filename().string() + ")");
  }
  io::quiet_hdf5_errors();
  io::Hid f;
  try {
    f = io::open_serial_file(path);
  } catch (const std::exception& e) {
    fail(std::string("cannot open as HDF5 (truncated or damaged?): ") + e.what());
  }
  // The index and the slice views are the store's, as in every C++ reader;
  // its messages name the file, ours add the generation that lists it.
  try {
    const io::Hdf5FileSource src(f.get(), H5P_DEFAULT);
    store::Tier2Index index;
    if (format1_generation) {
      index = store::read_tier2_index(src, path.string(), p);
    } else {
      store::CheckpointHeader h;
      h.params.num_slices = p;
      index = store::read_run_index(src, path.string(), h, ref);
    }
    run.checksums_ = store::read_tier2_checksums(src, path.string(), p);
    std::shared_ptr<const store::FileMapping> mapping = store::FileMapping::map(path);
    run.open_forms(src, mapping, index, p, form_bytes, origins);
    run.slices_ = store::Tier2Slices(src, std::move(mapping), std::move(index));
    f.close("H5Fclose");
  } catch (const store::CheckpointError& e) {
    throw StateError(std::string(e.what()) + " (" + listed_by + ")");
  }
  // Only Bloom positives touch tier 2: no readahead around each probe.
  run.slices_.mapping()->advise_random();
  run.verdicts_ = SliceVerdicts(p);
  return run;
}

void MappedRun::open_forms(const store::FileSource& src,
                           std::shared_ptr<const store::FileMapping> mapping,
                           const store::Tier2Index& index, std::uint32_t p,
                           std::uint64_t form_bytes, bool origins) {
  namespace ckpt = store::ckpt;
  for (const char* name : {ckpt::kTier2FormOrigins, ckpt::kTier2FormOriginChecksums}) {
    const bool there = src.has_link(name);
    if (origins && !there) {
      throw StateError(path_.string() + ": dataset " + name +
                       " is missing, but the key scheme says confirm-origins (every run of such "
                       "a state holds its keys' origins)");
    }
    if (!origins && there) {
      throw StateError(path_.string() + ": holds dataset " + name +
                       ", but the key scheme has no confirm-origins item");
    }
  }
  for (const char* name : {ckpt::kTier2Forms, ckpt::kTier2FormChecksums}) {
    const bool there = src.has_link(name);
    if (form_bytes != 0 && !there) {
      throw StateError(path_.string() + ": dataset " + name +
                       " is missing, but the key scheme says confirm-jaccard (every run of a "
                       "confirming state holds its keys' forms)");
    }
    if (form_bytes == 0 && there) {
      throw StateError(path_.string() + ": holds dataset " + name +
                       ", but the key scheme has no confirm-jaccard item");
    }
  }
  if (form_bytes == 0) return;
  if (src.dims(ckpt::kTier2FormChecksums) != std::vector<std::uint64_t>{p}) {
    throw StateError(path_.string() + ": dataset " + ckpt::kTier2FormChecksums + " is not 1-D of " +
                     std::to_string(p) + " values (one per slice)");
  }
  form_checksums_ = src.read_u64(ckpt::kTier2FormChecksums);
  if (origins && src.dims(ckpt::kTier2FormOriginChecksums) != std::vector<std::uint64_t>{p}) {
    throw StateError(path_.string() + ": dataset " + ckpt::kTier2FormOriginChecksums +
                     " is not 1-D of " + std::to_string(p) + " values (one per slice)");
  }
  try {
    if (origins) {
      origin_checksums_ = src.read_u64(ckpt::kTier2FormOriginChecksums);
      origins_.emplace(src, mapping, index, store::kFormOriginRecordBytes, store::kFormOriginsData);
    }
    forms_.emplace(src, std::move(mapping), index, form_bytes);
  } catch (const store::CheckpointError& e) {
    throw StateError(path_.string() + ": " + e.what());
  }
}

std::string MappedRun::check_slice(std::uint32_t s) const {
  std::string problem = slices_.check(s, checksums_[s], true, path_.string());
  if (problem.empty() && forms_) problem = forms_->check(s, form_checksums_[s], path_.string());
  if (problem.empty() && origins_) {
    problem = origins_->check(s, origin_checksums_[s], path_.string());
  }
  return problem;
}

core::SliceBaseView MappedRun::checked_slice(std::uint32_t s) const {
  if (!verdicts_.known_good(s)) {
    verdicts_.require(s, [this](std::uint32_t x) { return check_slice(x); });
  }
  return slices_.view(s);
}

bool MappedRun::contains(std::uint32_t s, std::uint64_t fp, std::string_view key) const {
  // Empty slices are checked too: a damaged count could make a slice look empty.
  return checked_slice(s).contains(fp, key);
}

void MappedRun::verify(std::vector<std::string>& problems) const {
  for (std::uint32_t s = 0; s < slice_keys().size(); ++s) {
    try {
      (void)checked_slice(s);
    } catch (const StateError& e) {
      problems.push_back(e.what());  // names file and slice
    }
  }
}

}  // namespace bloomshard::python
