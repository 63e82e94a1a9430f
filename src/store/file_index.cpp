// The index of a checkpoint file (store/file_index.hpp): the header table,
// Bloom layer attributes, manifest, run list and tier-2 index, read through
// a FileSource and checked before any value sizes an allocation.
#include "bloomshard/store/file_index.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/checksum.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/validate.hpp"
#include "core/tier2/run_compaction.hpp"
#include "core/window/slot_window.hpp"

namespace bloomshard::store {
namespace {

constexpr const char* kRoot = "/";

std::string shape_text(const std::vector<std::uint64_t>& dims) {
  std::string text;
  for (auto v : dims) text += "[" + std::to_string(v) + "]";
  return text;
}

// Strips `mark` from the end of `text`; true if it was there.
bool strip_suffix(std::string& text, std::string_view mark) {
  const bool has =
      text.size() > mark.size() && text.compare(text.size() - mark.size(), mark.size(), mark) == 0;
  if (has) text.resize(text.size() - mark.size());
  return has;
}

// Reads one file's index through `src`; every problem names the file.
class IndexReader {
 public:
  IndexReader(const FileSource& src, std::string name) : src_(src), name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw CheckpointError(name_ + ": " + what);
  }
  void need_attr(const std::string& obj, const char* attr) const {
    if (!src_.has_attr(obj, attr)) {
      fail("missing attribute " + (obj == kRoot ? obj : obj + "/") + attr);
    }
  }
  std::uint64_t u64(const char* attr, const std::string& obj = kRoot) const {
    need_attr(obj, attr);
    return src_.attr_u64(obj, attr);
  }
  double f64(const char* attr, const std::string& obj = kRoot) const {
    need_attr(obj, attr);
    return src_.attr_f64(obj, attr);
  }
  std::string str(const char* attr) const {
    need_attr(kRoot, attr);
    return src_.attr_string(kRoot, attr);
  }
  // `implied_by` names the attributes the expected shape comes from, so a
  // damaged attribute (no checksum covers them) is named with the dataset.
  void dataset(const std::string& path, const std::vector<std::uint64_t>& dims,
               const std::string& implied_by = {}) const {
    if (!src_.has_link(path)) fail("missing dataset " + path);
    const std::vector<std::uint64_t> got = src_.dims(path);
    if (got != dims) {
      fail("dataset " + path + " has shape " + shape_text(got) + ", expected " + shape_text(dims) +
           (implied_by.empty()
                ? ""
                : " (" + implied_by + "): the attributes or the dataset are damaged"));
    }
  }
  std::string manifest(bool checksummed) const;
  std::uint32_t format_version() const;
  void read_header(CheckpointHeader& h, CheckpointSummary& s) const;
  void read_layers(CheckpointSummary& s, std::uint64_t num_layers) const;
  Tier2Index tier2_index(std::uint64_t p) const;
  void read_window(CheckpointHeader& h) const;
  void read_split_mark(CheckpointHeader& h) const;
  void read_runs(CheckpointSummary& s) const;
  Tier2Index run_index(const CheckpointHeader& h, const CheckpointRunRef& ref) const;
  std::vector<std::uint64_t> column(const char* name) const;

