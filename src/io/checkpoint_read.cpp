// Reading side of the checkpoint store: the summary (serial), load and
// rebase (collective, tier 2 mapped, never copied) and verify (collective).
// The same index code serves all of them; in a parallel open every rank
// reads the same small metadata (collective metadata reads make that one
// read plus a broadcast inside HDF5).
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/io/checkpoint_checksum.hpp"
#include "bloomshard/io/checkpoint_collective.hpp"
#include "bloomshard/io/checkpoint_mapping.hpp"
#include "bloomshard/io/checkpoint_store.hpp"
#include "bloomshard/io/hdf5_parallel.hpp"

namespace bloomshard::io {

// The tier-2 base is used in place from the mapped file: the stored
// little-endian values must be the host's.
static_assert(std::endian::native == std::endian::little,
              "checkpoint tier-2 mapping needs a little-endian host");

namespace {

std::string layer_name(std::size_t l) { return "/bloom/layer_" + std::to_string(l); }

// Everything of a file besides bits and keys, plus the per-slice sizes.
struct FileIndex {
  CheckpointSummary summary;
  std::vector<std::uint64_t> slice_keys, slice_bytes;
  std::vector<std::uint64_t> key_start, byte_start;  // exclusive prefix sums, P + 1 entries
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
  Hid dataset(const std::string& path, const std::vector<std::uint64_t>& dims) const {
    if (!has_link(file_, path)) fail("missing dataset " + path);
    Hid d = open_dataset(file_, path);
    const std::vector<std::uint64_t> got = dataset_dims(d.get());
    if (got != dims) {
      std::string text;
      for (auto v : got) text += "[" + std::to_string(v) + "]";
      std::string want;
      for (auto v : dims) want += "[" + std::to_string(v) + "]";
      fail("dataset " + path + " has shape " + text + ", expected " + want);
    }
    return d;
  }
  std::string manifest() const {
    if (!has_link(file_, ckpt::kManifestJson))
      fail(std::string("missing dataset ") + ckpt::kManifestJson);
    Hid d = open_dataset(file_, ckpt::kManifestJson);
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
           " is newer than this build reads (" + std::to_string(kCheckpointFormatVersion) +
           "); use a newer bloomshard");
    }
    if (version == 0) fail("checkpoint format_version 0 is not a valid version");
    h.format_version = static_cast<std::uint32_t>(version);
    h.tool_version = str(ckpt::kToolVersion);
    h.hash_scheme = str(ckpt::kHashScheme);
    h.hash_seed = u64(ckpt::kHashSeed);
    h.bloom_layout = str(ckpt::kBloomLayout);
    h.normalization = str(ckpt::kNormalization);
    h.key_field = str(ckpt::kKeyField);
    h.key_encoding = str(ckpt::kKeyEncoding);
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
    if (num_layers == 0 || num_layers > 64) {
      fail("num_layers " + std::to_string(num_layers) + " out of range [1, 64]");
    }
    h.manifest_json = manifest();

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
      const std::uint64_t bps = info.geometry.blocks_per_slice;
      if (bps == 0 || bps > (std::uint64_t{1} << 40) / p) {
        fail(name + " blocks_per_slice " + std::to_string(bps) + " out of range");
      }
      (void)dataset(name, {p * bps * core::kBlockWords});
      s.layers.push_back(info);
    }
    (void)dataset(ckpt::kBloomChecksums, {num_layers, p});
    Hid keys = dataset(ckpt::kSliceKeys, {p});
    Hid bytes = dataset(ckpt::kSliceBytes, {p});
    idx.slice_keys = read_all_u64(keys.get(), dxpl_);
    idx.slice_bytes = read_all_u64(bytes.get(), dxpl_);
    idx.key_start.assign(p + 1, 0);
    idx.byte_start.assign(p + 1, 0);
    for (std::size_t i = 0; i < p; ++i) {
      idx.key_start[i + 1] = idx.key_start[i] + idx.slice_keys[i];
      idx.byte_start[i + 1] = idx.byte_start[i] + idx.slice_bytes[i];
      if (idx.key_start[i + 1] < idx.key_start[i] || idx.byte_start[i + 1] < idx.byte_start[i]) {
        fail("per-slice tier-2 sizes overflow");
      }
    }
    s.tier2_keys = idx.key_start[p];
    s.tier2_bytes = idx.byte_start[p];
    (void)dataset(ckpt::kTier2Checksums, {p});
    (void)dataset(ckpt::kFingerprints, {s.tier2_keys});
    (void)dataset(ckpt::kOffsets, {s.tier2_keys + p});
    (void)dataset(ckpt::kBytes, {s.tier2_bytes});
    return idx;
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

// The tier-2 datasets located in the mapped file.
class Tier2Map {
 public:
  Tier2Map(hid_t file, const std::filesystem::path& path, const FileIndex& idx) : idx_(&idx) {
    fps_ = locate(file, ckpt::kFingerprints, idx.summary.tier2_keys * 8);
    offs_ = locate(file, ckpt::kOffsets, (idx.summary.tier2_keys + idx.slice_keys.size()) * 8);
    bytes_ = locate(file, ckpt::kBytes, idx.summary.tier2_bytes);
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

  const FileIndex* idx_;
  std::uint64_t fps_ = 0, offs_ = 0, bytes_ = 0;
  std::shared_ptr<const FileMapping> mapping_;
};

// Checks one slice's tier-2 base; returns the problem or "".
std::string check_tier2_slice(const Tier2Map& map, std::uint32_t s, std::uint64_t stored,
                              bool full) {
  core::SliceBaseView v;
  try {
    v = map.view(s);
  } catch (const CheckpointError& e) {
    return "tier-2 slice " + std::to_string(s) + ": " + e.what();
  }
  if (full) {
    const std::uint64_t got = tier2_slice_checksum(v);
    if (got != stored) {
      return "tier-2 slice " + std::to_string(s) +
             ": XXH3 checksum mismatch over /tier2/fingerprints, /tier2/offsets, /tier2/bytes "
             "(stored " +
             std::to_string(stored) + ", computed " + std::to_string(got) + ")";
    }
    try {
      core::validate_base(v);
    } catch (const std::exception& e) {
      return "tier-2 slice " + std::to_string(s) + ": " + e.what();
    }
  } else if (v.offsets.front() != 0 || v.offsets.back() != v.bytes.size()) {
    return "tier-2 slice " + std::to_string(s) + ": /tier2/offsets do not span the slice's bytes";
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

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
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

}  // namespace

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
  agree_or_throw(comm, err, context);

  const CheckpointHeader& h = idx.summary.header;
  LoadedCheckpoint out;
  try {
    if (h.hash_scheme != core::kHashSchemeName) {
      throw CheckpointError("hash scheme '" + h.hash_scheme + "' differs from this build's '" +
                            std::string(core::kHashSchemeName) + "'");
    }
    if (h.bloom_layout != core::kBloomLayoutName) {
      throw CheckpointError("Bloom layout '" + h.bloom_layout + "' differs from this build's '" +
                            std::string(core::kBloomLayoutName) + "'");
    }
    if (owned.last > h.params.num_slices || owned.first > owned.last) {
      throw CheckpointError("owned slices [" + std::to_string(owned.first) + ", " +
                            std::to_string(owned.last) + ") outside the file's " +
                            std::to_string(h.params.num_slices) + " slices");
    }
    out.set = std::make_unique<core::TwoTierSet>(h.params, owned);
    core::ScalableBloom& bloom = out.set->bloom();
    bloom.set_auto_grow(false);
    while (bloom.num_layers() < idx.summary.layers.size()) bloom.add_layer();
    for (std::size_t l = 0; l < idx.summary.layers.size(); ++l) {
      const core::BloomLayerGeometry mine = bloom.layer_stats(l).geometry;
      const core::BloomLayerGeometry& stored = idx.summary.layers[l].geometry;
      if (mine.capacity != stored.capacity || mine.k != stored.k ||
          mine.blocks_per_slice != stored.blocks_per_slice) {
        throw CheckpointError(layer_name(l) + " geometry (capacity " +
                              std::to_string(stored.capacity) + ", k " + std::to_string(stored.k) +
                              ", blocks_per_slice " + std::to_string(stored.blocks_per_slice) +
                              ") differs from what this build computes (" +
                              std::to_string(mine.capacity) + ", " + std::to_string(mine.k) + ", " +
                              std::to_string(mine.blocks_per_slice) + ")");
      }
      bloom.set_layer_inserted(
          l, share_of(idx.summary.layers[l].inserted, owned, h.params.num_slices));
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree_or_throw(comm, err, context);

  std::vector<std::string> problems;
  try {
    with_file_context(file, [&] {
      core::ScalableBloom& bloom = out.set->bloom();
      problems = read_and_check_bloom(comm, f.get(), dxpl.get(), idx, owned, [&](std::size_t l) {
        return owned.size() == 0 ? nullptr : bloom.slice_words(l, owned.first).data();
      });
      const std::vector<std::uint64_t> sums =
          read_tier2_checksums(comm, f.get(), dxpl.get(), owned);
      const Tier2Map map(f.get(), file, idx);
      for (std::uint32_t s = owned.first; s < owned.last; ++s) {
        std::string p = check_tier2_slice(map, s, sums[s - owned.first], verify_tier2);
        if (!p.empty()) {
          problems.push_back(std::move(p));
          continue;
        }
        out.set->exact().attach_base(s, map.view(s), map.keepalive());
      }
      map.advise_random();
      return 0;
    });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
  }
  agree_or_throw(comm, join(problems), context);
  try {
    f.close("H5Fclose");
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree_or_throw(comm, err, context);
  out.summary = std::move(idx.summary);
  return out;
}

void rebase_on_checkpoint(const comm::Communicator& comm, const std::filesystem::path& file,
                          core::TwoTierSet& set, bool verify_tier2) {
  const std::string context = "cannot rebase tier 2 on " + file.string();
  quiet_hdf5_errors();
  const core::SliceRange owned = set.owned();
  std::string err;
  try {
    with_file_context(file, [&] {
      Hid f = open_parallel_file(comm, file);
      Hid dxpl = collective_dxpl();
      const FileIndex idx = IndexReader(f.get(), dxpl.get(), file.string()).read();
      if (idx.summary.header.params.num_slices != set.bloom().params().num_slices) {
        throw CheckpointError("file has " + std::to_string(idx.summary.header.params.num_slices) +
                              " slices, the set " +
                              std::to_string(set.bloom().params().num_slices));
      }
      const std::vector<std::uint64_t> sums =
          read_tier2_checksums(comm, f.get(), dxpl.get(), owned);
      const Tier2Map map(f.get(), file, idx);
      std::vector<std::string> problems;
      for (std::uint32_t s = owned.first; s < owned.last; ++s) {
        std::string p = check_tier2_slice(map, s, sums[s - owned.first], verify_tier2);
        if (!p.empty()) problems.push_back(std::move(p));
      }
      if (!problems.empty()) throw CheckpointError(join(problems));
      // Attaching keeps the content (the file holds base + delta merged), so
      // a failure on another rank after this point leaves this set correct.
      for (std::uint32_t s = owned.first; s < owned.last; ++s) {
        set.exact().attach_base(s, map.view(s), map.keepalive());
      }
      map.advise_random();
      f.close("H5Fclose");
      return 0;
    });
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree_or_throw(comm, err, context);
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

  const std::uint32_t p = idx.summary.header.params.num_slices;
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
      const std::vector<std::uint64_t> sums =
          read_tier2_checksums(comm, f.get(), dxpl.get(), share);
      const Tier2Map map(f.get(), file, idx);
      for (std::uint32_t s = share.first; s < share.last; ++s) {
        std::string prob = check_tier2_slice(map, s, sums[s - share.first], true);
        if (!prob.empty()) problems.push_back(std::move(prob));
      }
      return 0;
    });
  } catch (const std::exception& e) {
    problems.push_back("rank " + std::to_string(comm.rank()) + ": " + e.what());
  }
  report.problems = allgather_strings(comm, problems);
  report.ok = report.problems.empty();
  return report;
}

}  // namespace bloomshard::io
