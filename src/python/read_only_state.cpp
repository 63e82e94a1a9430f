// ReadOnlyState: choose the generation, check the header, map the Bloom
// layers and the runs (serial HDF5, sec2 driver; no MPI), look keys up.
#include "read_only_state.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "bloomshard/core/key_builder.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/checksum.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/key_sample.hpp"
#include "bloomshard/store/layout.hpp"
#include "bloomshard/store/state_dir.hpp"
#include "bloomshard/store/validate.hpp"
#include "core/minhash/minhash_jaccard.hpp"
#include "core/window/slot_window.hpp"
#include "dataset_address.hpp"
#include "io/checkpoint/checkpoint_summary.hpp"
#include "io/hdf5/hdf5_call.hpp"
#include "io/hdf5/hdf5_read.hpp"

namespace bloomshard::python {

namespace fs = std::filesystem;

namespace {

// Keys are decided in chunks: bounded scratch memory, and the chunk's
// hashes stay in cache between the Bloom pass of each layer and tier 2.
constexpr std::size_t kChunk = 4096;
// At most this many problems are listed by a verifying open (then a count).
constexpr std::size_t kMaxListed = 8;

std::string layer_path(std::size_t l) { return "/bloom/layer_" + std::to_string(l); }

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

// The generation file `path` names: itself (a file), or in a state dir
// generation `g`, else LATEST's, else the newest.
fs::path choose_generation(const fs::path& path, std::optional<std::uint64_t> g) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (!fs::is_regular_file(path, ec)) {
      throw StateError(path.string() + ": no such state directory or checkpoint file");
    }
    return path;
  }
  if (g) {
    const fs::path file = store::generation_path(path, *g);
    if (!fs::is_regular_file(file, ec)) {
      throw StateError(path.string() + ": no generation " + std::to_string(*g) + " (no file " +
                       file.filename().string() + ")");
    }
    return file;
  }
  const std::vector<std::uint64_t> candidates = store::resume_candidates(path);
  if (candidates.empty()) throw StateError(path.string() + ": no checkpoint in this directory");
  return store::generation_path(path, candidates.front());
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
  // "<policy> unicode <version>[ key-scheme/v1]": the version is the token
  // after "unicode" (a key-scheme suffix follows it on newer states).
  std::string unicode;
  if (const std::size_t u = stored.find(" unicode "); u != std::string::npos) {
    const std::size_t from = u + 1;
    const std::size_t version_end = stored.find(' ', from + 8);
    unicode = stored.substr(
        from, version_end == std::string::npos ? std::string::npos : version_end - from);
  }
  const std::string mine = "unicode " + std::string(core::normalization_unicode_version());
  if (p != core::NormalizePolicy::kNone && !unicode.empty() && unicode != mine) {
    throw StateError(file.string() + ": normalization '" + stored + "' needs " + unicode +
                     ", this build has " + mine);
  }
  return p;
}

// What this build can use: its hash scheme and Bloom layout.
void check_header(const store::CheckpointHeader& h, const fs::path& file,
                  std::optional<std::uint64_t> g) {
  if (g && h.generation != *g) {
    throw StateError(file.string() + " holds generation " + std::to_string(h.generation) +
                     ", not " + std::to_string(*g));
  }
  if (const std::string e = store::header_names_problem(h); !e.empty()) {
    throw StateError(file.string() + ": " + e);
  }
}

}  // namespace

ReadOnlyState::~ReadOnlyState() = default;

