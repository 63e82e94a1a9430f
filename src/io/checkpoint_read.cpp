// Reading side of the checkpoint store: the summary (serial), load and
// rebase (collective, tier 2 mapped, never copied) and verify (collective),
// for format 2 (a generation file and the run files it lists) and format 1
// (tier 2 inside the generation file: one run). The same index code serves
// all of them; in a parallel open every rank reads the same small metadata
// (collective metadata reads make that one read plus a broadcast inside
// HDF5).
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "bloomshard/comm/heartbeat.hpp"
#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slot_window.hpp"
#include "bloomshard/io/checkpoint_checksum.hpp"
#include "bloomshard/io/checkpoint_collective.hpp"
#include "bloomshard/io/checkpoint_key_sample.hpp"
#include "bloomshard/io/checkpoint_mapping.hpp"
#include "bloomshard/io/checkpoint_store.hpp"
#include "bloomshard/io/checkpoint_validate.hpp"
#include "bloomshard/io/hdf5_parallel.hpp"

namespace bloomshard::io {

// The tier-2 base is used in place from the mapped file: the stored
// little-endian values must be the host's.
static_assert(std::endian::native == std::endian::little,
              "checkpoint tier-2 mapping needs a little-endian host");

namespace {

std::string layer_name(std::size_t l) { return "/bloom/layer_" + std::to_string(l); }

// The tier-2 datasets of one file (a format-1 generation, or a run file):
// per-slice sizes and their exclusive prefix sums (P + 1 entries).
struct Tier2Index {
  std::vector<std::uint64_t> slice_keys, slice_bytes;
  std::vector<std::uint64_t> key_start, byte_start;
  std::uint64_t keys = 0, bytes = 0;
};

// Everything of a generation file besides bits and keys (and, format 1, the
// index of its own tier 2).
struct FileIndex {
  CheckpointSummary summary;
  Tier2Index tier2;  // format 1 only
};

class IndexReader {
 public:
  IndexReader(hid_t file, hid_t dxpl, std::string name)
      : file_(file), dxpl_(dxpl), name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw CheckpointError(name_ + ": " + what);
  }
  void need_attr(hid_t obj, const char* attr, const std::string& where) const {
    if (!has_attr(obj, attr)) fail("missing attribute " + where + attr);
  }
  std::uint64_t u64(const char* attr, hid_t obj = -1, const std::string& where = "/") const {
    if (obj < 0) obj = file_;
    need_attr(obj, attr, where);
    return read_attr_u64(obj, attr);
  }
  double f64(const char* attr, hid_t obj = -1, const std::string& where = "/") const {
    if (obj < 0) obj = file_;
    need_attr(obj, attr, where);
    return read_attr_f64(obj, attr);
  }
  std::string str(const char* attr) const {
    need_attr(file_, attr, "/");
    return read_attr_string(file_, attr);
  }
  // `implied_by` names the attributes the expected shape comes from, so a
  // damaged attribute (no checksum covers them) is named with the dataset.
  Hid dataset(const std::string& path, const std::vector<std::uint64_t>& dims,
              const std::string& implied_by = {}) const {
    if (!has_link(file_, path)) fail("missing dataset " + path);
    Hid d = open_dataset(file_, path);
    const std::vector<std::uint64_t> got = dataset_dims(d.get());
    if (got != dims) {
      std::string text;
      for (auto v : got) text += "[" + std::to_string(v) + "]";
      std::string want;
      for (auto v : dims) want += "[" + std::to_string(v) + "]";
      fail("dataset " + path + " has shape " + text + ", expected " + want +
           (implied_by.empty()
                ? ""
                : " (" + implied_by + "): the attributes or the dataset are damaged"));
    }
    return d;
  }
  std::string manifest(bool checksummed) const {
    if (!has_link(file_, ckpt::kManifestJson))
      fail(std::string("missing dataset ") + ckpt::kManifestJson);
    Hid d = open_dataset(file_, ckpt::kManifestJson);
    const std::string where = std::string(ckpt::kManifestJson) + "/";
    // One string: H5Dread below writes every element into a one-string buffer.
    if (const std::vector<std::uint64_t> dims = dataset_dims(d.get());
        std::any_of(dims.begin(), dims.end(), [](std::uint64_t n) { return n != 1; })) {
      fail(std::string(ckpt::kManifestJson) + " does not hold exactly one string");
    }
    Hid type = datatype_hid(H5Dget_type(d.get()), "H5Dget_type");
    if (H5Tget_class(type.get()) != H5T_STRING ||
        check_h5(H5Tis_variable_str(type.get()), "H5Tis_variable_str") > 0) {
      fail(std::string(ckpt::kManifestJson) + " is not a fixed-length string");
    }
    std::string buf(H5Tget_size(type.get()), '\0');
    check_h5(H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, dxpl_, buf.data()),
             "H5Dread(/manifest_json)");
    const std::size_t nul = buf.find('\0');
    if (nul != std::string::npos) buf.resize(nul);
    if (checksummed) {
      const std::uint64_t stored = u64(ckpt::kChecksum, d.get(), where);
      if (stored != manifest_checksum(buf)) {
        fail(std::string(ckpt::kManifestJson) + ": XXH3 checksum mismatch (stored " +
             std::to_string(stored) + ", computed " + std::to_string(manifest_checksum(buf)) + ")");
      }
    }
    return buf;
  }

