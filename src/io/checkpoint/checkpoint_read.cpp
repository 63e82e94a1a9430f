// Collective reading side of the checkpoint store: load and rebase (tier 2
// mapped, never copied) and verify, for format 2 (a generation file and the
// run files it lists) and format 1 (tier 2 inside the generation file: one
// run). A thin layer over the store: files are opened through MPI-IO, their
// index read by store/file_index.hpp (every rank reads the same small
// metadata; collective metadata reads make that one read plus a broadcast
// inside HDF5), tier 2 viewed and checked by store/tier2_slices.hpp, and
// the ranks agree on every error before the next collective call.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/tier2_slices.hpp"
#include "comm/heartbeat.hpp"
#include "core/window/slot_window.hpp"
#include "io/checkpoint/checkpoint_checksum.hpp"
#include "io/checkpoint/checkpoint_collective.hpp"
#include "io/checkpoint/checkpoint_forms.hpp"
#include "io/checkpoint/checkpoint_input_order.hpp"
#include "io/checkpoint/checkpoint_key_sample.hpp"
#include "io/checkpoint/checkpoint_mapping.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/checkpoint/checkpoint_validate.hpp"
#include "io/hdf5/hdf5_file_source.hpp"
#include "io/hdf5/hdf5_parallel.hpp"

