// See checkpoint_forms.hpp: which states carry confirmation forms, and
// reading them back.
#include "io/checkpoint/checkpoint_forms.hpp"

#include <exception>
#include <stdexcept>

#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/store/layout.hpp"
#include "bloomshard/store/tier2_forms.hpp"
#include "comm/heartbeat.hpp"
#include "core/minhash/minhash_jaccard.hpp"
#include "io/checkpoint/checkpoint_error.hpp"
#include "io/checkpoint/checkpoint_mapping.hpp"
#include "io/hdf5/hdf5_file_source.hpp"
#include "io/hdf5/hdf5_parallel.hpp"
#include "io/hdf5/hdf5_read.hpp"

namespace bloomshard::io {

namespace ckpt = store::ckpt;

std::optional<FormScheme> form_scheme_of(const store::CheckpointHeader& h) {
  if (h.key_scheme.empty()) return std::nullopt;
  core::KeyScheme key;
  try {
    const std::string label = h.normalization.substr(0, h.normalization.find(' '));
    key = core::key_scheme_from_state(h.key_field, label, h.key_scheme);
  } catch (const std::exception& e) {
    throw CheckpointError(std::string("the key scheme cannot be read: ") + e.what());
  }
  if (key.unit != core::KeyUnit::kMinHash || key.confirm_jaccard == 0.0) return std::nullopt;
  FormScheme s;
  s.threshold = key.confirm_jaccard;
  s.values = key.bands * key.rows;
  s.bits = core::kDefaultConfirmBits;  // the item's /b4: the only forms a scheme names
  s.form_bytes = core::bbit_bytes(s.values, s.bits);
  s.origins = key.confirm_origins;
  return s;
}

std::unique_ptr<core::BandConfirmer> make_form_confirmer(const FormScheme& scheme) {
  return std::make_unique<core::BandConfirmer>(scheme.threshold, scheme.values, scheme.bits,
                                               scheme.origins);
}

std::string form_source_problem(const std::optional<FormScheme>& scheme,
                                const core::BandConfirmer* forms) {
  if (scheme && forms == nullptr) {
    return "the key scheme confirms (confirm-jaccard) but no confirmation forms were given";
  }
  if (!scheme && forms != nullptr) {
    return "confirmation forms were given for a key scheme without confirm-jaccard";
  }
  if (scheme && forms->form_bytes() != scheme->form_bytes) {
    return "confirmation forms of " + std::to_string(forms->form_bytes()) +
           " bytes for a key scheme whose forms have " + std::to_string(scheme->form_bytes);
  }
  if (scheme && scheme->origins && !forms->keeps_positions()) {
    return "the key scheme keeps the forms' origins (confirm-origins) but the confirmation forms "
           "given keep no positions";
  }
  return {};
}

namespace {

// "" or why the presence of the form datasets in `src` does not match the
// scheme (both there exactly when it confirms).
std::string presence_problem(const store::FileSource& src, const std::string& where,
                             const std::optional<FormScheme>& scheme, std::uint64_t p) {
  for (const char* name : {ckpt::kTier2FormOrigins, ckpt::kTier2FormOriginChecksums}) {
    const bool there = src.has_link(name);
    const bool want = scheme && scheme->origins;
    if (want && !there) {
      return where + ": dataset " + name +
             " is missing, but the key scheme says confirm-origins (every run of such a state "
             "holds its keys' origins)";
    }
    if (!want && there) {
      return where + ": holds dataset " + name +
             ", but the key scheme has no confirm-origins item (origins without their mark)";
    }
  }
  for (const char* name : {ckpt::kTier2Forms, ckpt::kTier2FormChecksums}) {
    const bool there = src.has_link(name);
    if (scheme && !there) {
      return where + ": dataset " + name +
             " is missing, but the key scheme says confirm-jaccard (every run of a confirming "
             "state holds its keys' forms)";
    }
    if (!scheme && there) {
      return where + ": holds dataset " + name +
             ", but the key scheme has no confirm-jaccard item (forms without a confirming "
             "scheme)";
    }
  }
  if (!scheme) return {};
  for (const char* name : {ckpt::kTier2FormChecksums, ckpt::kTier2FormOriginChecksums}) {
    if (std::string_view(name) == ckpt::kTier2FormOriginChecksums && !scheme->origins) continue;
    const std::vector<std::uint64_t> dims = src.dims(name);
    if (dims.size() != 1 || dims[0] != p) {
      return where + ": dataset " + name + " is not 1-D of " + std::to_string(p) +
             " values (one per slice)";
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> read_run_forms(const comm::Communicator& comm, const RunFormsSource& src,
                                        const std::optional<FormScheme>& scheme,
                                        core::SliceRange range, bool check_slices,
                                        std::span<const core::SliceBaseView> views,
                                        core::BandConfirmer* into) {
  std::vector<std::string> problems;
  const std::string where = src.path.string();
  const Hdf5FileSource file(src.file, src.dxpl);
  std::optional<store::Tier2Forms> forms, origins;
  // Every rank reads the same metadata, so every rank finds the same
  // problem here; a mapping that fails on one rank is agreed below, so that
  // none reaches the collective read alone.
  try {
    with_file_context(src.path, [&] {
      if (std::string p = presence_problem(file, where, scheme, src.index->slice_keys.size());
          !p.empty()) {
        problems.push_back(std::move(p));
      } else if (scheme) {
        const std::shared_ptr<const store::FileMapping> mapped = FileMapping::map(src.path);
        forms.emplace(file, mapped, *src.index, scheme->form_bytes);
        if (scheme->origins) {
          origins.emplace(file, mapped, *src.index, store::kFormOriginRecordBytes,
                          store::kFormOriginsData);
        }
      }
      return 0;
    });
  } catch (const std::exception& e) {
    problems.push_back(where + ": " + e.what());
  }
  if (!scheme || (!check_slices && into == nullptr)) return problems;
  if (comm.any(!problems.empty())) return problems;
  std::vector<std::uint64_t> sums(range.size()), origin_sums(range.size());
  try {
    with_file_context(src.path, [&] {
      const Hid d = open_dataset(src.file, ckpt::kTier2FormChecksums);
      read_1d_collective(comm, d.get(), src.dxpl, H5T_NATIVE_UINT64, range.first, sums.data(),
                         sums.size(), 8);
      if (scheme->origins) {
        const Hid o = open_dataset(src.file, ckpt::kTier2FormOriginChecksums);
        read_1d_collective(comm, o.get(), src.dxpl, H5T_NATIVE_UINT64, range.first,
                           origin_sums.data(), origin_sums.size(), 8);
      }
      return 0;
    });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
    return problems;
  }
  for (std::uint32_t s = range.first; s < range.last; ++s) {
    if ((s - range.first) % 256 == 0) comm::heartbeat();
    if (std::string p = forms->check(s, sums[s - range.first], where); !p.empty()) {
      problems.push_back(std::move(p));
      continue;
    }
    if (origins) {
      if (std::string p = origins->check(s, origin_sums[s - range.first], where); !p.empty()) {
        problems.push_back(std::move(p));
        continue;
      }
    }
    if (into == nullptr) continue;
    try {
      if (origins) {
        core::adopt_slice_form_stream(*into, views[s - range.first], forms->view(s),
                                      origins->view(s));
        continue;
      }
      core::adopt_slice_form_stream(*into, views[s - range.first], forms->view(s));
    } catch (const std::exception& e) {
      problems.push_back(where + " forms of tier-2 slice " + std::to_string(s) + ": " + e.what());
    }
  }
  return problems;
}

}  // namespace bloomshard::io