 private:
  const FileSource& src_;
  std::string name_;
};

std::string IndexReader::manifest(bool checksummed) const {
  const std::string path = ckpt::kManifestJson;
  if (!src_.has_link(path)) fail("missing dataset " + path);
  // One string: the source reads one element into a one-string buffer.
  if (const std::vector<std::uint64_t> dims = src_.dims(path);
      std::any_of(dims.begin(), dims.end(), [](std::uint64_t n) { return n != 1; })) {
    fail(path + " does not hold exactly one string");
  }
  const std::optional<std::string> text = src_.read_fixed_string(path);
  if (!text) fail(path + " is not a fixed-length string");
  if (checksummed) {
    const std::uint64_t stored = u64(ckpt::kChecksum, path);
    if (stored != manifest_checksum(*text)) {
      fail(path + ": XXH3 checksum mismatch (stored " + std::to_string(stored) + ", computed " +
           std::to_string(manifest_checksum(*text)) + ")");
    }
  }
  return *text;
}

std::uint32_t IndexReader::format_version() const {
  if (!src_.has_attr(kRoot, ckpt::kFormatVersion)) {
    fail("not a bloomshard checkpoint (no format_version attribute)");
  }
  const std::uint64_t version = src_.attr_u64(kRoot, ckpt::kFormatVersion);
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
  if (src_.has_attr(kRoot, ckpt::kContent)) {
    fail("a tier-2 run file, not a generation (open ckpt-<g>.h5)");
  }
  return static_cast<std::uint32_t>(version);
}

// The header table: every root attribute of a generation, in file order.
void IndexReader::read_header(CheckpointHeader& h, CheckpointSummary& s) const {
  h.tool_version = str(ckpt::kToolVersion);
  h.hash_scheme = str(ckpt::kHashScheme);
  h.hash_seed = u64(ckpt::kHashSeed);
  h.bloom_layout = str(ckpt::kBloomLayout);
  h.normalization = str(ckpt::kNormalization);
  h.key_field = str(ckpt::kKeyField);
  h.key_encoding = str(ckpt::kKeyEncoding);
  if (src_.has_attr(kRoot, ckpt::kKeyScheme)) h.key_scheme = str(ckpt::kKeyScheme);
  read_window(h);
  h.input_order_retracted_rows = strip_suffix(h.normalization, ckpt::kInputOrderRetractedRowsMark);
  h.input_order_rows =
      h.input_order_retracted_rows || strip_suffix(h.normalization, ckpt::kInputOrderRowsMark);
  h.input_order =
      h.input_order_rows || strip_suffix(h.normalization, ckpt::kInputOrderNormalizationMark);
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
}

void IndexReader::read_layers(CheckpointSummary& s, std::uint64_t num_layers) const {
  const CheckpointHeader& h = s.header;
  const std::uint64_t p = h.params.num_slices;
  for (std::uint64_t l = 0; l < num_layers; ++l) {
    const std::string name = layer_dataset(l);
    if (!src_.has_link(name)) fail("missing dataset " + name);
    CheckpointLayerInfo info;
    info.geometry.capacity = u64(ckpt::kCapacity, name);
    info.geometry.fpr_target = f64(ckpt::kFprTarget, name);
    info.geometry.bits_per_key = f64(ckpt::kBitsPerKey, name);
    info.geometry.k = static_cast<std::uint32_t>(u64(ckpt::kProbes, name));
    info.geometry.blocks_per_slice = u64(ckpt::kBlocksPerSlice, name);
    info.inserted = u64(ckpt::kInserted, name);
    if (!h.window.empty()) info.slot = u64(ckpt::kSlot, name);
    const std::uint64_t bps = info.geometry.blocks_per_slice;
    if (bps == 0 || bps > (std::uint64_t{1} << 40) / p) {
      fail(name + " blocks_per_slice " + std::to_string(bps) + " out of range");
    }
    dataset(name, {p * bps * core::kBlockWords},
            "attribute num_slices " + std::to_string(p) + " x " + name +
                " attribute blocks_per_slice " + std::to_string(bps) + " x 8 words");
    // The words must be stored in the file, not only declared: a reader
    // sizes its Bloom layers by them.
    const std::uint64_t stored = src_.storage_bytes(name);
    if (stored != p * bps * core::kBlockWords * 8) {
      fail(name + " holds " + std::to_string(stored) + " bytes, its shape needs " +
           std::to_string(p * bps * core::kBlockWords * 8));
    }
    s.layers.push_back(info);
  }
  dataset(ckpt::kBloomChecksums, {num_layers, p});
  if (h.window.empty()) return;
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

Tier2Index IndexReader::tier2_index(std::uint64_t p) const {
  Tier2Index t;
  dataset(ckpt::kSliceKeys, {p});
  dataset(ckpt::kSliceBytes, {p});
  t.slice_keys = src_.read_u64(ckpt::kSliceKeys);
  t.slice_bytes = src_.read_u64(ckpt::kSliceBytes);
  Tier2Extents e = tier2_extents(t.slice_keys, t.slice_bytes, name_);
  t.key_start = std::move(e.key_start);
  t.byte_start = std::move(e.byte_start);
  t.keys = e.keys;
  t.bytes = e.bytes;
  dataset(ckpt::kTier2Checksums, {p});
  dataset(ckpt::kFingerprints, {t.keys});
  dataset(ckpt::kOffsets, {t.keys + p});
  dataset(ckpt::kBytes, {t.bytes});
  return t;
}

// The optional rolling window: the attribute, the current slot and the
// normalization mark come together; a state with one but not the others is
// refused (a mark without the attribute: a newer build's state).
void IndexReader::read_window(CheckpointHeader& h) const {
  const std::string_view mark = ckpt::kWindowNormalizationMark;
  const bool marked =
      h.normalization.size() > mark.size() &&
      h.normalization.compare(h.normalization.size() - mark.size(), mark.size(), mark) == 0;
  if (!src_.has_attr(kRoot, ckpt::kWindow)) {
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

// Split inputs: the mark, after the window's is stripped. The manifest's
// ranges are checked against it by the app.
void IndexReader::read_split_mark(CheckpointHeader& h) const {
  h.retracted_records = strip_suffix(h.normalization, ckpt::kSplitInputsRetractedMark);
  h.split_inputs =
      h.retracted_records || strip_suffix(h.normalization, ckpt::kSplitInputsNormalizationMark);
}

std::vector<std::uint64_t> IndexReader::column(const char* name) const {
  if (!src_.has_link(name)) fail(std::string("missing dataset ") + name);
  const std::vector<std::uint64_t> dims = src_.dims(name);
  if (dims.size() != 1) fail(std::string(name) + " is not 1-D");
  // Bounded before the read sizes a vector by it.
  if (dims[0] > kMaxRunsPerGeneration) {
    fail(std::string(name) + " lists " + std::to_string(dims[0]) + " runs (more than " +
         std::to_string(kMaxRunsPerGeneration) + ")");
  }
  return src_.read_u64(name);
}

// Format 2: the run list (/runs/*, oldest first).
void IndexReader::read_runs(CheckpointSummary& s) const {
  if (!src_.has_link(ckpt::kRunsGroup)) fail(std::string("missing group ") + ckpt::kRunsGroup);
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
    s.runs.push_back({ids[i], static_cast<std::uint32_t>(levels[i]), keys[i], bytes[i], slots[i]});
    s.tier2_keys += keys[i];
    s.tier2_bytes += bytes[i];
  }
}

Tier2Index IndexReader::run_index(const CheckpointHeader& h, const CheckpointRunRef& ref) const {
  if (!src_.has_attr(kRoot, ckpt::kFormatVersion)) fail("not a bloomshard run file");
  const std::uint64_t version = src_.attr_u64(kRoot, ckpt::kFormatVersion);
  if (version != 2) {
    fail("run file format_version " + std::to_string(version) + ", this build reads 2");
  }
  if (!src_.has_attr(kRoot, ckpt::kContent) || str(ckpt::kContent) != ckpt::kContentRun) {
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

}  // namespace

std::string layer_dataset(std::size_t l) { return "/bloom/layer_" + std::to_string(l); }

FileIndex read_generation_index(const FileSource& src, const std::string& name) {
  const IndexReader r(src, name);
  FileIndex idx;
  CheckpointSummary& s = idx.summary;
  CheckpointHeader& h = s.header;
  h.format_version = r.format_version();
  r.read_header(h, s);
  const std::uint64_t num_layers = r.u64(ckpt::kNumLayers);
  const std::uint64_t max_layers = h.window.empty() ? ckpt::kMaxLayers : ckpt::kMaxWindowedLayers;
  if (num_layers == 0 || num_layers > max_layers) {
    r.fail("num_layers " + std::to_string(num_layers) + " out of range [1, " +
           std::to_string(max_layers) + "]");
  }
  h.manifest_json = r.manifest(h.format_version >= 2);
  r.read_layers(s, num_layers);
  if (h.format_version == 1) {
    idx.tier2 = r.tier2_index(h.params.num_slices);
    s.tier2_keys = idx.tier2.keys;
    s.tier2_bytes = idx.tier2.bytes;
    s.runs.push_back({0, core::kLegacyRunLevel, s.tier2_keys, s.tier2_bytes});
  } else {
    r.read_runs(s);
  }
  return idx;
}

Tier2Index read_run_index(const FileSource& src, const std::string& name, const CheckpointHeader& h,
                          const CheckpointRunRef& ref) {
  return IndexReader(src, name).run_index(h, ref);
}

Tier2Index read_tier2_index(const FileSource& src, const std::string& name, std::uint64_t p) {
  return IndexReader(src, name).tier2_index(p);
}

std::vector<std::uint64_t> read_tier2_checksums(const FileSource& src, const std::string& name,
                                                std::uint64_t p) {
  const IndexReader r(src, name);
  r.dataset(ckpt::kTier2Checksums, {p});
  return src.read_u64(ckpt::kTier2Checksums);
}

}  // namespace bloomshard::store