  FileIndex read() const {
    FileIndex idx;
    CheckpointSummary& s = idx.summary;
    CheckpointHeader& h = s.header;
    if (!has_attr(file_, ckpt::kFormatVersion)) {
      fail("not a bloomshard checkpoint (no format_version attribute)");
    }
    const std::uint64_t version = read_attr_u64(file_, ckpt::kFormatVersion);
    if (version > kCheckpointFormatVersion) {
      fail("checkpoint format_version " + std::to_string(version) +
           " is newer than this build reads (format_version " +
           std::to_string(kCheckpointFormatVersion) + "); use a newer bloomshard");
    }
    if (version < kOldestReadableFormatVersion) {
      fail("checkpoint format_version " + std::to_string(version) +
           " is not a valid version (this build reads " +
           std::to_string(kOldestReadableFormatVersion) + " to " +
           std::to_string(kCheckpointFormatVersion) + ")");
    }
    if (has_attr(file_, ckpt::kContent)) {
      fail("a tier-2 run file, not a generation (open ckpt-<g>.h5)");
    }
    h.format_version = static_cast<std::uint32_t>(version);
    h.tool_version = str(ckpt::kToolVersion);
    h.hash_scheme = str(ckpt::kHashScheme);
    h.hash_seed = u64(ckpt::kHashSeed);
    h.bloom_layout = str(ckpt::kBloomLayout);
    h.normalization = str(ckpt::kNormalization);
    h.key_field = str(ckpt::kKeyField);
    h.key_encoding = str(ckpt::kKeyEncoding);
    if (has_attr(file_, ckpt::kKeyScheme)) h.key_scheme = str(ckpt::kKeyScheme);
    read_window(h);
    read_split_mark(h);
    const std::uint64_t p = u64(ckpt::kNumSlices);
    if (p == 0 || p > core::kMaxSlices) fail("num_slices " + std::to_string(p) + " out of range");
    h.params.num_slices = static_cast<std::uint32_t>(p);
    h.params.initial_capacity = u64(ckpt::kInitialCapacity);
    h.params.fpr_target = f64(ckpt::kFprTarget);
    h.params.growth = f64(ckpt::kGrowth);
    h.params.tightening = f64(ckpt::kTightening);
    h.generation = u64(ckpt::kGeneration);
    h.run_id = str(ckpt::kRunId);
    h.finished = u64(ckpt::kFinished) != 0;
    s.written_by_ranks = static_cast<std::uint32_t>(u64(ckpt::kWrittenByRanks));
    const std::uint64_t num_layers = u64(ckpt::kNumLayers);
    const std::uint64_t max_layers = h.window.empty() ? ckpt::kMaxLayers : ckpt::kMaxWindowedLayers;
    if (num_layers == 0 || num_layers > max_layers) {
      fail("num_layers " + std::to_string(num_layers) + " out of range [1, " +
           std::to_string(max_layers) + "]");
    }
    h.manifest_json = manifest(version >= 2);

    for (std::uint64_t l = 0; l < num_layers; ++l) {
      const std::string name = layer_name(l);
      if (!has_link(file_, name)) fail("missing dataset " + name);
      Hid d = open_dataset(file_, name);
      const std::string where = name + "/";
      CheckpointLayerInfo info;
      info.geometry.capacity = u64(ckpt::kCapacity, d.get(), where);
      info.geometry.fpr_target = f64(ckpt::kFprTarget, d.get(), where);
      info.geometry.bits_per_key = f64(ckpt::kBitsPerKey, d.get(), where);
      info.geometry.k = static_cast<std::uint32_t>(u64(ckpt::kProbes, d.get(), where));
      info.geometry.blocks_per_slice = u64(ckpt::kBlocksPerSlice, d.get(), where);
      info.inserted = u64(ckpt::kInserted, d.get(), where);
      if (!h.window.empty()) info.slot = u64(ckpt::kSlot, d.get(), where);
      const std::uint64_t bps = info.geometry.blocks_per_slice;
      if (bps == 0 || bps > (std::uint64_t{1} << 40) / p) {
        fail(name + " blocks_per_slice " + std::to_string(bps) + " out of range");
      }
      Hid words = dataset(name, {p * bps * core::kBlockWords},
                          "attribute num_slices " + std::to_string(p) + " x " + name +
                              " attribute blocks_per_slice " + std::to_string(bps) + " x 8 words");
      // The words must be stored in the file, not only declared: a reader
      // sizes its Bloom layers by them.
      if (H5Dget_storage_size(words.get()) != p * bps * core::kBlockWords * 8) {
        fail(name + " holds " + std::to_string(H5Dget_storage_size(words.get())) +
             " bytes, its shape needs " + std::to_string(p * bps * core::kBlockWords * 8));
      }
      s.layers.push_back(info);
    }
    (void)dataset(ckpt::kBloomChecksums, {num_layers, p});
    if (!h.window.empty()) {
      std::vector<std::uint64_t> tags;
      for (const CheckpointLayerInfo& l : s.layers) tags.push_back(l.slot);
      if (const std::string e = core::check_slot_tags(tags, h.window_slot); !e.empty()) {
        fail("Bloom layer " + e);
      }
      if (tags.back() != h.window_slot) {
        fail("the newest Bloom layer is of slot " + std::to_string(tags.back()) +
             ", not of the current slot " + std::to_string(h.window_slot));
      }
    }
    if (version == 1) {
      idx.tier2 = tier2_index(p);
      s.tier2_keys = idx.tier2.keys;
      s.tier2_bytes = idx.tier2.bytes;
      s.runs.push_back({0, core::kLegacyRunLevel, s.tier2_keys, s.tier2_bytes});
    } else {
      read_runs(s);
    }
    return idx;
  }

  // The tier-2 datasets of this file (a format-1 generation or a run file).
  Tier2Index tier2_index(std::uint64_t p) const {
    Tier2Index t;
    Hid keys = dataset(ckpt::kSliceKeys, {p});
    Hid bytes = dataset(ckpt::kSliceBytes, {p});
    t.slice_keys = read_all_u64(keys.get(), dxpl_);
    t.slice_bytes = read_all_u64(bytes.get(), dxpl_);
    Tier2Extents e = tier2_extents(t.slice_keys, t.slice_bytes, name_);
    t.key_start = std::move(e.key_start);
    t.byte_start = std::move(e.byte_start);
    t.keys = e.keys;
    t.bytes = e.bytes;
    (void)dataset(ckpt::kTier2Checksums, {p});
    (void)dataset(ckpt::kFingerprints, {t.keys});
    (void)dataset(ckpt::kOffsets, {t.keys + p});
    (void)dataset(ckpt::kBytes, {t.bytes});
    return t;
  }