std::unique_ptr<ReadOnlyState> ReadOnlyState::open(const fs::path& path,
                                                   const OpenOptions& options) {
  std::unique_ptr<ReadOnlyState> st(new ReadOnlyState());
  st->file_ = choose_generation(path, options.generation);
  const fs::path& file = st->file_;
  try {
    st->summary_ = io::read_checkpoint_summary(file);
  } catch (const store::CheckpointError& e) {
    throw StateError(e.what());
  }
  const store::CheckpointHeader& h = st->summary_.header;
  check_header(h, file, options.generation);
  st->policy_ = policy_of(h.normalization, file);
  try {
    st->scheme_ = core::key_scheme_from_state(
        h.key_field, h.normalization.substr(0, h.normalization.find(' ')), h.key_scheme);
  } catch (const std::invalid_argument& e) {
    throw StateError(file.string() + ": key scheme: " + e.what());
  }
  st->legacy_scheme_ = core::is_legacy_key_scheme(st->scheme_);
  if (st->scheme_.fields.size() > 1) {
    throw StateError(file.string() + ": the state's keys are tuples of the fields " +
                     core::key_fields_text(st->scheme_) +
                     "; the Python module looks up one-value keys only (use the C++ query "
                     "command for tuple keys)");
  }
  const std::uint32_t p = h.params.num_slices;
  const bool format1 = h.format_version == 1;
  if (st->scheme_.unit == core::KeyUnit::kMinHash && st->scheme_.confirm_jaccard > 0.0) {
    // The forms pack bands x rows values of the scheme's 4 bits (/b4).
    st->form_bytes_ =
        core::bbit_bytes(st->scheme_.bands * st->scheme_.rows, core::kDefaultConfirmBits);
  }

  try {
    io::quiet_hdf5_errors();
    {
      io::Hid f = io::open_serial_file(file);
      st->generation_mapping_ = store::FileMapping::map(file);
      st->map_layers(f.get());
      f.close("H5Fclose");
    }
    // Format 2: the generation file is the Bloom words plus a little
    // metadata (~2 bytes per key of capacity). Fault it in now, page tables
    // included: a first lookup pass otherwise paid a minor fault per 4 KiB
    // page it touched (3x slower on a 2M-key state). A format-1 file holds
    // tier 2 too: not it.
    if (!format1) st->generation_mapping_->advise_willneed();
    // Tier 2: format 1 holds it in the generation file, format 2 in runs.
    for (const store::CheckpointRunRef& ref : st->summary_.runs) {
      const fs::path run_file = format1 ? file : store::run_path(file.parent_path(), ref.id);
      try {
        st->runs_.push_back(MappedRun::open(run_file, file, ref, p, format1, st->form_bytes_,
                                            st->scheme_.confirm_origins));
      } catch (const StateError&) {
        throw;
      } catch (const std::exception& e) {
        throw StateError(run_file.string() + ": cannot read run file: " + e.what());
      }
    }
  } catch (const StateError&) {
    throw;
  } catch (const std::exception& e) {
    throw StateError(file.string() + ": cannot read state: " + e.what());
  }
  if (options.verify) {
    std::vector<std::string> problems;
    for (std::uint32_t s = 0; s < p; ++s) {
      try {
        st->require_bloom_slice(s);
      } catch (const StateError& e) {
        problems.push_back(e.what());
      }
    }
    for (const MappedRun& run : st->runs_) run.verify(problems);
    if (!problems.empty()) throw StateError(summarize(problems));
    st->verified_at_open_ = true;
  }
  st->check_key_scheme_reproduces_a_stored_key();
  return st;
}