namespace bloomshard::io {

namespace {

using store::FileIndex;
using store::layer_dataset;
using store::Tier2Index;

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
    Hid d = open_dataset(file, layer_dataset(l));
    read_1d_collective(comm, d.get(), dxpl, H5T_NATIVE_UINT64, range.first * per_slice, words,
                       n * per_slice, 8);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t got =
          bloom_slice_checksum({words + i * per_slice, static_cast<std::size_t>(per_slice)});
      const std::uint64_t stored = sums[l * n + i];
      if (got != stored) {
        problems.push_back(layer_dataset(l) + " slice " + std::to_string(range.first + i) +
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
      out.index = store::read_generation_index(Hdf5FileSource(out.file.get(), out.dxpl.get()),
                                               path.string());
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
  Hid file;  // unset for a format-1 generation: `hid` is the generation's
  Hid dxpl;
  Tier2Index index;
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
      out.index = store::read_run_index(Hdf5FileSource(out.file.get(), out.dxpl.get()),
                                        out.path.string(), h, ref);
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
      const store::Tier2Slices map(Hdf5FileSource(t.hid, t.dxpl.get()), FileMapping::map(t.path),
                                   t.index);
      views.assign(range.size(), core::SliceBaseView{});
      for (std::uint32_t s = range.first; s < range.last; ++s) {
        if ((s - range.first) % 256 == 0) comm::heartbeat();
        std::string p = map.check(s, sums[s - range.first], full, t.path.string());
        if (!p.empty()) {
          problems.push_back(std::move(p));
          continue;
        }
        views[s - range.first] = map.view(s);
      }
      // Unverified (a rebase on a run just written, O_DIRECT: not cached):
      // read it in now, before lookups fault it in page by page.
      if (!full) map.advise_willneed(range);
      map.mapping()->advise_random();
      keep = map.mapping();
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

}  // namespace

namespace {

// The set a generation is loaded into, before any bit or key is read: its
// Bloom layers made as the file lists them (geometry checked against this
// build first), their insert counts this rank's share. Throws
// CheckpointError.
std::unique_ptr<core::TwoTierSet> empty_set_for(const FileIndex& idx, core::SliceRange owned) {
  const CheckpointHeader& h = idx.summary.header;
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
  const std::uint32_t window = h.window.empty() ? 0 : core::parse_window_attribute(h.window).window;
  auto set = std::make_unique<core::TwoTierSet>(h.params, owned);
  core::ScalableBloom& bloom = set->bloom();
  bloom.set_auto_grow(false);
  if (window != 0) {
    bloom.start_window(window, h.window_slot, layer_slots);
  } else {
    while (bloom.num_layers() < idx.summary.layers.size()) bloom.add_layer();
  }
  for (std::size_t l = 0; l < idx.summary.layers.size(); ++l) {
    bloom.set_layer_inserted(l,
                             share_of(idx.summary.layers[l].inserted, owned, h.params.num_slices));
  }
  return set;
}

// Collective: attaches tier 2 of the generation `file` (its own, format 1,
// open as `f`; else every run file it lists) to `set` as mapped views of
// the owned slices, checked (fully with `verify_tier2`), and samples their
// stored keys into `samples`. Closes `f`. Every rank throws the same
// CollectiveCheckpointError on a failure.
void attach_tier2(const comm::Communicator& comm, const std::filesystem::path& file, Hid& f,
                  const FileIndex& idx, core::SliceRange owned, bool verify_tier2,
                  const std::optional<FormScheme>& forms, core::BandConfirmer* confirmer,
                  core::TwoTierSet& set, std::vector<SampledKey>& samples,
                  const std::string& context) {
  const CheckpointHeader& h = idx.summary.header;
  std::vector<std::string> problems;
  // The forms of a run's owned slices, checked (with verify_tier2 or when
  // loaded) and handed to `confirmer` in the views' key order.
  const auto attach_forms = [&](const Tier2File& t, std::span<const core::SliceBaseView> views) {
    const RunFormsSource src{t.path, t.hid, t.dxpl.get(), &t.index};
    const std::vector<std::string> q =
        read_run_forms(comm, src, forms, owned, verify_tier2, views, confirmer);
    agree_once_or_throw(comm, join(summarized(q, owned.size())), context);
  };
  if (h.format_version == 1) {  // the generation's own tier 2 is the one run
    Tier2File t;
    t.path = file;
    t.index = idx.tier2;
    t.hid = f.get();
    t.dxpl = collective_dxpl();
    std::vector<core::SliceBaseView> views;
    std::shared_ptr<const void> keep;
    problems = map_tier2(comm, t, owned, verify_tier2, views, keep);
    agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);
    attach_forms(t, views);
    sample_first_keys(views, owned.first, file.filename().string(), samples);
    set.exact().replace_newest_runs(0, {0, core::kLegacyRunLevel}, std::move(views),
                                    std::move(keep));
  }
  agree_once_or_throw(comm, close_file(f), context);
  if (h.format_version == 1) return;
  const std::filesystem::path state_dir = file.parent_path();
  for (const CheckpointRunRef& ref : idx.summary.runs) {
    comm::heartbeat();
    Tier2File t;
    agree_once_or_throw(comm, open_run(comm, state_dir, h, ref, t), context);
    std::vector<core::SliceBaseView> views;
    std::shared_ptr<const void> keep;
    problems = map_tier2(comm, t, owned, verify_tier2, views, keep);
    agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);
    attach_forms(t, views);
    sample_first_keys(views, owned.first, t.path.filename().string(), samples);
    set.exact().replace_newest_runs(0, {ref.id, ref.level, ref.slot}, std::move(views),
                                    std::move(keep));
    agree_once_or_throw(comm, close_file(t.file), context);
  }
}

}  // namespace

LoadedCheckpoint load_checkpoint(const comm::Communicator& comm, const std::filesystem::path& file,
                                 core::SliceRange owned, bool verify_tier2, bool load_forms) {
  const std::string context = "cannot load checkpoint " + file.string();
  quiet_hdf5_errors();
  IndexedFile opened;
  std::string err = open_indexed(comm, file, opened);
  FileIndex& idx = opened.index;
  agree_once_or_throw(comm, err, context);

  const CheckpointHeader& h = idx.summary.header;
  LoadedCheckpoint out;
  std::optional<FormScheme> forms;
  try {
    out.set = empty_set_for(idx, owned);
    forms = form_scheme_of(h);
    if (forms && load_forms) out.forms = make_form_confirmer(*forms);
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree_once_or_throw(comm, err, context);

  std::vector<std::string> problems;
  try {
    with_file_context(file, [&] {
      core::ScalableBloom& bloom = out.set->bloom();
      problems = read_and_check_bloom(
          comm, opened.file.get(), opened.dxpl.get(), idx, owned, [&](std::size_t l) {
            return owned.size() == 0 ? nullptr : bloom.slice_words(l, owned.first).data();
          });
      return 0;
    });
  } catch (const std::exception& e) {
    problems.emplace_back(e.what());
  }
  agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);
  // The input order's kept copies of the owned slices (input-order/v2).
  // And its retractions waiting for the end pass (input-order/v3).
  const char* mark = h.input_order_retracted_rows ? "input-order/v3" : "input-order/v2";
  problems = read_input_order_rows(comm, opened.file.get(), opened.dxpl.get(), file,
                                   h.params.num_slices, h.input_order_rows, owned,
                                   &out.input_order_rows, nullptr, store::kKeptTable, mark);
  agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);
  problems =
      read_input_order_rows(comm, opened.file.get(), opened.dxpl.get(), file, h.params.num_slices,
                            h.input_order_retracted_rows, owned, &out.input_order_retracted,
                            nullptr, store::kRetractedTable, "input-order/v3");
  agree_once_or_throw(comm, join(summarized(problems, owned.size())), context);