  // Optional rolling window (issue 13): the attribute, the current slot and
  // the normalization mark come together; a state with one but not the
  // others is refused (a mark without the attribute: a newer build's state).
  void read_window(CheckpointHeader& h) const {
    const std::string_view mark = ckpt::kWindowNormalizationMark;
    const bool marked =
        h.normalization.size() > mark.size() &&
        h.normalization.compare(h.normalization.size() - mark.size(), mark.size(), mark) == 0;
    if (!has_attr(file_, ckpt::kWindow)) {
      if (marked)
        fail("normalization '" + h.normalization +
             "' marks a window, but there is no window attribute");
      return;
    }
    if (!marked) fail("a window attribute without the window mark in the normalization text");
    h.normalization.resize(h.normalization.size() - mark.size());
    h.window = str(ckpt::kWindow);
    try {
      (void)core::parse_window_attribute(h.window);
    } catch (const std::invalid_argument& e) {
      fail(std::string("window attribute: ") + e.what());
    }
    h.window_slot = u64(ckpt::kWindowSlot);
    h.window_slot_progress = u64(ckpt::kWindowSlotProgress);
  }

  // Split inputs (issue 12): the mark, after the window's is stripped. The
  // manifest's ranges are checked against it by the app (run_state.cpp).
  void read_split_mark(CheckpointHeader& h) const {
    const auto strip = [&h](std::string_view mark) {
      const bool has =
          h.normalization.size() > mark.size() &&
          h.normalization.compare(h.normalization.size() - mark.size(), mark.size(), mark) == 0;
      if (has) h.normalization.resize(h.normalization.size() - mark.size());
      return has;
    };
    h.retracted_records = strip(ckpt::kSplitInputsRetractedMark);
    h.split_inputs = h.retracted_records || strip(ckpt::kSplitInputsNormalizationMark);
  }

  // Format 2: the run list (/runs/*, oldest first).
  void read_runs(CheckpointSummary& s) const {
    if (!has_link(file_, ckpt::kRunsGroup)) fail(std::string("missing group ") + ckpt::kRunsGroup);
    const auto column = [&](const char* name) {
      if (!has_link(file_, name)) fail(std::string("missing dataset ") + name);
      Hid d = open_dataset(file_, name);
      const std::vector<std::uint64_t> dims = dataset_dims(d.get());
      if (dims.size() != 1) fail(std::string(name) + " is not 1-D");
      // Bounded before the read sizes a vector by it.
      if (dims[0] > kMaxRunsPerGeneration) {
        fail(std::string(name) + " lists " + std::to_string(dims[0]) + " runs (more than " +
             std::to_string(kMaxRunsPerGeneration) + ")");
      }
      return read_all_u64(d.get(), dxpl_);
    };
    const std::vector<std::uint64_t> ids = column(ckpt::kRunIds);
    const std::vector<std::uint64_t> levels = column(ckpt::kRunLevels);
    const std::vector<std::uint64_t> keys = column(ckpt::kRunKeys);
    const std::vector<std::uint64_t> bytes = column(ckpt::kRunBytes);
    try {
      check_run_list(ids, levels, keys, bytes);
    } catch (const CheckpointError& e) {
      fail(e.what());
    }
    std::vector<std::uint64_t> slots(ids.size(), 0);
    if (!s.header.window.empty()) {
      slots = column(ckpt::kRunSlots);
      if (slots.size() != ids.size()) {
        fail(std::string(ckpt::kRunSlots) + " lists " + std::to_string(slots.size()) + " runs, " +
             ckpt::kRunIds + " " + std::to_string(ids.size()));
      }
      if (const std::string e = core::check_slot_tags(slots, s.header.window_slot); !e.empty()) {
        fail("run " + e);
      }
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      s.runs.push_back(
          {ids[i], static_cast<std::uint32_t>(levels[i]), keys[i], bytes[i], slots[i]});
      s.tier2_keys += keys[i];
      s.tier2_bytes += bytes[i];
    }
  }

  // Format 2: checks that this file is the run file `ref` of generation
  // header `h` names, and returns its tier-2 index.
  Tier2Index run_index(const CheckpointHeader& h, const CheckpointRunRef& ref) const {
    if (!has_attr(file_, ckpt::kFormatVersion)) fail("not a bloomshard run file");
    const std::uint64_t version = read_attr_u64(file_, ckpt::kFormatVersion);
    if (version != 2) {
      fail("run file format_version " + std::to_string(version) + ", this build reads 2");
    }
    if (!has_attr(file_, ckpt::kContent) || str(ckpt::kContent) != ckpt::kContentRun) {
      fail("not a tier-2 run file");
    }
    if (u64(ckpt::kTier2Run) != ref.id) {
      fail("holds run " + std::to_string(u64(ckpt::kTier2Run)) + ", the generation names " +
           std::to_string(ref.id));
    }
    // The job's run_id may differ: an incremental run's generations
    // reference the runs of the finished run it continues.
    const std::uint64_t p = u64(ckpt::kNumSlices);
    if (p != h.params.num_slices) {
      fail("has " + std::to_string(p) + " slices, the generation " +
           std::to_string(h.params.num_slices));
    }
    Tier2Index t = tier2_index(p);
    if (t.keys != ref.keys || t.bytes != ref.bytes) {
      fail("holds " + std::to_string(t.keys) + " keys of " + std::to_string(t.bytes) +
           " bytes, the generation lists " + std::to_string(ref.keys) + " keys of " +
           std::to_string(ref.bytes) + " bytes");
    }
    return t;
  }

 private:
  hid_t file_;
  hid_t dxpl_;
  std::string name_;
};