void ReadOnlyState::map_layers(hid_t file) {
  const store::CheckpointHeader& h = summary_.header;
  const std::uint32_t p = h.params.num_slices;
  layers_.resize(summary_.layers.size());
  // A windowed state's layer is layer j of its slot (core/window/slot_window.hpp):
  // its geometry and block remix are those of index j.
  std::vector<std::uint64_t> slots;
  for (const store::CheckpointLayerInfo& info : summary_.layers) slots.push_back(info.slot);
  const std::uint32_t window = h.window.empty() ? 0 : core::parse_window_attribute(h.window).window;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const core::BloomLayerGeometry& g = summary_.layers[l].geometry;
    const std::uint32_t index =
        window == 0 ? static_cast<std::uint32_t>(l) : core::slot_local_index(slots, l);
    const core::BloomLayerGeometry mine = core::layer_geometry(
        window == 0 ? h.params : core::slot_layer_params(h.params, window), index);
    if (mine.capacity != g.capacity || mine.k != g.k ||
        mine.blocks_per_slice != g.blocks_per_slice) {
      throw StateError(file_.string() + ": " + layer_path(l) +
                       " geometry differs from what this build computes (capacity " +
                       std::to_string(g.capacity) + " vs " + std::to_string(mine.capacity) +
                       ", k " + std::to_string(g.k) + " vs " + std::to_string(mine.k) + ")");
    }
    Layer& layer = layers_[l];
    layer.layout = {g.blocks_per_slice, p, 0, index, g.k};
    const std::uint64_t words = store::checked_mul(
        store::checked_mul(g.blocks_per_slice, p, layer_path(l)), core::kBlockWords, layer_path(l));
    const std::uint64_t addr = dataset_address(file, file_.string(), layer_path(l), words, 8);
    const auto bytes = generation_mapping_->range(addr, words * 8, layer_path(l).c_str());
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % core::kBlockBytes == 0) {
      layer.words = reinterpret_cast<const std::uint64_t*>(bytes.data());
    } else {  // not seen in files this build writes (64-byte alignment)
      layer.copy.assign(words, 0);
      std::memcpy(layer.copy.data(), bytes.data(), bytes.size());
      layer.words = layer.copy.data();
    }
  }
  // The per-slice checksums are mapped, not read: [L][P] values, read only
  // as slices are first used.
  if (layers_.empty() || p == 0) return;
  const std::vector<std::uint64_t> dims = {layers_.size(), p};
  const std::uint64_t addr =
      dataset_address(file, file_.string(), store::ckpt::kBloomChecksums, dims, 8);
  const auto sums = generation_mapping_->range(addr, layers_.size() * std::uint64_t{p} * 8,
                                               store::ckpt::kBloomChecksums);
  bloom_checksums_ = reinterpret_cast<const std::uint64_t*>(sums.data());
  bloom_verdicts_ = SliceVerdicts(p);
}

std::string ReadOnlyState::check_bloom_slice(std::uint32_t s) const {
  const std::uint32_t p = summary_.header.params.num_slices;
  std::string failed;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const std::uint64_t per = layers_[l].layout.blocks_per_slice * core::kBlockWords;
    const std::uint64_t stored = bloom_checksums_[l * p + s];
    const std::uint64_t computed = store::bloom_slice_checksum({layers_[l].words + s * per, per});
    if (computed != stored) {
      failed += (failed.empty() ? "" : "; ") + layer_path(l) + " (stored " +
                std::to_string(stored) + " in " + store::ckpt::kBloomChecksums + ", computed " +
                std::to_string(computed) + ")";
    }
  }
  if (failed.empty()) return {};
  return file_.string() + " Bloom slice " + std::to_string(s) + ": XXH3 checksum mismatch in " +
         failed;
}

void ReadOnlyState::require_bloom_slice(std::uint32_t s) const {
  if (layers_.empty()) return;
  bloom_verdicts_.require(s, [this](std::uint32_t x) { return check_bloom_slice(x); });
}

void ReadOnlyState::check_key_scheme_reproduces_a_stored_key() const {
  // From every run: older runs' keys live in older Bloom layers. The check
  // itself is the one every C++ reader runs (io/checkpoint/checkpoint_key_sample.hpp).
  std::vector<store::SampledKey> samples;
  for (const MappedRun& run : runs_) {
    const std::vector<std::uint64_t>& keys = run.slice_keys();
    std::uint32_t sampled = 0;
    for (std::uint32_t s = 0; s < keys.size() && sampled < store::kSampledKeysPerRun; ++s) {
      if (keys[s] == 0) continue;
      ++sampled;
      const core::SliceBaseView v = run.checked_slice(s);  // raises if that slice is damaged
      require_bloom_slice(s);                              // the same for its Bloom words
      store::sample_first_keys({&v, 1}, s, run.path().filename().string(), samples, 1);
    }
  }
  const std::string problem =
      store::key_sample_problem(summary_.header, samples, [this](const core::KeyHash& h) {
        std::uint8_t maybe = 0;
        for (std::size_t l = 0; l < layers_.size(); ++l) {
          core::query_layer_batch(layers_[l].words, layers_[l].layout, {&h, 1}, {&maybe, 1}, l > 0);
        }
        return layers_.empty() || maybe != 0;
      });
  if (!problem.empty()) throw StateError(file_.string() + ": " + problem);
}

