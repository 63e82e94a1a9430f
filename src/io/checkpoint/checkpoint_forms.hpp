// The confirmation forms of a `--confirm-jaccard` state beside tier 2 in
// every run file (docs/checkpoint-format.md "Confirmation forms"): which
// states carry them (the key scheme item confirm-jaccard=T/b4, and only
// those), and the reading side: each owned slice's form stream checked
// against /tier2/form_checksums and handed to a core::BandConfirmer. The
// writing side is part of write_checkpoint (checkpoint_write.cpp,
// checkpoint_data.cpp). Internal to the checkpoint store.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/header.hpp"
#include "comm/communicator.hpp"
#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::io {

/// What a confirming state's forms are, from its key scheme.
struct FormScheme {
  double threshold = 0;      ///< T of confirm-jaccard=T/b4
  std::uint32_t values = 0;  ///< K = bands x rows values a form packs
  std::uint32_t bits = 0;    ///< bits per value (4)
  std::size_t form_bytes = 0;
  /// The item confirm-origins=v1: every run also holds each key's origin
  /// (/tier2/form_origins, /tier2/form_origin_checksums).
  bool origins = false;
};

/// The forms a state with header `h` carries: nullopt when its key scheme
/// has no confirm-jaccard item (then its run files hold none). Throws
/// CheckpointError when the key scheme cannot be read.
[[nodiscard]] std::optional<FormScheme> form_scheme_of(const store::CheckpointHeader& h);

/// An empty confirmer for the forms of `scheme` (keeping positions, to
/// hold the origins, when the scheme has them).
[[nodiscard]] std::unique_ptr<core::BandConfirmer> make_form_confirmer(const FormScheme& scheme);

/// "" or why `forms` cannot serve a state of `scheme` (none given for a
/// confirming state, given for one that is not, another form size, no
/// positions kept for a scheme with origins).
[[nodiscard]] std::string form_source_problem(const std::optional<FormScheme>& scheme,
                                              const core::BandConfirmer* forms);

/// One run file's tier 2, open for reading (checkpoint_read.cpp).
struct RunFormsSource {
  std::filesystem::path path;
  hid_t file = H5I_INVALID_HID;
  hid_t dxpl = H5I_INVALID_HID;
  const store::Tier2Index* index = nullptr;
};

/// Collective: the forms of the run `src` for the slices `range` of a
/// state of `scheme` (nullopt: a state without confirmation). Checks that
/// /tier2/forms and /tier2/form_checksums are there exactly when the
/// scheme confirms, /tier2/form_origins and /tier2/form_origin_checksums
/// exactly when it has origins, each of the run's size; with
/// `check_slices` (or `into`) every slice of `range` against its
/// checksums; with `into`, hands slice s's forms (and origins) to it in
/// `views[s - range.first]`'s key order. Returns the local problems, each
/// naming the file, the slice and the dataset (the caller agrees on them).
[[nodiscard]] std::vector<std::string> read_run_forms(const comm::Communicator& comm,
                                                      const RunFormsSource& src,
                                                      const std::optional<FormScheme>& scheme,
                                                      core::SliceRange range, bool check_slices,
                                                      std::span<const core::SliceBaseView> views,
                                                      core::BandConfirmer* into);

}  // namespace bloomshard::io