// Turns HDF5 failures into CheckpointError naming the file.
template <class F>
auto with_file_context(const std::filesystem::path& file, F&& f) {
  try {
    return f();
  } catch (const Hdf5Error& e) {
    throw CheckpointError(file.string() + ": cannot read checkpoint: " + e.what());
  }
}

// The tier-2 datasets of one file, located in its mapping.
class Tier2Map {
 public:
  Tier2Map(hid_t file, const std::filesystem::path& path, const Tier2Index& idx) : idx_(&idx) {
    const std::uint64_t p = idx.slice_keys.size();
    fps_ = locate(file, ckpt::kFingerprints, idx.keys * 8);
    offs_ = locate(file, ckpt::kOffsets, (idx.keys + p) * 8);
    bytes_ = locate(file, ckpt::kBytes, idx.bytes);
    mapping_ = FileMapping::map(path);
  }

  [[nodiscard]] core::SliceBaseView view(std::uint32_t s) const {
    const std::uint64_t keys = idx_->slice_keys[s];
    const auto fp = mapping_->range(fps_ + idx_->key_start[s] * 8, keys * 8, ckpt::kFingerprints);
    const auto off =
        mapping_->range(offs_ + (idx_->key_start[s] + s) * 8, (keys + 1) * 8, ckpt::kOffsets);
    const auto by =
        mapping_->range(bytes_ + idx_->byte_start[s], idx_->slice_bytes[s], ckpt::kBytes);
    core::SliceBaseView v;
    v.fingerprints = {reinterpret_cast<const std::uint64_t*>(fp.data()), keys};
    v.offsets = {reinterpret_cast<const std::uint64_t*>(off.data()), keys + 1};
    v.bytes = {reinterpret_cast<const char*>(by.data()), by.size()};
    return v;
  }
  [[nodiscard]] std::shared_ptr<const void> keepalive() const { return mapping_; }
  void advise_random() const noexcept { mapping_->advise_random(); }
  // Reads in the three per-key datasets' extents of slices [first, last)
  // only: on R ranks a rank's share is about 1/R of the run file.
  void advise_willneed(core::SliceRange owned) const noexcept {
    if (owned.first >= owned.last) return;
    const std::uint32_t a = owned.first;
    const std::uint32_t b = owned.last - 1;
    const auto keys_to = [&](std::uint32_t s) { return idx_->key_start[s] + idx_->slice_keys[s]; };
    mapping_->advise_willneed(fps_ + idx_->key_start[a] * 8, (keys_to(b) - idx_->key_start[a]) * 8);
    mapping_->advise_willneed(offs_ + (idx_->key_start[a] + a) * 8,
                              (keys_to(b) + b + 1 - idx_->key_start[a] - a) * 8);
    mapping_->advise_willneed(bytes_ + idx_->byte_start[a],
                              idx_->byte_start[b] + idx_->slice_bytes[b] - idx_->byte_start[a]);
  }

 private:
  static std::uint64_t locate(hid_t file, const char* name, std::uint64_t length) {
    Hid d = open_dataset(file, name);
    if (!dataset_is_contiguous(d.get())) {
      throw CheckpointError(std::string("dataset ") + name + " is not contiguous");
    }
    if (length == 0) return 0;  // nothing to map
    const auto addr = dataset_file_offset(d.get());
    if (!addr) throw CheckpointError(std::string("dataset ") + name + " has no file address");
    if (*addr % 8 != 0) {
      throw CheckpointError(std::string("dataset ") + name + " is not 8-byte aligned in the file");
    }
    return *addr;
  }

  const Tier2Index* idx_;
  std::uint64_t fps_ = 0, offs_ = 0, bytes_ = 0;
  std::shared_ptr<const FileMapping> mapping_;
};

// Checks one slice's tier 2 in `where` (a file name); returns the problem or
// "". Without `full` only the offsets are checked (monotonic, spanning the
// bytes: what lookups need to stay inside the mapping), with it also the
// checksum and the order of the keys.
std::string check_tier2_slice(const Tier2Map& map, std::uint32_t s, std::uint64_t stored, bool full,
                              const std::string& where) {
  const std::string name = where + " tier-2 slice " + std::to_string(s);
  core::SliceBaseView v;
  try {
    v = map.view(s);
  } catch (const CheckpointError& e) {
    return name + ": " + e.what();
  }
  if (full) {
    const std::uint64_t got = tier2_slice_checksum(v);
    if (got != stored) {
      return name +
             ": XXH3 checksum mismatch over /tier2/fingerprints, /tier2/offsets, /tier2/bytes "
             "(stored " +
             std::to_string(stored) + ", computed " + std::to_string(got) + ")";
    }
    try {
      core::validate_base(v);
    } catch (const std::exception& e) {
      return name + ": " + e.what();
    }
  } else if (std::string p = check_offsets(v.offsets, v.bytes.size()); !p.empty()) {
    return name + ": /tier2/offsets: " + p;
  }
  return {};
}

// Collective: reads the Bloom words of slices `range` of every layer into
// `dest(l)` and returns the per-slice checksum problems.
template <class Dest>
std::vector<std::string> read_and_check_bloom(const comm::Communicator& comm, hid_t file,
                                              hid_t dxpl, const FileIndex& idx,
                                              core::SliceRange range, Dest&& dest) {
  std::vector<std::string> problems;
  const std::size_t num_layers = idx.summary.layers.size();
  const std::uint64_t n = range.size();
  std::vector<std::uint64_t> sums(num_layers * n);
  {
    Hid d = open_dataset(file, ckpt::kBloomChecksums);
    read_columns_2d(d.get(), dxpl, H5T_NATIVE_UINT64, num_layers, range.first, range.last,
                    sums.data(), 8);
  }
  for (std::size_t l = 0; l < num_layers; ++l) {
    comm::heartbeat();
    const std::uint64_t per_slice =
        idx.summary.layers[l].geometry.blocks_per_slice * core::kBlockWords;
    std::uint64_t* words = dest(l);
    Hid d = open_dataset(file, layer_name(l));
    read_1d_collective(comm, d.get(), dxpl, H5T_NATIVE_UINT64, range.first * per_slice, words,
                       n * per_slice, 8);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t got =
          bloom_slice_checksum({words + i * per_slice, static_cast<std::size_t>(per_slice)});
      const std::uint64_t stored = sums[l * n + i];
      if (got != stored) {
        problems.push_back(layer_name(l) + " slice " + std::to_string(range.first + i) +
                           ": XXH3 checksum mismatch (stored " + std::to_string(stored) +
                           ", computed " + std::to_string(got) + ")");
      }
    }
  }
  return problems;
}

