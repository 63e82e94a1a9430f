// ReadOnlyState: open (serial HDF5, sec2 driver; no MPI), map, check, look up.
#include "read_only_state.hpp"

#include <hdf5.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/run_compaction.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/io/checkpoint_checksum.hpp"
#include "bloomshard/io/checkpoint_generations.hpp"
#include "bloomshard/io/checkpoint_layout.hpp"
#include "bloomshard/io/checkpoint_validate.hpp"
#include "bloomshard/io/hdf5_call.hpp"
#include "bloomshard/io/hdf5_parallel.hpp"

namespace bloomshard::python {

static_assert(std::endian::native == std::endian::little,
              "the mapped checkpoint values are little-endian");

namespace fs = std::filesystem;

namespace {

// Keys are decided in chunks: bounded scratch memory and the chunk's hashes
// stay in cache between the Bloom pass of each layer and the tier-2 pass.
constexpr std::size_t kChunk = 4096;
// At most this many problems are listed per open (then a count).
constexpr std::size_t kMaxListed = 8;

enum SliceCheck : std::uint8_t { kUnchecked = 0, kChecked = 1, kBroken = 2 };

std::string layer_path(std::size_t l) { return "/bloom/layer_" + std::to_string(l); }

// File address of a contiguous dataset of `length` bytes (0 if empty).
std::uint64_t dataset_address(hid_t file, const std::string& name, std::uint64_t length) {
  io::Hid d = io::open_dataset(file, name);
  if (!io::dataset_is_contiguous(d.get()))
    throw StateError("dataset " + name + " is not contiguous");
  if (length == 0) return 0;
  const auto addr = io::dataset_file_offset(d.get());
  if (!addr) throw StateError("dataset " + name + " has no file address");
  if (*addr % 8 != 0) throw StateError("dataset " + name + " is not 8-byte aligned in the file");
  return *addr;
}

std::string summarize(const std::vector<std::string>& problems) {
  std::string text;
  for (std::size_t i = 0; i < problems.size() && i < kMaxListed; ++i) {
    text += (i ? "\n" : "") + problems[i];
  }
  if (problems.size() > kMaxListed) {
    text += "\n... and " + std::to_string(problems.size() - kMaxListed) + " more problems";
  }
  return text;
}

// The policy a header's "normalization" attribute names ("nfc-casefold/v2
// unicode 15.0.0"); refuses a Unicode version other than this build's for
// policies that depend on it.
core::NormalizePolicy policy_of(const std::string& stored, const fs::path& file) {
  const std::size_t space = stored.find(' ');
  const std::string label = stored.substr(0, space);
  core::NormalizePolicy p{};
  try {
    p = core::parse_policy(label);
  } catch (const std::invalid_argument&) {
    throw StateError(file.string() + ": normalization '" + stored +
                     "' is not one this build knows");
  }
  const std::string unicode = space == std::string::npos ? "" : stored.substr(space + 1);
  const std::string mine = "unicode " + std::string(core::normalization_unicode_version());
  if (p != core::NormalizePolicy::kNone && !unicode.empty() && unicode != mine) {
    throw StateError(file.string() + ": normalization '" + stored + "' needs " + unicode +
                     ", this build has " + mine);
  }
  return p;
}

}  // namespace

// One Bloom layer: its words in the mapped generation file (or a copy when
// the file places them off a 64-byte boundary: the SIMD probes load whole
// aligned blocks).
struct ReadOnlyState::Layer {
  core::LayerLayout layout;
  const std::uint64_t* words = nullptr;
  core::BlockWords copy;
};

// One tier-2 run: its three per-key datasets in a mapped file, the per-slice
// index, and a check mark per slice (its offsets are validated on first use).
struct ReadOnlyState::Run {
  fs::path path;
  std::shared_ptr<const io::FileMapping> mapping;
  std::uint64_t fps = 0, offs = 0, bytes = 0;  // file addresses
  std::vector<std::uint64_t> slice_keys, slice_bytes, key_start, byte_start, checksums;
  std::unique_ptr<std::atomic<std::uint8_t>[]> checked;

