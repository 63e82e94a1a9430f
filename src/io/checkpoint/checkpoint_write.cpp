// write_checkpoint (format 2) in phases, with an agreement between each so
// that a failure on one rank never leaves the others waiting in a
// collective:
//   1. local: validate, plan the new run (core::plan_compaction over the
//      shard's runs, the same on every rank), size every owned slice of it
//      from the shard's counters (no merge), checksum the Bloom slices;
//   2. collective HDF5, the run file: offsets by MPI_Exscan, every dataset
//      created (contiguous, allocated now), then the tier-2 data by one of
//      the two paths of checkpoint_data.hpp (O_DIRECT at the datasets'
//      addresses, or collective MPI-IO), the per-slice checksums last;
//   3. collective HDF5, the generation file: header, manifest (with its
//      checksum), Bloom layers and checksums, the run list;
//   4. every rank fdatasyncs both files (its own bytes; rank 0's fsync only
//      covers its node), agreed;
//   5. rank 0 commits: fence, fsync, rename the run, rename the generation,
//      fsync dir, LATEST, then deletes old generations and unreferenced run
//      files on a background thread (the next write waits for it).
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bloomshard/store/tier2_forms.hpp"
#include "comm/heartbeat.hpp"
#include "comm/mpi_error.hpp"
#include "core/window/slot_window.hpp"
#include "io/checkpoint/checkpoint_checksum.hpp"
#include "io/checkpoint/checkpoint_collective.hpp"
#include "io/checkpoint/checkpoint_commit.hpp"
#include "io/checkpoint/checkpoint_data.hpp"
#include "io/checkpoint/checkpoint_forms.hpp"
#include "io/checkpoint/checkpoint_input_order.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/durable/durable_file.hpp"
#include "io/hdf5/hdf5_parallel.hpp"