// Collective, as agree_or_throw (checkpoint_collective.hpp), but a text
// that several ranks raise is stated once, with the ranks that raised it:
// "<context>: <error> (ranks 0, 1, 2 on host)"; different texts are listed
// in rank order. With `first_only` (a check whose text names a rank's own
// key) only the lowest failing rank's text is given, and how many other
// ranks failed. Every rank throws the same CollectiveCheckpointError, so
// app::report_error_and_abort prints it once.
void agree_once_or_throw(const comm::Communicator& comm, const std::string& local_error,
                         const std::string& context, bool first_only = false) {
  if (!any_rank_failed(comm, local_error, context)) return;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '?';
  std::vector<std::string> mine;
  if (!local_error.empty()) {
    mine.push_back(std::to_string(comm.rank()) + " on " + host + '\n' + local_error);
  }
  struct Group {
    std::string text;
    std::vector<std::string> ranks, hosts;
  };
  std::vector<Group> groups;
  for (const std::string& r : allgather_strings(comm, mine)) {
    const std::size_t nl = r.find('\n');
    const std::string who = r.substr(0, nl);
    const std::string text = r.substr(nl + 1);
    const std::size_t on = who.find(" on ");
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const Group& x) { return x.text == text && !first_only; });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{text, {}, {}});
    g->ranks.push_back(who.substr(0, on));
    if (const std::string h = who.substr(on + 4);
        std::find(g->hosts.begin(), g->hosts.end(), h) == g->hosts.end()) {
      g->hosts.push_back(h);
    }
  }
  const auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  std::string message = context + ": ";
  const std::size_t shown = first_only ? 1 : groups.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const Group& g = groups[i];
    message += (i > 0 ? "; " : "") + g.text + " (rank" + (g.ranks.size() > 1 ? "s " : " ") +
               list(g.ranks) + " on " + list(g.hosts) + ")";
  }
  if (first_only && groups.size() > 1) {
    message += "; " + std::to_string(groups.size() - 1) + " more rank" +
               (groups.size() > 2 ? "s" : "") + " failed this check";
  }
  throw CollectiveCheckpointError(message);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// At most this many problem lines per file; the rest are counted (a summary,
// not thousands of lines).
constexpr std::size_t kMaxProblemLines = 8;

std::vector<std::string> summarized(std::vector<std::string> problems, std::uint64_t slices) {
  if (problems.size() <= kMaxProblemLines) return problems;
  const std::size_t more = problems.size() - kMaxProblemLines;
  problems.resize(kMaxProblemLines);
  problems.push_back("... and " + std::to_string(more) + " more problems (of " +
                     std::to_string(slices) + " slices checked)");
  return problems;
}

std::uint64_t share_of(std::uint64_t total, core::SliceRange owned, std::uint32_t p) {
  // floor(total * s / p) without overflow: r * s < 2^48 since r < p <= 2^24.
  const std::uint64_t q = total / p;
  const std::uint64_t r = total % p;
  const auto part = [&](std::uint32_t s) { return q * s + r * s / p; };
  return part(owned.last) - part(owned.first);
}

std::vector<std::uint64_t> read_tier2_checksums(const comm::Communicator& comm, hid_t file,
                                                hid_t dxpl, core::SliceRange range) {
  std::vector<std::uint64_t> sums(range.size());
  Hid d = open_dataset(file, ckpt::kTier2Checksums);
  read_1d_collective(comm, d.get(), dxpl, H5T_NATIVE_UINT64, range.first, sums.data(), sums.size(),
                     8);
  return sums;
}

// A checkpoint opened collectively with its index read.
struct IndexedFile {
  Hid file;
  Hid dxpl;
  FileIndex index;
};