CheckProgress ReadOnlyState::check_progress() const noexcept {
  CheckProgress c;
  const std::uint64_t p = summary_.header.params.num_slices;
  if (!layers_.empty()) {
    c.bloom_slices = p;
    c.bloom_good = bloom_verdicts_.good();
    c.checks_run = bloom_verdicts_.checks_run();
  }
  for (const MappedRun& r : runs_) {
    c.tier2_slices += p;
    c.tier2_good += r.verdicts().good();
    c.checks_run += r.verdicts().checks_run();
  }
  return c;
}

std::vector<fs::path> ReadOnlyState::run_files() const {
  std::vector<fs::path> out;
  for (const MappedRun& r : runs_) out.push_back(r.path());
  return out;
}

std::string ReadOnlyState::normalize(std::string_view key) const {
  if (!legacy_scheme_) {  // text rule, policy and digest: the key bytes the state stores
    core::KeyBuilder builder(scheme_);
    const std::string_view one[] = {key};
    return std::string(builder.build(one));
  }
  std::string out;
  const std::string_view v = core::normalize_key(policy_, key, out);
  return std::string(v);
}

bool ReadOnlyState::in_tier2(std::uint32_t slice, std::uint64_t fingerprint,
                             std::string_view key) const {
  // Newest first: a present key stops at its run (runs are disjoint).
  for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) {
    if (it->contains(slice, fingerprint, key)) return true;
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
  std::vector<std::uint32_t> slices;
  slices.reserve(std::min(kChunk, keys.size()));
  std::vector<std::uint8_t> maybe;
  std::optional<core::KeyBuilder> builder;  // per call: it holds scratch state
  if (!legacy_scheme_) builder.emplace(scheme_);
  for (std::size_t begin = 0; begin < keys.size(); begin += kChunk) {
    const std::size_t end = std::min(keys.size(), begin + kChunk);
    chunk_keys.clear();
    where.clear();
    hashes.clear();
    slices.clear();
    for (std::size_t i = begin; i < end; ++i) {
      std::string_view k = keys[i];
      if (builder) {
        try {
          const std::string_view one[] = {k};
          normalized[i - begin].assign(builder->build(one));  // valid until the next build
          k = normalized[i - begin];
        } catch (const core::InvalidUtf8Error&) {
          out[i] = Answer::kInvalidKey;
          continue;
        }
      } else if (policy_ != core::NormalizePolicy::kNone) {
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
      slices.push_back(core::slice_of(hashes.back(), p));
    }
    if (!layers_.empty()) {
      for (const std::uint32_t s : slices) {
        if (!bloom_verdicts_.known_good(s)) require_bloom_slice(s);  // the first time only
      }
    }
    maybe.assign(hashes.size(), 0);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      core::query_layer_batch(layers_[l].words, layers_[l].layout, hashes, maybe, l > 0);
    }
    for (std::size_t j = 0; j < hashes.size(); ++j) {
      bool present = maybe[j] != 0;
      if (present && exact) {
        present = in_tier2(slices[j], core::fingerprint(hashes[j]), chunk_keys[j]);
      }
      out[where[j]] = present ? Answer::kPresent : Answer::kAbsent;
    }
  }
}

}  // namespace bloomshard::python