namespace bloomshard::io {
namespace {

// Rank 0's header, field by field, so every rank passes identical attribute
// values to the collective attribute writes.
class Packer {
 public:
  void u64(std::uint64_t v) { text_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void str(const std::string& s) {
    u64(s.size());
    text_ += s;
  }
  [[nodiscard]] const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
};

class Unpacker {
 public:
  explicit Unpacker(std::string text) : text_(std::move(text)) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    text_.copy(reinterpret_cast<char*>(&v), sizeof v, pos_);
    pos_ += sizeof v;
    return v;
  }
  double f64() { return std::bit_cast<double>(u64()); }
  std::string str() {
    const auto n = static_cast<std::size_t>(u64());
    std::string s = text_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::string text_;
  std::size_t pos_ = 0;
};

// Length and checksum of rank 0's manifest, known on every rank.
struct ManifestInfo {
  std::uint64_t size = 0;
  std::uint64_t checksum = 0;
};

CheckpointHeader broadcast_header(const comm::Communicator& comm, const CheckpointHeader& h,
                                  ManifestInfo& manifest) {
  Packer p;
  p.u64(h.format_version);
  p.str(h.tool_version);
  p.str(h.hash_scheme);
  p.u64(h.hash_seed);
  p.str(h.bloom_layout);
  p.str(h.normalization);
  p.str(h.key_field);
  p.str(h.key_encoding);
  p.str(h.key_scheme);
  p.u64(h.params.num_slices);
  p.u64(h.params.initial_capacity);
  p.f64(h.params.fpr_target);
  p.f64(h.params.growth);
  p.f64(h.params.tightening);
  p.u64(h.generation);
  p.str(h.run_id);
  p.u64(h.finished ? 1 : 0);
  p.str(h.window);
  p.u64(h.window_slot);
  p.u64(h.window_slot_progress);
  p.u64(h.split_inputs ? 1 : 0);
  p.u64(h.retracted_records ? 1 : 0);
  p.u64(h.input_order ? 1 : 0);
  p.u64(h.input_order_rows ? 1 : 0);
  p.u64(h.input_order_retracted_rows ? 1 : 0);
  // The manifest stays on rank 0: only its length and checksum travel
  // (the collective dataset and attribute creation need them everywhere).
  p.u64(h.manifest_json.size());
  p.u64(manifest_checksum(h.manifest_json));
  Unpacker u(comm.broadcast(comm.rank() == 0 ? p.text() : std::string()));
  CheckpointHeader out;
  out.format_version = static_cast<std::uint32_t>(u.u64());
  out.tool_version = u.str();
  out.hash_scheme = u.str();
  out.hash_seed = u.u64();
  out.bloom_layout = u.str();
  out.normalization = u.str();
  out.key_field = u.str();
  out.key_encoding = u.str();
  out.key_scheme = u.str();
  out.params.num_slices = static_cast<std::uint32_t>(u.u64());
  out.params.initial_capacity = u.u64();
  out.params.fpr_target = u.f64();
  out.params.growth = u.f64();
  out.params.tightening = u.f64();
  out.generation = u.u64();
  out.run_id = u.str();
  out.finished = u.u64() != 0;
  out.window = u.str();
  out.window_slot = u.u64();
  out.window_slot_progress = u.u64();
  out.split_inputs = u.u64() != 0;
  out.retracted_records = u.u64() != 0;
  out.input_order = u.u64() != 0;
  out.input_order_rows = u.u64() != 0;
  out.input_order_retracted_rows = u.u64() != 0;
  manifest.size = u.u64();
  manifest.checksum = u.u64();
  if (comm.rank() == 0) out.manifest_json = h.manifest_json;
  return out;
}

bool same_params(const core::ScalableBloomParams& a, const core::ScalableBloomParams& b) {
  return a.num_slices == b.num_slices && a.initial_capacity == b.initial_capacity &&
         a.fpr_target == b.fpr_target && a.growth == b.growth && a.tightening == b.tightening;
}

// Checks that the ranks' owned ranges tile [0, P) in rank order.
std::string check_tiling(const comm::Communicator& comm, core::SliceRange owned,
                         std::uint32_t num_slices) {
  const std::array<std::uint32_t, 2> mine{owned.first, owned.last};
  std::vector<std::uint32_t> all(2 * comm.usize());
  comm::check_mpi(
      MPI_Allgather(mine.data(), 2, MPI_UINT32_T, all.data(), 2, MPI_UINT32_T, comm.mpi_comm()),
      "MPI_Allgather");
  std::uint32_t expect = 0;
  for (std::uint32_t r = 0; r < comm.usize(); ++r) {
    if (all[2 * r] != expect || all[2 * r + 1] < all[2 * r]) {
      return "owned slice ranges do not tile [0, " + std::to_string(num_slices) +
             ") in rank order (rank " + std::to_string(r) + " holds [" +
             std::to_string(all[2 * r]) + ", " + std::to_string(all[2 * r + 1]) + "))";
    }
    expect = all[2 * r + 1];
  }
  if (expect != num_slices) {
    return "owned slice ranges end at " + std::to_string(expect) +
           ", not at P = " + std::to_string(num_slices);
  }
  return {};
}

LocalTier2 prepare_local(const core::TwoTierSet& set, std::size_t depth,
                         const core::BandConfirmer* forms, bool origins) {
  const core::SliceRange owned = set.owned();
  const std::size_t n = owned.size();
  const std::size_t num_layers = set.bloom().num_layers();
  LocalTier2 t;
  t.depth = depth;
  t.confirmer = forms;
  t.keys.resize(n);
  t.bytes.resize(n);
  t.checksums.resize(n);
  t.bloom_checksums.resize(num_layers * n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto slice = static_cast<std::uint32_t>(owned.first + i);
    const core::SliceSize size = set.exact().merged_slice_size(slice, depth);
    t.keys[i] = size.keys;
    t.bytes[i] = size.bytes;
    t.total_keys += t.keys[i];
    t.total_bytes += t.bytes[i];
    for (std::size_t l = 0; l < num_layers; ++l) {
      t.bloom_checksums[l * n + i] = bloom_slice_checksum(set.bloom().slice_words(l, slice));
    }
  }
  if (forms != nullptr) {  // the forms of the new run's keys, in memory until written
    t.form_starts.resize(n);
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      t.form_starts[i] = at;
      at += t.keys[i] * forms->form_bytes();
    }
    t.forms.resize(at);
    t.form_checksums.resize(n);
    t.origins = origins;
    if (origins) {
      t.form_origins.resize(t.total_keys * store::kFormOriginRecordBytes);
      t.form_origin_checksums.resize(n);
    }
  }
  return t;
}

void write_header_attributes(hid_t root, const CheckpointHeader& h, std::uint32_t ranks,
                             std::uint32_t num_layers) {
  write_attr_u32(root, ckpt::kFormatVersion, h.format_version);
  write_attr_string(root, ckpt::kToolVersion, h.tool_version);
  write_attr_string(root, ckpt::kHashScheme, h.hash_scheme);
  write_attr_u64(root, ckpt::kHashSeed, h.hash_seed);
  write_attr_string(root, ckpt::kBloomLayout, h.bloom_layout);
  // A windowed state's normalization carries a mark that builds before
  // windows do not know: they compare the text whole and refuse the state.
  // So does a state with split inputs.
  write_attr_string(root, ckpt::kNormalization,
                    h.normalization +
                        (!h.split_inputs       ? ""
                         : h.retracted_records ? ckpt::kSplitInputsRetractedMark
                                               : ckpt::kSplitInputsNormalizationMark) +
                        (!h.input_order                 ? ""
                         : h.input_order_retracted_rows ? ckpt::kInputOrderRetractedRowsMark
                         : h.input_order_rows           ? ckpt::kInputOrderRowsMark
                                                        : ckpt::kInputOrderNormalizationMark) +
                        (h.window.empty() ? "" : ckpt::kWindowNormalizationMark));
  write_attr_string(root, ckpt::kKeyField, h.key_field);
  write_attr_string(root, ckpt::kKeyEncoding, h.key_encoding);
  if (!h.key_scheme.empty()) write_attr_string(root, ckpt::kKeyScheme, h.key_scheme);
  write_attr_u32(root, ckpt::kNumSlices, h.params.num_slices);
  write_attr_u64(root, ckpt::kInitialCapacity, h.params.initial_capacity);
  write_attr_f64(root, ckpt::kFprTarget, h.params.fpr_target);
  write_attr_f64(root, ckpt::kGrowth, h.params.growth);
  write_attr_f64(root, ckpt::kTightening, h.params.tightening);
  write_attr_u64(root, ckpt::kGeneration, h.generation);
  write_attr_string(root, ckpt::kRunId, h.run_id);
  write_attr_u8(root, ckpt::kFinished, h.finished ? 1 : 0);
  write_attr_u32(root, ckpt::kWrittenByRanks, ranks);
  write_attr_u32(root, ckpt::kNumLayers, num_layers);
  if (!h.window.empty()) {
    write_attr_string(root, ckpt::kWindow, h.window);
    write_attr_u64(root, ckpt::kWindowSlot, h.window_slot);
    write_attr_u64(root, ckpt::kWindowSlotProgress, h.window_slot_progress);
  }
}

// Collective; `manifest` is rank 0's text (others pass any), `info` its
// length and checksum on every rank.
void write_manifest(const comm::Communicator& comm, hid_t file, hid_t dxpl,
                    const std::string& manifest, const ManifestInfo& info) {
  Hid type = string_type(static_cast<std::size_t>(info.size));
  Hid space = dataspace_hid(H5Screate(H5S_SCALAR), "H5Screate");
  Hid dcpl = plist_hid(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(DATASET_CREATE)");
  check_h5(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  check_h5(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  check_h5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  Hid dset = dataset_hid(H5Dcreate2(file, ckpt::kManifestJson, type.get(), space.get(), H5P_DEFAULT,
                                    dcpl.get(), H5P_DEFAULT),
                         "H5Dcreate2");
  write_attr_u64(dset.get(), ckpt::kChecksum, info.checksum);
  Hid file_space = dataspace_hid(H5Dget_space(dset.get()), "H5Dget_space");
  Hid mem_space = dataspace_hid(H5Screate(H5S_SCALAR), "H5Screate");
  if (comm.rank() != 0) {
    check_h5(H5Sselect_none(file_space.get()), "H5Sselect_none");
    check_h5(H5Sselect_none(mem_space.get()), "H5Sselect_none");
  }
  check_h5(H5Dwrite(dset.get(), type.get(), mem_space.get(), file_space.get(), dxpl,
                    comm.rank() == 0 ? manifest.c_str() : ""),
           "H5Dwrite(/manifest_json)");
}

Tier2Starts exclusive_starts(const comm::Communicator& comm, const LocalTier2& t,
                             std::uint64_t num_owned) {
  const std::array<std::uint64_t, 3> mine{t.total_keys, t.total_keys + num_owned, t.total_bytes};
  std::array<std::uint64_t, 3> before{0, 0, 0};
  comm::check_mpi(MPI_Exscan(mine.data(), before.data(), 3, MPI_UINT64_T, MPI_SUM, comm.mpi_comm()),
                  "MPI_Exscan");
  if (comm.rank() == 0) before = {0, 0, 0};  // MPI leaves rank 0's result undefined
  return {before[0], before[1], before[2]};
}

// Chooses the data path collectively: direct only when every rank could
// open the file with O_DIRECT. Returns the descriptor (empty for MPI-IO) and
// sets `err` (agreed by the caller) when kDirect was demanded but refused.
std::optional<DirectFile> open_data_path(const comm::Communicator& comm,
                                         const std::filesystem::path& tmp,
                                         CheckpointDataPath wanted, std::string& err) {
  if (wanted == CheckpointDataPath::kMpiIo) return std::nullopt;
  std::optional<DirectFile> direct;
  std::string why = "the file system refuses O_DIRECT";
  try {
    direct = DirectFile::open(tmp);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (comm.any(!direct.has_value())) {
    if (wanted == CheckpointDataPath::kDirect && !direct.has_value()) {
      err = "direct checkpoint writes were asked for: " + why;
    }
    return std::nullopt;
  }
  return direct;
}

// The data of one file through the chosen path; returns the error to agree on.
std::string write_data(const comm::Communicator& comm, const std::filesystem::path& tmp,
                       const core::TwoTierSet& set, const CheckpointDataTargets& targets,
                       LocalTier2& t, const Tier2Starts& starts, hid_t dxpl,
                       CheckpointDataPath wanted, CheckpointDataProgress& progress,
                       bool& used_direct) {
  std::string err;
  const std::optional<DirectFile> direct = open_data_path(comm, tmp, wanted, err);
  used_direct = direct.has_value();
  if (any_rank_failed(comm, err, "checkpoint write")) return err;  // nothing written: discarded
  if (direct) return write_data_direct(comm, set, targets, t, starts, dxpl, *direct, progress);
  return write_data_mpiio(comm, set, targets, t, starts, dxpl, tmp, progress);
}

// Attributes every format-2 file carries (a run file: these only).
void write_common_attributes(hid_t root, const CheckpointHeader& h, std::uint32_t ranks) {
  write_attr_u32(root, ckpt::kFormatVersion, h.format_version);
  write_attr_string(root, ckpt::kToolVersion, h.tool_version);
  write_attr_u32(root, ckpt::kNumSlices, h.params.num_slices);
  write_attr_u64(root, ckpt::kGeneration, h.generation);
  write_attr_string(root, ckpt::kRunId, h.run_id);
  write_attr_u32(root, ckpt::kWrittenByRanks, ranks);
}

// Collective: the new run file (tier 2 of every owned slice: the delta merged
// with the newest t.depth runs). Returns a merge or data-path error to agree
// on (the file is complete when it is empty on every rank).
std::string write_run_file(const comm::Communicator& comm, const std::filesystem::path& tmp,
                           const CheckpointHeader& h, core::RunInfo run,
                           const core::TwoTierSet& set, LocalTier2& t, CheckpointDataPath wanted,
                           CheckpointDataProgress& progress, bool& used_direct) {
  const core::SliceRange owned = set.owned();
  const std::uint64_t num_slices = h.params.num_slices;
  const std::uint64_t n = owned.size();
  const Tier2Starts starts = exclusive_starts(comm, t, n);
  const std::uint64_t all_keys = comm.allreduce_sum(t.total_keys);
  const std::uint64_t all_bytes = comm.allreduce_sum(t.total_bytes);

  Hid file = create_parallel_file(comm, tmp);
  std::string err;
  {
    Hid dxpl = collective_dxpl();
    check_h5(H5Pset_dxpl_mpio_collective_opt(dxpl.get(), H5FD_MPIO_INDIVIDUAL_IO),
             "H5Pset_dxpl_mpio_collective_opt");
    write_common_attributes(file.get(), h, comm.usize());
    write_attr_string(file.get(), ckpt::kContent, ckpt::kContentRun);
    write_attr_u64(file.get(), ckpt::kTier2Run, run.id);
    write_attr_u32(file.get(), ckpt::kRunLevel, run.level);

    Hid tier2 = create_group(file.get(), ckpt::kTier2Group);
    const auto write_per_slice = [&](hid_t dset, const std::vector<std::uint64_t>& v) {
      write_1d_collective(comm, dset, dxpl.get(), H5T_NATIVE_UINT64, owned.first, v.data(),
                          v.size(), 8, &progress.tracker);
    };
    const auto per_slice_dataset = [&](const char* name) {
      return create_contiguous_dataset(file.get(), name, H5T_STD_U64LE, num_slices);
    };
    Hid slice_keys = per_slice_dataset(ckpt::kSliceKeys);
    write_per_slice(slice_keys.get(), t.keys);
    Hid slice_bytes = per_slice_dataset(ckpt::kSliceBytes);
    write_per_slice(slice_bytes.get(), t.bytes);
    Hid checksums = per_slice_dataset(ckpt::kTier2Checksums);  // filled by the data pass
    Hid fps = create_contiguous_dataset(file.get(), ckpt::kFingerprints, H5T_STD_U64LE, all_keys);
    Hid offs =
        create_contiguous_dataset(file.get(), ckpt::kOffsets, H5T_STD_U64LE, all_keys + num_slices);
    Hid bytes = create_contiguous_dataset(file.get(), ckpt::kBytes, H5T_STD_U8LE, all_bytes);
    CheckpointDataTargets targets;
    targets.tier2 = true;
    targets.fingerprints = fps.get();
    targets.offsets = offs.get();
    targets.bytes = bytes.get();
    // The forms (--confirm-jaccard), created before any data is written.
    const std::uint64_t form_bytes = t.confirmer != nullptr ? t.confirmer->form_bytes() : 0;
    Hid forms, form_checksums, origins, origin_checksums;
    if (t.confirmer != nullptr) {
      forms = create_contiguous_dataset(file.get(), ckpt::kTier2Forms, H5T_STD_U8LE,
                                        all_keys * form_bytes);
      form_checksums = per_slice_dataset(ckpt::kTier2FormChecksums);
    }
    if (t.origins) {  // two u64 a key: run ordinal, position
      origins = create_contiguous_dataset(file.get(), ckpt::kTier2FormOrigins, H5T_STD_U64LE,
                                          all_keys * 2);
      origin_checksums = per_slice_dataset(ckpt::kTier2FormOriginChecksums);
    }
    err = write_data(comm, tmp, set, targets, t, starts, dxpl.get(), wanted, progress, used_direct);
    write_per_slice(checksums.get(), t.checksums);
    if (t.confirmer != nullptr) {  // filled by the data pass; collective MPI-IO on both paths
      write_1d_collective(comm, forms.get(), dxpl.get(), H5T_NATIVE_UINT8, starts.keys * form_bytes,
                          t.forms.data(), t.forms.size(), 1, &progress.tracker);
      write_per_slice(form_checksums.get(), t.form_checksums);
      progress.written += t.forms.size();
    }
    if (t.origins) {  // the host's u64 (little-endian on every supported host) as written
      write_1d_collective(comm, origins.get(), dxpl.get(), H5T_NATIVE_UINT64, starts.keys * 2,
                          t.form_origins.data(), t.form_origins.size() / 8, 8, &progress.tracker);
      write_per_slice(origin_checksums.get(), t.form_origin_checksums);
      progress.written += t.form_origins.size();
    }
  }
  file.close("H5Fclose");
  return err;
}

// Rank 0 writes the small run-list datasets; the others join empty.
void write_run_list(const comm::Communicator& comm, hid_t file, hid_t dxpl,
                    std::span<const CheckpointRunRef> runs, bool windowed, IoModeTracker& tracker) {
  Hid group = create_group(file, ckpt::kRunsGroup);
  const std::uint64_t r = runs.size();
  const auto column = [&](const char* name, auto field) {
    std::vector<std::uint64_t> v;
    for (const CheckpointRunRef& ref : runs) v.push_back(field(ref));
    Hid d = create_contiguous_dataset(file, name, H5T_STD_U64LE, r);
    const bool mine = comm.rank() == 0;
    write_1d_collective(comm, d.get(), dxpl, H5T_NATIVE_UINT64, 0, mine ? v.data() : nullptr,
                        mine ? r : 0, 8, &tracker);
  };
  column(ckpt::kRunIds, [](const CheckpointRunRef& x) { return x.id; });
  column(ckpt::kRunLevels, [](const CheckpointRunRef& x) { return std::uint64_t{x.level}; });
  column(ckpt::kRunKeys, [](const CheckpointRunRef& x) { return x.keys; });
  column(ckpt::kRunBytes, [](const CheckpointRunRef& x) { return x.bytes; });
  if (windowed) column(ckpt::kRunSlots, [](const CheckpointRunRef& x) { return x.slot; });
}

// Collective: the generation file (header, manifest, Bloom, run list).
std::string write_generation_file(
    const comm::Communicator& comm, const std::filesystem::path& tmp, const CheckpointHeader& h,
    const ManifestInfo& manifest, std::span<const CheckpointLayerInfo> layers,
    std::span<const CheckpointRunRef> runs, const core::TwoTierSet& set, LocalTier2& t,
    const store::InputOrderSlices* order_rows, const store::InputOrderSlices* retracted_rows,
    CheckpointDataPath wanted, CheckpointDataProgress& progress, bool& used_direct) {
  const core::SliceRange owned = set.owned();
  const std::uint64_t num_slices = h.params.num_slices;
  const auto num_layers = static_cast<std::uint32_t>(layers.size());
  Hid file = create_parallel_file(comm, tmp);
  std::string err;
  {
    Hid dxpl = collective_dxpl();
    check_h5(H5Pset_dxpl_mpio_collective_opt(dxpl.get(), H5FD_MPIO_INDIVIDUAL_IO),
             "H5Pset_dxpl_mpio_collective_opt");
    write_header_attributes(file.get(), h, comm.usize(), num_layers);
    write_manifest(comm, file.get(), dxpl.get(), h.manifest_json, manifest);
    write_run_list(comm, file.get(), dxpl.get(), runs, !h.window.empty(), progress.tracker);
    if (order_rows != nullptr) {
      progress.written += write_input_order_rows(comm, file.get(), dxpl.get(), *order_rows, owned,
                                                 h.params.num_slices, progress.tracker);
    }
    if (retracted_rows != nullptr) {
      progress.written +=
          write_input_order_rows(comm, file.get(), dxpl.get(), *retracted_rows, owned,
                                 h.params.num_slices, progress.tracker, store::kRetractedTable);
    }

    CheckpointDataTargets targets;
    std::vector<Hid> layer_dsets;
    Hid bloom = create_group(file.get(), ckpt::kBloomGroup);
    for (std::uint32_t l = 0; l < num_layers; ++l) {
      const core::BloomLayerGeometry& g = layers[l].geometry;
      const std::uint64_t per_slice = g.blocks_per_slice * core::kBlockWords;
      const std::string name = "layer_" + std::to_string(l);
      Hid dset = create_contiguous_dataset(bloom.get(), name.c_str(), H5T_STD_U64LE,
                                           num_slices * per_slice);
      write_attr_u64(dset.get(), ckpt::kCapacity, g.capacity);
      write_attr_f64(dset.get(), ckpt::kFprTarget, g.fpr_target);
      write_attr_f64(dset.get(), ckpt::kBitsPerKey, g.bits_per_key);
      write_attr_u32(dset.get(), ckpt::kProbes, g.k);
      write_attr_u64(dset.get(), ckpt::kBlocksPerSlice, g.blocks_per_slice);
      write_attr_u64(dset.get(), ckpt::kInserted, layers[l].inserted);
      if (!h.window.empty()) write_attr_u64(dset.get(), ckpt::kSlot, layers[l].slot);
      targets.bloom_layers.push_back(dset.get());
      targets.bloom_words_per_slice.push_back(per_slice);
      layer_dsets.push_back(std::move(dset));
    }
    Hid bloom_sums = create_contiguous_dataset_2d(file.get(), ckpt::kBloomChecksums, H5T_STD_U64LE,
                                                  num_layers, num_slices);
    write_columns_2d(bloom_sums.get(), dxpl.get(), H5T_NATIVE_UINT64, num_layers, owned.first,
                     owned.last, t.bloom_checksums.data(), 8, &progress.tracker);
    err = write_data(comm, tmp, set, targets, t, {}, dxpl.get(), wanted, progress, used_direct);
  }
  file.close("H5Fclose");
  return err;
}

// Per run of the set (oldest first): keys and key bytes over all ranks.
std::vector<CheckpointRunRef> gather_run_refs(const comm::Communicator& comm,
                                              const core::ExactShard& shard) {
  const std::vector<core::RunInfo>& runs = shard.runs();
  std::vector<std::uint64_t> sums(2 * runs.size(), 0);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (std::uint32_t s = shard.owned().first; s < shard.owned().last; ++s) {
      const core::SliceBaseView v = shard.run_view(r, s);
      sums[2 * r] += v.size();
      sums[2 * r + 1] += v.bytes.size();
    }
  }
  sums = comm.allreduce_sum(sums);
  std::vector<CheckpointRunRef> out;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    out.push_back({runs[r].id, runs[r].level, sums[2 * r], sums[2 * r + 1], runs[r].slot});
  }
  return out;
}

// A digest of the run list, to check that every rank holds the same runs.
std::uint64_t runs_digest(const std::vector<core::RunInfo>& runs) {
  std::vector<std::uint64_t> v;
  for (const core::RunInfo& r : runs) {
    v.push_back(r.id);
    v.push_back(r.level);
  }
  return XXH3_64bits(v.data(), v.size() * sizeof(std::uint64_t)) ^ runs.size();
}

// Rank 0: a fresh run id, generation << 32 | a random tag.
std::uint64_t new_run_id(const comm::Communicator& comm, std::uint64_t generation) {
  std::uint64_t id = 0;
  if (comm.rank() == 0) {
    std::random_device rd;
    id = (generation << 32) | (rd() & 0xFFFFFFFFU);
  }
  return comm.allreduce_max(id);  // rank 0 holds the only non-zero value
}

std::string validate_inputs(const CheckpointHeader& h, std::span<const CheckpointLayerInfo> layers,
                            const core::TwoTierSet& set, int keep) {
  if (keep < 1) return "keep must be >= 1, got " + std::to_string(keep);
  if (!same_params(h.params, set.bloom().params())) {
    return "header params differ from the filter's params";
  }
  if (h.format_version != kCheckpointFormatVersion) {  // this build writes only its own
    return "header format_version " + std::to_string(h.format_version) + " is not " +
           std::to_string(kCheckpointFormatVersion);
  }
  // More layers than a reader accepts would commit a state nobody can load.
  const std::uint64_t max_layers = h.window.empty() ? ckpt::kMaxLayers : ckpt::kMaxWindowedLayers;
  if (layers.size() > max_layers) {
    return std::to_string(layers.size()) + " Bloom layers; a generation holds at most " +
           std::to_string(max_layers) + " (give a larger --capacity)";
  }
  if (layers.size() != set.bloom().num_layers()) {
    return std::to_string(layers.size()) + " layer infos for a filter of " +
           std::to_string(set.bloom().num_layers()) + " layers";
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const core::BloomLayerGeometry& g = set.bloom().layer_geometry(l);
    const core::BloomLayerGeometry& w = layers[l].geometry;
    if (g.capacity != w.capacity || g.k != w.k || g.blocks_per_slice != w.blocks_per_slice) {
      return "layer " + std::to_string(l) + " info does not match the filter's geometry";
    }
    if (layers[l].slot != set.bloom().layer_slot(l)) {
      return "layer " + std::to_string(l) + " info names slot " + std::to_string(layers[l].slot) +
             ", the filter's layer is of slot " + std::to_string(set.bloom().layer_slot(l));
    }
  }
  if (h.window.empty() != (set.bloom().window() == 0)) {
    return "header window '" + h.window + "' does not match a filter of window " +
           std::to_string(set.bloom().window());
  }
  if (!h.window.empty() && h.window_slot != set.bloom().current_slot()) {
    return "header window_slot " + std::to_string(h.window_slot) + " is not the filter's slot " +
           std::to_string(set.bloom().current_slot());
  }
  return {};
}

// Which runs the new run absorbs. A windowed state merges only the current
// slot's runs (the newest ones): runs of older slots must stay whole so
// that they can expire.
core::CompactionPlan compaction_plan(const CheckpointHeader& h,
                                     const std::vector<core::RunInfo>& runs,
                                     const core::CompactionPolicy& policy) {
  std::vector<std::uint64_t> slots;
  for (const core::RunInfo& r : runs) slots.push_back(r.slot);
  const std::size_t mergeable =
      h.window.empty() ? runs.size() : core::current_slot_suffix(slots, h.window_slot);
  std::vector<std::uint32_t> levels;
  for (std::size_t i = runs.size() - mergeable; i < runs.size(); ++i) {
    levels.push_back(runs[i].level);
  }
  return core::plan_compaction(levels, policy);
}

// Bytes both files take: per-key data, per-slice datasets, Bloom words,
// 1 MiB of HDF5 metadata and alignment slack.
std::uint64_t space_needed(const CheckpointHeader& h, std::span<const CheckpointLayerInfo> layers,
                           const CheckpointRunRef& new_run, std::uint64_t form_bytes) {
  const std::uint64_t p = h.params.num_slices;
  std::uint64_t need = new_run.keys * (16 + form_bytes) + new_run.bytes + p * 8 * 6 + (1U << 20);
  for (const CheckpointLayerInfo& l : layers) {
    need += p * l.geometry.blocks_per_slice * core::kBlockWords * 8 + p * 8;
  }
  return need;
}

// Collective: every check before anything is written (the inputs, the
// tiling of the owned slices, the same layers and runs on every rank), the
// compaction plan, the state dir made on rank 0. Returns "" or this rank's
// error; the caller agrees on it.
std::string check_before_write(const comm::Communicator& comm,
                               const std::filesystem::path& state_dir, const CheckpointHeader& h,
                               std::span<const CheckpointLayerInfo> layers,
                               const core::TwoTierSet& set, const CheckpointWriteOptions& options,
                               core::CompactionPlan& plan) {
  std::string err = validate_inputs(h, layers, set, options.keep);
  try {
    if (err.empty()) err = form_source_problem(form_scheme_of(h), options.forms);
    if (err.empty() && (options.input_order_rows != nullptr) != h.input_order_rows) {
      err = h.input_order_rows ? "the header says input-order rows but none were given"
                               : "input-order rows were given for a header without them";
    }
    if (err.empty() && (options.input_order_retracted != nullptr) != h.input_order_retracted_rows) {
      err = h.input_order_retracted_rows
                ? "the header says input-order retracted rows but none were given"
                : "input-order retracted rows were given for a header without them";
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  const std::string tiling = check_tiling(comm, set.owned(), h.params.num_slices);  // collective
  if (err.empty()) err = tiling;
  // Same layer count and runs on every rank (min via the max of the complements).
  const auto differs = [&](std::uint64_t v) {
    return comm.allreduce_max(v) != ~comm.allreduce_max(~v);
  };
  if (differs(layers.size()) && err.empty()) err = "ranks disagree on the number of Bloom layers";
  const std::vector<core::RunInfo>& runs = set.exact().runs();
  if (differs(runs_digest(runs)) && err.empty()) err = "ranks hold different tier-2 runs";
  try {
    plan = compaction_plan(h, runs, options.compaction);
  } catch (const std::exception& e) {
    if (err.empty()) err = e.what();
  }
  if (comm.rank() == 0 && err.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(state_dir, ec);
    if (ec) err = "cannot create state dir " + state_dir.string() + ": " + ec.message();
  }
  return err;
}

// A file written under a temporary name and where it is committed to.
struct Rename {
  std::filesystem::path from, to;
};

// Rank 0: the commit. The fence, both files made durable and renamed into
// place, the directory synced, LATEST replaced, then old generations and
// unreferenced runs pruned in the background. Returns "" or the error; on
// an error neither file is committed (the run file is GC'd later).
std::string commit_files(const Rename& run, const Rename& generation,
                         const std::filesystem::path& state_dir, std::uint64_t g, int keep,
                         const std::vector<CheckpointRunRef>& refs,
                         const std::function<void()>& before_commit) {
  try {
    if (before_commit) before_commit();
    fsync_path(run.from);
    fsync_path(generation.from);
    std::error_code ec;
    std::filesystem::rename(run.from, run.to, ec);
    if (ec) throw CheckpointError("rename to " + run.to.string() + ": " + ec.message());
    std::filesystem::rename(generation.from, generation.to, ec);
    if (ec) throw CheckpointError("rename to " + generation.to.string() + ": " + ec.message());
    fsync_path(state_dir);
    write_latest(state_dir, g);
    prune_generations_in_background(state_dir, g, keep,
                                    unreferenced_runs(state_dir, g, keep, refs));
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(generation.from, ec);
    std::filesystem::remove(run.from, ec);
    return e.what();
  }
  return {};
}

// The figures of one write besides its timings.
CheckpointWriteStats write_stats(const CheckpointDataProgress& progress, bool used_direct,
                                 const core::CompactionPlan& plan,
                                 const std::vector<CheckpointRunRef>& refs) {
  CheckpointWriteStats s;
  s.bytes_written = progress.written;
  s.direct_bytes = progress.direct_bytes;
  s.direct = used_direct;
  s.transfers = progress.tracker.calls;
  s.non_collective = progress.tracker.non_collective;
  s.last_io_mode = progress.tracker.last_mode;
  s.no_collective_cause = progress.tracker.no_collective_cause;
  s.run_keys = refs.back().keys;
  s.merged_runs = plan.merge_runs;
  s.runs = refs.size();
  for (const CheckpointRunRef& r : refs) s.tier2_keys += r.keys;
  return s;
}

}  // namespace

std::filesystem::path write_checkpoint(const comm::Communicator& comm,
                                       const std::filesystem::path& state_dir,
                                       const CheckpointHeader& header,
                                       std::span<const CheckpointLayerInfo> layers,
                                       const core::TwoTierSet& set,
                                       const CheckpointWriteOptions& options,
                                       CheckpointWriteStats* stats) {
  const int keep = options.keep;
  const auto t0 = std::chrono::steady_clock::now();
  quiet_hdf5_errors();
  // The previous generation's deletions finish before this file takes space.
  const std::string prune_error = comm.rank() == 0 ? wait_for_background_prune() : std::string();
  ManifestInfo manifest;
  const CheckpointHeader h = broadcast_header(comm, header, manifest);
  const std::filesystem::path final_path = generation_path(state_dir, h.generation);
  std::filesystem::path tmp = final_path;
  tmp += ".tmp";
  const std::string context = "checkpoint " + final_path.string() + " not written";

  core::CompactionPlan plan;
  std::string err = check_before_write(comm, state_dir, h, layers, set, options, plan);
  agree_or_throw(comm, err, context);
  const core::RunInfo new_run{new_run_id(comm, h.generation), plan.level, h.window_slot};
  const std::filesystem::path run_final = run_path(state_dir, new_run.id);
  std::filesystem::path run_tmp = run_final;
  run_tmp += ".tmp";

  const auto t1 = std::chrono::steady_clock::now();
  LocalTier2 local;
  std::uint64_t delta_write_bytes = 0;
  std::optional<store::InputOrderSlices> order_rows;  // this rank's, grouped by slice
  std::optional<store::InputOrderSlices> retracted_rows;
  try {
    if (options.input_order_rows != nullptr) {
      order_rows =
          group_owned_input_order_rows(*options.input_order_rows, set.owned(), h.params.num_slices);
    }
    if (options.input_order_retracted != nullptr) {
      retracted_rows = group_owned_input_order_rows(*options.input_order_retracted, set.owned(),
                                                    h.params.num_slices, store::kRetractedTable);
    }
    const std::optional<FormScheme> scheme = form_scheme_of(h);
    local = prepare_local(set, plan.merge_runs, options.forms, scheme && scheme->origins);
    for (std::uint32_t s = set.owned().first; s < set.owned().last; ++s) {
      const core::SliceSize d = set.exact().merged_slice_size(s, 0);
      delta_write_bytes += d.keys * 16 + 8 + d.bytes;
    }
  } catch (const std::exception& e) {
    err = std::string("sizing tier 2: ") + e.what();
  }
  agree_or_throw(comm, err, context);
  std::vector<CheckpointRunRef> refs = gather_run_refs(comm, set.exact());
  refs.resize(refs.size() - plan.merge_runs);
  refs.push_back({new_run.id, new_run.level, comm.allreduce_sum(local.total_keys),
                  comm.allreduce_sum(local.total_bytes), new_run.slot});
  // The input order's rows: 24 bytes a copy, plus 16 a slice, each table.
  const auto table_bytes = [&](const std::optional<store::InputOrderSlices>& t) {
    return t ? comm.allreduce_sum(t->rows.size()) * sizeof(store::InputOrderRow) +
                   std::uint64_t{h.params.num_slices} * 16
             : 0;
  };
  const std::uint64_t order_bytes = table_bytes(order_rows) + table_bytes(retracted_rows);
  if (comm.rank() == 0) {
    // Origins: 16 more bytes a key.
    std::uint64_t form_bytes = options.forms != nullptr ? options.forms->form_bytes() : 0;
    if (local.origins) form_bytes += store::kFormOriginRecordBytes;
    err = reserve_space(state_dir, space_needed(h, layers, refs.back(), form_bytes) + order_bytes);
  }
  agree_or_throw(comm, err, context);

  const auto t2 = std::chrono::steady_clock::now();
  CheckpointDataProgress progress;
  bool used_direct = false;
  const auto discard = [&] {
    if (comm.rank() != 0) return;
    std::error_code ec;
    std::filesystem::remove(run_tmp, ec);
    std::filesystem::remove(tmp, ec);
  };
  comm::heartbeat();
  try {
    err = write_run_file(comm, run_tmp, h, new_run, set, local, options.data_path, progress,
                         used_direct);
  } catch (const std::exception& e) {
    err = std::string("run file: ") + e.what();
  }
  if (any_rank_failed(comm, err, context)) {
    discard();
    agree_or_throw(comm, err, context);
  }
  const std::uint64_t run_written = progress.written;
  comm::heartbeat();
  try {
    err = write_generation_file(
        comm, tmp, h, manifest, layers, refs, set, local, order_rows ? &*order_rows : nullptr,
        retracted_rows ? &*retracted_rows : nullptr, options.data_path, progress, used_direct);
  } catch (const std::exception& e) {
    err = e.what();
  }
  if (err.empty()) err = sync_own_bytes(run_tmp);
  if (err.empty()) err = sync_own_bytes(tmp);
  if (any_rank_failed(comm, err, context)) {
    discard();
    agree_or_throw(comm, err, context);
  }
  comm::heartbeat();

  const auto t3 = std::chrono::steady_clock::now();
  std::string commit_err;
  if (comm.rank() == 0) {
    commit_err = commit_files({run_tmp, run_final}, {tmp, final_path}, state_dir, h.generation,
                              keep, refs, options.before_commit);
  }
  commit_err = comm.broadcast(commit_err);
  if (!commit_err.empty()) throw CheckpointError(context + " (commit on rank 0): " + commit_err);

  if (stats != nullptr) {
    *stats = write_stats(progress, used_direct, plan, refs);
    stats->prune_error = prune_error;
    stats->compaction_bytes = plan.merge_runs > 0 && run_written > delta_write_bytes
                                  ? run_written - delta_write_bytes
                                  : 0;
    const auto t4 = std::chrono::steady_clock::now();
    const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    stats->seconds = secs(t0, t4);
    stats->merge_seconds = secs(t1, t2) + progress.merge_seconds;
    stats->io_seconds = secs(t2, t3) - progress.merge_seconds;
    stats->commit_seconds = secs(t3, t4);
  }
  return final_path;
}

std::optional<CheckpointDataPath> parse_checkpoint_data_path(std::string_view name) {
  if (name == "auto") return CheckpointDataPath::kAuto;
  if (name == "direct") return CheckpointDataPath::kDirect;
  if (name == "mpiio") return CheckpointDataPath::kMpiIo;
  return std::nullopt;
}

}  // namespace bloomshard::io