// Collective: opens `path` on every rank and reads its index. Returns the
// error text ("" on success) instead of throwing, so that the caller can
// agree on it with the other ranks before the next collective call.
std::string open_indexed(const comm::Communicator& comm, const std::filesystem::path& path,
                         IndexedFile& out) {
  try {
    with_file_context(path, [&] {
      out.file = open_parallel_file(comm, path);
      out.dxpl = collective_dxpl();
      out.index = IndexReader(out.file.get(), out.dxpl.get(), path.string()).read();
      return 0;
    });
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// A file holding tier 2 (a run file, or a format-1 generation), opened
// collectively with its index read.
struct Tier2File {
  std::filesystem::path path;
  Hid file;
  Hid dxpl;
  Tier2Index index;
  const Tier2Index* idx = nullptr;  // &index, or the format-1 generation's
  hid_t hid = H5I_INVALID_HID;
};

// Collective: opens run `ref` of generation `h`; returns the error text.
std::string open_run(const comm::Communicator& comm, const std::filesystem::path& state_dir,
                     const CheckpointHeader& h, const CheckpointRunRef& ref, Tier2File& out) {
  out.path = run_path(state_dir, ref.id);
  std::error_code ec;
  // Agreed before the collective open, so that no rank opens alone.
  if (comm.any(!std::filesystem::is_regular_file(out.path, ec))) {
    return out.path.string() + ": missing run file (run " + std::to_string(ref.id) +
           " of generation " + std::to_string(h.generation) + ")";
  }
  try {
    with_file_context(out.path, [&] {
      out.file = open_parallel_file(comm, out.path);
      out.dxpl = collective_dxpl();
      out.index = IndexReader(out.file.get(), out.dxpl.get(), out.path.string()).run_index(h, ref);
      out.idx = &out.index;
      out.hid = out.file.get();
      return 0;
    });
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// Collective: reads the tier-2 checksums of `range` and checks every slice
// of it through a mapping of the file; fills `views` (one per slice of
// range) and `keep`. Returns the local problems (the caller agrees).
std::vector<std::string> map_tier2(const comm::Communicator& comm, const Tier2File& t,
                                   core::SliceRange range, bool full,
                                   std::vector<core::SliceBaseView>& views,
                                   std::shared_ptr<const void>& keep) {
  std::vector<std::string> problems;
  std::vector<std::uint64_t> sums;
  try {
    sums = with_file_context(
        t.path, [&] { return read_tier2_checksums(comm, t.hid, t.dxpl.get(), range); });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
    return problems;
  }
  try {
    with_file_context(t.path, [&] {
      const Tier2Map map(t.hid, t.path, *t.idx);
      views.assign(range.size(), core::SliceBaseView{});
      for (std::uint32_t s = range.first; s < range.last; ++s) {
        if ((s - range.first) % 256 == 0) comm::heartbeat();
        std::string p = check_tier2_slice(map, s, sums[s - range.first], full, t.path.string());
        if (!p.empty()) {
          problems.push_back(std::move(p));
          continue;
        }
        views[s - range.first] = map.view(s);
      }
      // Unverified (a rebase on a run just written, O_DIRECT: not cached):
      // read it in now, before lookups fault it in page by page.
      if (!full) map.advise_willneed(range);
      map.advise_random();
      keep = map.keepalive();
      return 0;
    });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
  }
  return problems;
}

// Collective: closes a file opened for reading; returns the error text.
std::string close_file(Hid& f) {
  try {
    f.close("H5Fclose");
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// The u64 dataset `name` of `file` as `count` values in place in `mapping`
// (contiguous, 8-byte aligned, inside the file; else CheckpointError).
const std::uint64_t* mapped_u64(hid_t file, const FileMapping& mapping, const std::string& name,
                                std::uint64_t count) {
  Hid d = open_dataset(file, name);
  const auto addr = dataset_file_offset(d.get());
  if (!dataset_is_contiguous(d.get()) || !addr || *addr % 8 != 0) {
    throw CheckpointError("dataset " + name + " is not contiguous and 8-byte aligned in the file");
  }
  return reinterpret_cast<const std::uint64_t*>(
      mapping.range(*addr, checked_mul(count, 8, name), name.c_str()).data());
}

// Serial: appends the sample of the tier-2 file `t` (a run file, or a
// format-1 generation) to `out`: the first key of its first non-empty
// slices whose checksum holds (a damaged slice is verify's to report, not
// evidence against the header).
void sample_tier2_file(hid_t file, const std::filesystem::path& path, const Tier2Index& t,
                       std::vector<SampledKey>& out) {
  const std::uint32_t p = static_cast<std::uint32_t>(t.slice_keys.size());
  const Tier2Map map(file, path, t);
  const auto mapping = FileMapping::map(path);
  const std::uint64_t* sums = mapped_u64(file, *mapping, ckpt::kTier2Checksums, p);
  std::uint32_t taken = 0;
  for (std::uint32_t s = 0; s < p && taken < kSampledKeysPerRun; ++s) {
    if (t.slice_keys[s] == 0) continue;
    if (!check_tier2_slice(map, s, sums[s], true, path.string()).empty()) continue;
    const core::SliceBaseView v = map.view(s);
    sample_first_keys({&v, 1}, s, path.filename().string(), out, 1);
    ++taken;
  }
}

}  // namespace

std::string stored_key_sample_problem(const std::filesystem::path& file) {
  return with_file_context(file, [&]() -> std::string {
    quiet_hdf5_errors();
    Hid f = open_serial_file(file);
    const FileIndex idx = IndexReader(f.get(), H5P_DEFAULT, file.string()).read();
    const CheckpointHeader& h = idx.summary.header;
    const std::vector<CheckpointLayerInfo>& layers = idx.summary.layers;
    if (std::string e = header_names_problem(h); !e.empty()) return file.string() + ": " + e;
    if (std::string e = layer_geometry_problem(h, layers); !e.empty()) {
      return file.string() + ": " + e;
    }
    const std::uint32_t p = h.params.num_slices;
    // Tier 1 in place: every layer's words and the per-slice checksums.
    const auto mapping = FileMapping::map(file);
    std::vector<const std::uint64_t*> words;
    std::vector<core::LayerLayout> layouts;
    std::vector<std::uint64_t> slots;
    for (const CheckpointLayerInfo& l : layers) slots.push_back(l.slot);
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const core::BloomLayerGeometry& g = layers[l].geometry;
      const std::uint32_t index =
          h.window.empty() ? static_cast<std::uint32_t>(l) : core::slot_local_index(slots, l);
      layouts.push_back({g.blocks_per_slice, p, 0, index, g.k});
      words.push_back(mapped_u64(f.get(), *mapping, layer_name(l),
                                 checked_mul(checked_mul(g.blocks_per_slice, p, layer_name(l)),
                                             core::kBlockWords, layer_name(l))));
    }
    const std::uint64_t* bloom_sums =
        mapped_u64(f.get(), *mapping, ckpt::kBloomChecksums, checked_mul(layers.size(), p, "L*P"));
    const auto bloom_slice_ok = [&](std::uint32_t s) {
      for (std::size_t l = 0; l < layers.size(); ++l) {
        const std::uint64_t per = layouts[l].blocks_per_slice * core::kBlockWords;
        if (bloom_slice_checksum({words[l] + s * per, per}) != bloom_sums[l * p + s]) return false;
      }
      return true;
    };

    std::vector<SampledKey> samples;
    if (h.format_version == 1) {
      sample_tier2_file(f.get(), file, idx.tier2, samples);
    } else {
      for (const CheckpointRunRef& ref : idx.summary.runs) {
        const std::filesystem::path run = run_path(file.parent_path(), ref.id);
        std::error_code ec;
        if (!std::filesystem::is_regular_file(run, ec)) continue;  // verify names it
        with_file_context(run, [&] {
          Hid r = open_serial_file(run);
          const Tier2Index t = IndexReader(r.get(), H5P_DEFAULT, run.string()).run_index(h, ref);
          sample_tier2_file(r.get(), run, t, samples);
          return 0;
        });
      }
    }
    // A key of a slice whose Bloom words fail their checksum is verify's.
    std::erase_if(samples, [&](const SampledKey& k) { return !bloom_slice_ok(k.slice); });
    const std::string e = key_sample_problem(h, samples, [&](const core::KeyHash& k) {
      std::uint8_t maybe = 0;
      for (std::size_t l = 0; l < layers.size(); ++l) {
        core::query_layer_batch(words[l], layouts[l], {&k, 1}, {&maybe, 1}, l > 0);
      }
      return maybe != 0;
    });
    return e.empty() ? e : file.string() + ": " + e;
  });
}

CheckpointSummary read_checkpoint_summary(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw CheckpointError(file.string() + ": no such checkpoint file");
  }
  return with_file_context(file, [&] {
    quiet_hdf5_errors();
    Hid f = open_serial_file(file);
    FileIndex idx = IndexReader(f.get(), H5P_DEFAULT, file.string()).read();
    return idx.summary;
  });
}

LoadedCheckpoint load_checkpoint(const comm::Communicator& comm, const std::filesystem::path& file,
                                 core::SliceRange owned, bool verify_tier2) {
  const std::string context = "cannot load checkpoint " + file.string();
  quiet_hdf5_errors();
  IndexedFile opened;
  std::string err = open_indexed(comm, file, opened);
  Hid& f = opened.file;
  Hid& dxpl = opened.dxpl;
  FileIndex& idx = opened.index;
  agree_once_or_throw(comm, err, context);

  const CheckpointHeader& h = idx.summary.header;
  LoadedCheckpoint out;
  try {
    if (std::string e = header_names_problem(h); !e.empty()) throw CheckpointError(e);
    if (owned.last > h.params.num_slices || owned.first > owned.last) {
      throw CheckpointError("owned slices [" + std::to_string(owned.first) + ", " +
                            std::to_string(owned.last) + ") outside the file's " +
                            std::to_string(h.params.num_slices) + " slices");
    }
    // Each stored layer's geometry against what this build computes from the
    // stored parameters, BEFORE anything is allocated by them: a damaged
    // capacity or FPR would otherwise size the Bloom layers (found by
    // fuzz_checkpoint_loader: 10 GB for a 22 KB file).
    if (std::string e = layer_geometry_problem(h, idx.summary.layers); !e.empty()) {
      throw CheckpointError(e);
    }
    std::vector<std::uint64_t> layer_slots;
    for (const CheckpointLayerInfo& l : idx.summary.layers) layer_slots.push_back(l.slot);
    const std::uint32_t window =
        h.window.empty() ? 0 : core::parse_window_attribute(h.window).window;
    out.set = std::make_unique<core::TwoTierSet>(h.params, owned);
    core::ScalableBloom& bloom = out.set->bloom();
    bloom.set_auto_grow(false);
    if (window != 0) {
      bloom.start_window(window, h.window_slot, layer_slots);
    } else {
      while (bloom.num_layers() < idx.summary.layers.size()) bloom.add_layer();
    }
    for (std::size_t l = 0; l < idx.summary.layers.size(); ++l) {
      bloom.set_layer_inserted(
          l, share_of(idx.summary.layers[l].inserted, owned, h.params.num_slices));
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree_once_or_throw(comm, err, context);

  std::vector<std::string> problems;
  try {
    with_file_context(file, [&] {
      core::ScalableBloom& bloom = out.set->bloom();
      problems = read_and_check_bloom(comm, f.get(), dxpl.get(), idx, owned, [&](std::size_t l) {
        return owned.size() == 0 ? nullptr : bloom.slice_words(l, owned.first).data();
      });
      return 0;
    });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
  }
  agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);

  const bool format1 = h.format_version == 1;
  // Stored keys of this rank's slices, checked against the header once
  // tier 1 and every run are in (key_sample_problem).
  std::vector<SampledKey> samples;
  if (format1) {  // the generation's own tier 2 is the one run
    Tier2File t;
    t.path = file;
    t.idx = &idx.tier2;
    t.hid = f.get();
    t.dxpl = collective_dxpl();
    std::vector<core::SliceBaseView> views;
    std::shared_ptr<const void> keep;
    problems = map_tier2(comm, t, owned, verify_tier2, views, keep);
    agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);
    sample_first_keys(views, owned.first, file.filename().string(), samples);
    out.set->exact().replace_newest_runs(0, {0, core::kLegacyRunLevel}, std::move(views),
                                         std::move(keep));
  }
  agree_once_or_throw(comm, close_file(f), context);

  if (!format1) {
    const std::filesystem::path state_dir = file.parent_path();
    for (const CheckpointRunRef& ref : idx.summary.runs) {
      comm::heartbeat();
      Tier2File t;
      agree_once_or_throw(comm, open_run(comm, state_dir, h, ref, t), context);
      std::vector<core::SliceBaseView> views;
      std::shared_ptr<const void> keep;
      problems = map_tier2(comm, t, owned, verify_tier2, views, keep);
      agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);
      sample_first_keys(views, owned.first, t.path.filename().string(), samples);
      out.set->exact().replace_newest_runs(0, {ref.id, ref.level, ref.slot}, std::move(views),
                                           std::move(keep));
      agree_once_or_throw(comm, close_file(t.file), context);
    }
  }
  // What no checksum covers (hash_seed, num_slices, each layer's k and
  // blocks_per_slice, normalization): every rank checks the keys of its
  // own slices; a failure is everyone's before the caller uses the set.
  try {
    const core::ScalableBloom& bloom = out.set->bloom();
    err = key_sample_problem(h, samples,
                             [&bloom](const core::KeyHash& k) { return bloom.may_contain(k); });
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree_once_or_throw(comm, err, context, true);
  out.summary = std::move(idx.summary);
  return out;
}

void rebase_on_checkpoint(const comm::Communicator& comm, const std::filesystem::path& file,
                          core::TwoTierSet& set, bool verify_tier2) {
  const std::string context = "cannot rebase tier 2 on " + file.string();
  quiet_hdf5_errors();
  IndexedFile opened;
  std::string err = open_indexed(comm, file, opened);
  agree_once_or_throw(comm, err, context);
  agree_once_or_throw(comm, close_file(opened.file), context);
  const CheckpointSummary& s = opened.index.summary;
  const std::vector<core::RunInfo>& have = set.exact().runs();
  try {
    if (s.header.format_version != kCheckpointFormatVersion || s.runs.empty()) {
      throw CheckpointError("not a generation this build wrote (format_version " +
                            std::to_string(s.header.format_version) + ")");
    }
    if (s.header.params.num_slices != set.bloom().params().num_slices) {
      throw CheckpointError("file has " + std::to_string(s.header.params.num_slices) +
                            " slices, the set " + std::to_string(set.bloom().params().num_slices));
    }
    // The generation's older runs are the set's oldest ones; the set's
    // newer runs were absorbed into the new run.
    const std::size_t kept = s.runs.size() - 1;
    bool prefix = kept <= have.size();
    for (std::size_t i = 0; prefix && i < kept; ++i) prefix = have[i].id == s.runs[i].id;
    if (!prefix) throw CheckpointError("the generation's runs are not the set's runs + one");
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree_once_or_throw(comm, err, context);
  const CheckpointRunRef& ref = s.runs.back();
  Tier2File t;
  agree_once_or_throw(comm, open_run(comm, file.parent_path(), s.header, ref, t), context);
  std::vector<core::SliceBaseView> views;
  std::shared_ptr<const void> keep;
  const std::vector<std::string> problems =
      map_tier2(comm, t, set.owned(), verify_tier2, views, keep);
  agree_once_or_throw(comm, join(summarized(problems, set.owned().size())), context);
  agree_once_or_throw(comm, close_file(t.file), context);
  // The new run holds delta + absorbed runs, so replacing them keeps the
  // content (a failure on another rank after this point leaves it correct).
  set.exact().replace_newest_runs(have.size() - (s.runs.size() - 1), {ref.id, ref.level, ref.slot},
                                  std::move(views), std::move(keep));
  set.exact().clear_delta();
}

VerifyReport verify_checkpoint(const comm::Communicator& comm, const std::filesystem::path& file) {
  quiet_hdf5_errors();
  VerifyReport report;
  IndexedFile opened;
  std::string err = open_indexed(comm, file, opened);
  Hid& f = opened.file;
  Hid& dxpl = opened.dxpl;
  FileIndex& idx = opened.index;
  // The index is the same on every rank, so an error here is everyone's.
  if (comm.any(!err.empty())) {
    const std::vector<std::string> all = allgather_strings(
        comm, comm.rank() == 0 && !err.empty() ? std::vector{err} : std::vector<std::string>{});
    report.ok = false;
    report.problems = all.empty() ? std::vector<std::string>{err} : all;
    return report;
  }

  const CheckpointHeader& h = idx.summary.header;
  const std::uint32_t p = h.params.num_slices;
  const std::uint32_t ranks = std::min(comm.usize(), p);
  const core::SliceRange share =
      comm.urank() < ranks ? core::slices_of_rank(comm.urank(), ranks, p) : core::SliceRange{p, p};
  std::vector<std::string> problems;
  try {
    with_file_context(file, [&] {
      std::vector<std::uint64_t> words;
      problems = read_and_check_bloom(comm, f.get(), dxpl.get(), idx, share, [&](std::size_t l) {
        const std::uint64_t per_slice =
            idx.summary.layers[l].geometry.blocks_per_slice * core::kBlockWords;
        words.assign(static_cast<std::size_t>(share.size() * per_slice), 0);
        return words.data();
      });
      return 0;
    });
  } catch (const std::exception& e) {
    problems.push_back("rank " + std::to_string(comm.rank()) + ": " + e.what());
  }
  std::vector<core::SliceBaseView> views;
  std::shared_ptr<const void> keep;
  if (h.format_version == 1) {
    Tier2File t;
    t.path = file;
    t.idx = &idx.tier2;
    t.hid = f.get();
    t.dxpl = collective_dxpl();
    for (std::string& q : map_tier2(comm, t, share, true, views, keep)) problems.push_back(q);
  }
  if (std::string e = close_file(f); !e.empty()) problems.push_back(e);
  if (h.format_version != 1) {
    for (const CheckpointRunRef& ref : idx.summary.runs) {
      comm::heartbeat();
      Tier2File t;
      // Same result on every rank (the index is read collectively).
      if (std::string e = open_run(comm, file.parent_path(), h, ref, t); !e.empty()) {
        if (comm.rank() == 0) problems.push_back(e);
        continue;
      }
      std::vector<std::string> q = map_tier2(comm, t, share, true, views, keep);
      problems.insert(problems.end(), q.begin(), q.end());
      if (std::string e = close_file(t.file); !e.empty()) problems.push_back(e);
    }
  }
  // What no checksum covers, once (rank 0, serially, the files closed).
  if (comm.rank() == 0) {
    try {
      if (std::string e = stored_key_sample_problem(file); !e.empty()) problems.push_back(e);
    } catch (const std::exception& e) {
      problems.push_back(std::string("header check: ") + e.what());
    }
  }
  report.problems = allgather_strings(comm, problems);
  report.ok = report.problems.empty();
  return report;
}

}  // namespace bloomshard::io