  // Stored keys of this rank's slices, checked against the header once
  // tier 1 and every run are in (key_sample_problem).
  std::vector<SampledKey> samples;
  attach_tier2(comm, file, opened.file, idx, owned, verify_tier2, forms, out.forms.get(), *out.set,
               samples, context);
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
  // The same on every rank (the header is), so all read forms or none.
  std::optional<FormScheme> forms;
  try {
    forms = form_scheme_of(h);
  } catch (const std::exception& e) {
    if (comm.rank() == 0) problems.push_back(file.string() + ": " + e.what());
  }
  if (forms) {
    report.forms = idx.summary.tier2_keys;
    report.form_bytes = forms->form_bytes;
    if (forms->origins) report.origins = idx.summary.tier2_keys;
  }
  const auto check_forms = [&](const Tier2File& t) {
    const RunFormsSource src{t.path, t.hid, t.dxpl.get(), &t.index};
    for (std::string& q : read_run_forms(comm, src, forms, share, true, views, nullptr)) {
      problems.push_back(std::move(q));
    }
  };
  if (h.format_version == 1) {
    Tier2File t;
    t.path = file;
    t.index = idx.tier2;
    t.hid = f.get();
    t.dxpl = collective_dxpl();
    for (std::string& q : map_tier2(comm, t, share, true, views, keep)) problems.push_back(q);
    check_forms(t);
  }
  {
    std::uint64_t rows = 0;
    const char* mark = h.input_order_retracted_rows ? "input-order/v3" : "input-order/v2";
    for (std::string& q :
         read_input_order_rows(comm, f.get(), dxpl.get(), file, p, h.input_order_rows, share,
                               nullptr, &rows, store::kKeptTable, mark)) {
      problems.push_back(std::move(q));
    }
    report.input_order_rows = rows;
    for (std::string& q :
         read_input_order_rows(comm, f.get(), dxpl.get(), file, p, h.input_order_retracted_rows,
                               share, nullptr, &rows, store::kRetractedTable, "input-order/v3")) {
      problems.push_back(std::move(q));
    }
    report.input_order_retracted_rows = rows;
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
      check_forms(t);
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
  // A problem every rank finds in the shared metadata is listed once.
  for (std::string& q : allgather_strings(comm, problems)) {
    if (std::find(report.problems.begin(), report.problems.end(), q) == report.problems.end()) {
      report.problems.push_back(std::move(q));
    }
  }
  report.ok = report.problems.empty();
  return report;
}

}  // namespace bloomshard::io
