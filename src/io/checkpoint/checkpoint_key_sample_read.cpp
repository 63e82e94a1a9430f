// The key-sample check of a checkpoint file, serial (HDF5's default
// driver, no MPI): the sample taken from the generation file and every run
// it lists, checked by store/key_sample.hpp (io/checkpoint/checkpoint_key_sample.hpp).
#include <string>
#include <system_error>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/tier2_slices.hpp"
#include "core/window/slot_window.hpp"
#include "io/checkpoint/checkpoint_checksum.hpp"
#include "io/checkpoint/checkpoint_key_sample.hpp"
#include "io/checkpoint/checkpoint_mapping.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/checkpoint/checkpoint_validate.hpp"
#include "io/hdf5/hdf5_file_source.hpp"
#include "io/hdf5/hdf5_read.hpp"

namespace bloomshard::io {
namespace {

// The u64 dataset `name` of `file` as `count` values in place in `mapping`
// (contiguous, 8-byte aligned, inside the file; else CheckpointError).
const std::uint64_t* mapped_u64(const store::FileSource& src, const FileMapping& mapping,
                                const std::string& name, std::uint64_t count) {
  const store::DatasetPlacement placed = src.placement(name);
  const auto& addr = placed.address;
  if (!placed.contiguous || !addr || *addr % 8 != 0) {
    throw CheckpointError("dataset " + name + " is not contiguous and 8-byte aligned in the file");
  }
  return reinterpret_cast<const std::uint64_t*>(
      mapping.range(*addr, checked_mul(count, 8, name), name.c_str()).data());
}

// Serial: appends the sample of the tier-2 file `t` (a run file, or a
// format-1 generation) to `out`: the first key of its first non-empty
// slices whose checksum holds (a damaged slice is verify's to report, not
// evidence against the header).
void sample_tier2_file(const store::FileSource& src, const std::filesystem::path& path,
                       const store::Tier2Index& t, std::vector<SampledKey>& out) {
  const std::uint32_t p = static_cast<std::uint32_t>(t.slice_keys.size());
  const store::Tier2Slices map(src, FileMapping::map(path), t);
  const std::uint64_t* sums = mapped_u64(src, *map.mapping(), ckpt::kTier2Checksums, p);
  std::uint32_t taken = 0;
  for (std::uint32_t s = 0; s < p && taken < kSampledKeysPerRun; ++s) {
    if (t.slice_keys[s] == 0) continue;
    if (!map.check(s, sums[s], true, path.string()).empty()) continue;
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
    const Hdf5FileSource src(f.get(), H5P_DEFAULT);
    const store::FileIndex idx = store::read_generation_index(src, file.string());
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
      words.push_back(
          mapped_u64(src, *mapping, store::layer_dataset(l),
                     checked_mul(checked_mul(g.blocks_per_slice, p, store::layer_dataset(l)),
                                 core::kBlockWords, store::layer_dataset(l))));
    }
    const std::uint64_t* bloom_sums =
        mapped_u64(src, *mapping, ckpt::kBloomChecksums, checked_mul(layers.size(), p, "L*P"));
    const auto bloom_slice_ok = [&](std::uint32_t s) {
      for (std::size_t l = 0; l < layers.size(); ++l) {
        const std::uint64_t per = layouts[l].blocks_per_slice * core::kBlockWords;
        if (bloom_slice_checksum({words[l] + s * per, per}) != bloom_sums[l * p + s]) return false;
      }
      return true;
    };

    std::vector<SampledKey> samples;
    if (h.format_version == 1) {
      sample_tier2_file(src, file, idx.tier2, samples);
    } else {
      for (const CheckpointRunRef& ref : idx.summary.runs) {
        const std::filesystem::path run = run_path(file.parent_path(), ref.id);
        std::error_code ec;
        if (!std::filesystem::is_regular_file(run, ec)) continue;  // verify names it
        with_file_context(run, [&] {
          Hid r = open_serial_file(run);
          const Hdf5FileSource run_src(r.get(), H5P_DEFAULT);
          sample_tier2_file(run_src, run, store::read_run_index(run_src, run.string(), h, ref),
                            samples);
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

}  // namespace bloomshard::io