  // Reads the tier-2 index of the open `file` (this run file, or a format-1
  // generation), checks its shapes and maps the file.
  void index(hid_t file, std::uint32_t p);

  [[nodiscard]] core::SliceBaseView view(std::uint32_t s) const {
    const std::uint64_t keys = slice_keys[s];
    const auto fp = mapping->range(fps + key_start[s] * 8, keys * 8, io::ckpt::kFingerprints);
    const auto off =
        mapping->range(offs + (key_start[s] + s) * 8, (keys + 1) * 8, io::ckpt::kOffsets);
    const auto by = mapping->range(bytes + byte_start[s], slice_bytes[s], io::ckpt::kBytes);
    core::SliceBaseView v;
    v.fingerprints = {reinterpret_cast<const std::uint64_t*>(fp.data()), keys};
    v.offsets = {reinterpret_cast<const std::uint64_t*>(off.data()), keys + 1};
    v.bytes = {reinterpret_cast<const char*>(by.data()), by.size()};
    return v;
  }
  // The slice's view once its offsets are known to stay inside its bytes.
  [[nodiscard]] core::SliceBaseView checked_view(std::uint32_t s) const {
    std::uint8_t state = checked[s].load(std::memory_order_acquire);
    if (state == kUnchecked) {
      std::string problem;
      try {
        const core::SliceBaseView v = view(s);
        problem = io::check_offsets(v.offsets, v.bytes.size());
      } catch (const std::exception& e) {
        problem = e.what();
      }
      state = problem.empty() ? kChecked : kBroken;
      checked[s].store(state, std::memory_order_release);
      if (!problem.empty()) {
        throw StateError(path.string() + " tier-2 slice " + std::to_string(s) + ": " + problem);
      }
    }
    if (state == kBroken) {
      throw StateError(path.string() + " tier-2 slice " + std::to_string(s) +
                       ": offsets do not span the slice's bytes");
    }
    return view(s);
  }
};

ReadOnlyState::~ReadOnlyState() = default;

std::unique_ptr<ReadOnlyState> ReadOnlyState::open(const fs::path& path,
                                                   const OpenOptions& options) {
  std::unique_ptr<ReadOnlyState> st(new ReadOnlyState());
  std::error_code ec;
  fs::path file = path;
  if (fs::is_directory(path, ec)) {
    if (options.generation) {
      file = io::generation_path(path, *options.generation);
      if (!fs::is_regular_file(file, ec)) {
        throw StateError(path.string() + ": no generation " + std::to_string(*options.generation) +
                         " (no file " + file.filename().string() + ")");
      }
    } else {
      const std::vector<std::uint64_t> candidates = io::resume_candidates(path);
      if (candidates.empty()) throw StateError(path.string() + ": no checkpoint in this directory");
      file = io::generation_path(path, candidates.front());
    }
  } else if (!fs::is_regular_file(path, ec)) {
    throw StateError(path.string() + ": no such state directory or checkpoint file");
  }
  st->file_ = file;
  const fs::path dir = file.parent_path();
  try {
    st->summary_ = io::read_checkpoint_summary(file);
  } catch (const io::CheckpointError& e) {
    throw StateError(e.what());
  }
  const io::CheckpointHeader& h = st->summary_.header;
  if (options.generation && !fs::is_directory(path, ec) && h.generation != *options.generation) {
    throw StateError(file.string() + " holds generation " + std::to_string(h.generation) +
                     ", not " + std::to_string(*options.generation));
  }
  if (h.hash_scheme != core::kHashSchemeName) {
    throw StateError(file.string() + ": hash scheme '" + h.hash_scheme +
                     "' differs from this build's '" + std::string(core::kHashSchemeName) + "'");
  }
  if (h.bloom_layout != core::kBloomLayoutName) {
    throw StateError(file.string() + ": Bloom layout '" + h.bloom_layout +
                     "' differs from this build's '" + std::string(core::kBloomLayoutName) + "'");
  }
  st->policy_ = policy_of(h.normalization, file);
  const std::uint32_t p = h.params.num_slices;

  std::vector<std::string> problems;
  try {
    io::quiet_hdf5_errors();
    io::Hid f = io::open_serial_file(file);
    st->generation_mapping_ = io::FileMapping::map(file);
    const io::FileMapping* mapping = st->generation_mapping_.get();
    st->layers_.resize(st->summary_.layers.size());
    for (std::size_t l = 0; l < st->layers_.size(); ++l) {
      const core::BloomLayerGeometry& g = st->summary_.layers[l].geometry;
      const core::BloomLayerGeometry mine =
          core::layer_geometry(h.params, static_cast<std::uint32_t>(l));
      if (mine.capacity != g.capacity || mine.k != g.k ||
          mine.blocks_per_slice != g.blocks_per_slice) {
        throw StateError(file.string() + ": " + layer_path(l) +
                         " geometry differs from what this build computes (capacity " +
                         std::to_string(g.capacity) + " vs " + std::to_string(mine.capacity) +
                         ", k " + std::to_string(g.k) + " vs " + std::to_string(mine.k) + ")");
      }
      Layer& layer = st->layers_[l];
      layer.layout = {g.blocks_per_slice, p, 0, static_cast<std::uint32_t>(l), g.k};
      const std::uint64_t words = io::checked_mul(
          io::checked_mul(g.blocks_per_slice, p, layer_path(l)), core::kBlockWords, layer_path(l));
      const std::uint64_t addr = dataset_address(f.get(), layer_path(l), words * 8);
      const auto bytes = mapping->range(addr, words * 8, layer_path(l).c_str());
      if (reinterpret_cast<std::uintptr_t>(bytes.data()) % core::kBlockBytes == 0) {
        layer.words = reinterpret_cast<const std::uint64_t*>(bytes.data());
      } else {  // not seen in files this build writes (64-byte alignment)
        layer.copy.assign(words, 0);
        std::memcpy(layer.copy.data(), bytes.data(), bytes.size());
        layer.words = layer.copy.data();
      }
    }
    if (options.verify) {
      io::Hid d = io::open_dataset(f.get(), io::ckpt::kBloomChecksums);
      std::vector<std::uint64_t> sums(st->layers_.size() * p);
      io::check_h5(H5Dread(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, sums.data()),
                   "H5Dread(/bloom/checksums)");
      for (std::size_t l = 0; l < st->layers_.size(); ++l) {
        const std::uint64_t per = st->layers_[l].layout.blocks_per_slice * core::kBlockWords;
        for (std::uint32_t s = 0; s < p; ++s) {
          const std::uint64_t got = io::bloom_slice_checksum({st->layers_[l].words + s * per, per});
          if (got != sums[l * p + s]) {
            problems.push_back(file.string() + " " + layer_path(l) + " slice " + std::to_string(s) +
                               ": XXH3 checksum mismatch");
          }
        }
      }
    }
    // Tier 2: format 1 holds it in the generation file, format 2 in runs.
    std::vector<std::pair<fs::path, io::CheckpointRunRef>> sources;
    if (h.format_version == 1) {
      sources.emplace_back(file, st->summary_.runs.at(0));
    } else {
      for (const io::CheckpointRunRef& ref : st->summary_.runs) {
        sources.emplace_back(io::run_path(dir, ref.id), ref);
      }
    }
    f.close("H5Fclose");
    // Format 2: the generation file is the Bloom words plus a little
    // metadata (~2 bytes per key of capacity). Fault it in now, page tables
    // included: a first lookup pass otherwise paid a minor fault per 4 KiB
    // page it touched (3x slower on a 2M-key state). Tier 2 stays on disk
    // until lookups touch it; a format-1 file holds tier 2 too, so not it.
    if (h.format_version != 1) st->generation_mapping_->advise_willneed();
    for (const auto& [run_file, ref] : sources) {
      if (!fs::is_regular_file(run_file, ec)) {
        throw StateError(run_file.string() + ": missing run file (run " + std::to_string(ref.id) +
                         " of generation " + std::to_string(h.generation) + ")");
      }
      Run run;
      run.path = run_file;
      io::Hid rf = io::open_serial_file(run_file);
      if (h.format_version != 1) {
        const auto fail = [&](const std::string& why) {
          throw StateError(run_file.string() + ": " + why);
        };
        if (!io::has_attr(rf.get(), io::ckpt::kContent) ||
            io::read_attr_string(rf.get(), io::ckpt::kContent) != io::ckpt::kContentRun) {
          fail("not a tier-2 run file");
        }
        if (!io::has_attr(rf.get(), io::ckpt::kFormatVersion) ||
            io::read_attr_u64(rf.get(), io::ckpt::kFormatVersion) != 2) {
          fail("run file format_version is not 2");
        }
        if (!io::has_attr(rf.get(), io::ckpt::kTier2Run) ||
            io::read_attr_u64(rf.get(), io::ckpt::kTier2Run) != ref.id) {
          fail("does not hold run " + std::to_string(ref.id) + " the generation names");
        }
        if (!io::has_attr(rf.get(), io::ckpt::kNumSlices) ||
            io::read_attr_u64(rf.get(), io::ckpt::kNumSlices) != p) {
          fail("slice count differs from the generation's " + std::to_string(p));
        }
      }
      run.index(rf.get(), p);
      rf.close("H5Fclose");
      const std::uint64_t keys = run.key_start.back(), bytes = run.byte_start.back();
      if (keys != ref.keys || bytes != ref.bytes) {
        throw StateError(run_file.string() + ": holds " + std::to_string(keys) + " keys of " +
                         std::to_string(bytes) + " bytes, the generation lists " +
                         std::to_string(ref.keys) + " keys of " + std::to_string(ref.bytes));
      }
      if (options.verify) {
        for (std::uint32_t s = 0; s < p; ++s) {
          const std::string where = run_file.string() + " tier-2 slice " + std::to_string(s);
          try {
            const core::SliceBaseView v = run.checked_view(s);
            if (io::tier2_slice_checksum(v) != run.checksums[s]) {
              problems.push_back(where +
                                 ": XXH3 checksum mismatch over /tier2/fingerprints, "
                                 "/tier2/offsets, /tier2/bytes");
              continue;
            }
            core::validate_base(v);
          } catch (const std::exception& e) {
            problems.push_back(where + ": " + e.what());
          }
        }
      }
      // Only Bloom positives touch tier 2: no readahead around each probe.
      run.mapping->advise_random();
      st->run_paths_.push_back(run.path);
      st->runs_.push_back(std::move(run));
    }
  } catch (const StateError&) {
    throw;
  } catch (const std::exception& e) {
    throw StateError(file.string() + ": cannot read state: " + e.what());
  }
  if (!problems.empty()) throw StateError(summarize(problems));
  return st;
}

void ReadOnlyState::Run::index(hid_t file, std::uint32_t p) {
  Run& run = *this;
  const auto column = [&](const char* name, std::uint64_t length) {
    if (!io::has_link(file, name))
      throw StateError(run.path.string() + ": missing dataset " + name);
    io::Hid d = io::open_dataset(file, name);
    std::vector<std::uint64_t> v = io::read_all_u64(d.get(), H5P_DEFAULT);
    if (v.size() != length) {
      throw StateError(run.path.string() + ": dataset " + name + " has " +
                       std::to_string(v.size()) + " values, expected " + std::to_string(length));
    }
    return v;
  };
  run.slice_keys = column(io::ckpt::kSliceKeys, p);
  run.slice_bytes = column(io::ckpt::kSliceBytes, p);
  run.checksums = column(io::ckpt::kTier2Checksums, p);
  io::Tier2Extents e = io::tier2_extents(run.slice_keys, run.slice_bytes, run.path.string());
  run.key_start = std::move(e.key_start);
  run.byte_start = std::move(e.byte_start);
  const auto dims_are = [&](const char* name, std::uint64_t n) {
    io::Hid d = io::open_dataset(file, name);
    if (io::dataset_dims(d.get()) != std::vector<std::uint64_t>{n}) {
      throw StateError(run.path.string() + ": dataset " + name + " does not have " +
                       std::to_string(n) + " values");
    }
  };
  dims_are(io::ckpt::kFingerprints, e.keys);
  dims_are(io::ckpt::kOffsets, e.keys + p);
  dims_are(io::ckpt::kBytes, e.bytes);
  run.fps = dataset_address(file, io::ckpt::kFingerprints, e.keys * 8);
  run.offs = dataset_address(file, io::ckpt::kOffsets, (e.keys + p) * 8);
  run.bytes = dataset_address(file, io::ckpt::kBytes, e.bytes);
  run.mapping = io::FileMapping::map(run.path);
  run.checked = std::make_unique<std::atomic<std::uint8_t>[]>(p);
}

std::string ReadOnlyState::normalize(std::string_view key) const {
  std::string out;
  const std::string_view v = core::normalize_key(policy_, key, out);
  return std::string(v);
}

bool ReadOnlyState::in_tier2(std::uint32_t slice, std::uint64_t fingerprint,
                             std::string_view key) const {
  // Newest first: a present key stops at its run (runs are disjoint).
  for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) {
    if (it->slice_keys[slice] == 0) continue;
    if (it->checked_view(slice).contains(fingerprint, key)) return true;
  }
  return false;
}

void ReadOnlyState::lookup(std::span<const std::string_view> keys, std::span<Answer> out,
                           bool exact) const {
  if (out.size() != keys.size()) throw std::invalid_argument("lookup: out.size() != keys.size()");
  const std::uint64_t seed = summary_.header.hash_seed;
  const std::uint32_t p = summary_.header.params.num_slices;
  // Sized to the batch: a one-key call must not build kChunk strings.
  std::vector<std::string> normalized(std::min(kChunk, keys.size()));
  std::vector<std::string_view> chunk_keys;
  std::vector<std::size_t> where;
  std::vector<core::KeyHash> hashes;
  std::vector<std::uint8_t> maybe;
  for (std::size_t begin = 0; begin < keys.size(); begin += kChunk) {
    const std::size_t end = std::min(keys.size(), begin + kChunk);
    chunk_keys.clear();
    where.clear();
    hashes.clear();
    for (std::size_t i = begin; i < end; ++i) {
      std::string_view k = keys[i];
      if (policy_ != core::NormalizePolicy::kNone) {
        try {
          k = core::normalize_key(policy_, k, normalized[i - begin]);
        } catch (const core::InvalidUtf8Error&) {
          out[i] = Answer::kInvalidKey;
          continue;
        }
      }
      chunk_keys.push_back(k);
      where.push_back(i);
      hashes.push_back(core::hash_key(k, seed));
    }
    maybe.assign(hashes.size(), 0);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      core::query_layer_batch(layers_[l].words, layers_[l].layout, hashes, maybe, l > 0);
    }
    for (std::size_t j = 0; j < hashes.size(); ++j) {
      bool present = maybe[j] != 0;
      if (present && exact) {
        present =
            in_tier2(core::slice_of(hashes[j], p), core::fingerprint(hashes[j]), chunk_keys[j]);
      }
      out[where[j]] = present ? Answer::kPresent : Answer::kAbsent;
    }
  }
}

}  // namespace bloomshard::python
