#include "app/state/merge_job.hpp"

#include <xxhash.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "app/cli/exit_codes.hpp"
#include "app/cli/mpi_command.hpp"
#include "app/cli/version.hpp"
#include "app/guard/path_preflight.hpp"
#include "app/options/checkpoint_options.hpp"
#include "app/options/exact_options.hpp"
#include "app/run/run_manifest.hpp"
#include "app/run/run_state.hpp"
#include "app/state/state_key_scheme.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/durable/durable_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

struct MergeConfig {
  std::vector<std::string> from;
  std::string into;
  io::CheckpointDataPath data_path = io::CheckpointDataPath::kAuto;
};

// Keys one rank decides per step at most: bounds the step's key buffer
// (about 40 MB with 64 KiB keys... 2 MB with URL-sized ones).
constexpr std::size_t kMaxStepKeys = 1U << 16;

// --from A --from B ... --into C [--checkpoint-io PATH].
ParsedOptions<MergeConfig> parse(const std::vector<std::string>& args) {
  ParsedOptions<MergeConfig> out;
  MergeConfig& c = out.config;
  std::string data_path = "auto";
  po::options_description desc("merge options");
  // clang-format off
  desc.add_options()
    ("help,h", "show this help")
    ("from", po::value(&c.from)->composing()->required(),
     "a finished --state dir to merge (read only); repeat, at least twice")
    ("into", po::value(&c.into)->required(), "the new state dir (must not exist)");
  // clang-format on
  add_checkpoint_io_option(desc, data_path, OptionsFor::kMerge);
  try {
    po::variables_map vm;
    po::store(parse_exact_command_line(args, desc), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "usage: bloomshard merge --from STATE --from STATE [--from ...] --into NEW\n\n"
           << desc;
      return stop_with<MergeConfig>(kExitOk, text.str());
    }
    po::notify(vm);
    c.data_path = parse_checkpoint_io(data_path);
  } catch (const std::exception& e) {
    return stop_with<MergeConfig>(kExitUsage, std::string("bad option: ") + e.what());
  }
  if (c.from.size() < 2)
    return stop_with<MergeConfig>(kExitUsage, "give at least two --from states");
  return out;
}

// A state's --confirm-jaccard as the refusal names it: "off" or T.
std::string confirm_label(double t) {
  if (t == 0.0) return "off";
  std::ostringstream text;
  text << t;
  return text.str();
}

// The temporary sibling of --into the merge is written in ("history/"
// names the same dir as "history": its staging dir is ".history.merge-tmp").
fs::path staging_dir(const fs::path& into) {
  fs::path abs = fs::absolute(into).lexically_normal();
  if (!abs.has_filename()) abs = abs.parent_path();
  return abs.parent_path() / ("." + abs.filename().string() + ".merge-tmp");
}

// What rank 0 decided: the generation of each source and the slice count.
struct MergeSetup {
  std::vector<std::uint64_t> generations;
  std::uint32_t num_slices = 0;
};

// Rank 0: reads every source's newest header, refuses what cannot be
// merged (naming the state and what differs) and prepares an empty staging
// dir. First byte: exit code; then "slices g1 g2 ..." or the error.
std::string merge_setup_on_rank0(const MergeConfig& c) {
  const auto fail = [](int code, const std::string& why) {
    return std::string(1, static_cast<char>(code)) + why;
  };
  try {
    if (fs::exists(c.into)) {
      return fail(kExitUsage, "--into '" + c.into + "' exists; merge writes a new state");
    }
    const WritePath into[] = {{"--into", c.into, WritePath::Kind::kDirectory}};
    if (std::string why = check_write_paths(into); !why.empty()) return fail(kExitUsage, why);
    std::optional<StateScheme> first;
    std::uint32_t slices = 0;
    std::string line;
    for (const std::string& from : c.from) {
      if (!fs::exists(from)) return fail(kExitUsage, "--from '" + from + "' does not exist");
      if (!fs::is_directory(from)) {
        return fail(kExitUsage, "--from '" + from + "' is not a directory (a dedup --state dir)");
      }
      const std::vector<std::uint64_t> candidates = io::resume_candidates(from);
      if (candidates.empty()) {
        return fail(kExitUsage, "--from '" + from + "' holds no checkpoint (not a --state dir?)");
      }
      const io::CheckpointSummary s =
          io::read_checkpoint_summary(io::generation_path(from, candidates.front()));
      if (!s.header.finished) {
        return fail(kExitUsage, "'" + from +
                                    "' holds an unfinished run; finish it (run dedup again "
                                    "with its inputs) before merging");
      }
      if (!s.header.window.empty()) {  // slots of two histories do not line up
        return fail(kExitUsage, "'" + from + "' is a windowed state (" + s.header.window +
                                    "); merge reads only states without --window");
      }
      const StateScheme scheme = state_scheme_of(s.header);
      if (first && scheme.key.confirm_jaccard != first->key.confirm_jaccard) {
        // Forms of one T cannot answer for another, and keys without forms
        // cannot be confirmed: both states named, each with its T.
        return fail(kExitUsage, "cannot merge '" + from + "' with '" + c.from.front() +
                                    "': --confirm-jaccard differs: '" + c.from.front() + "' has " +
                                    confirm_label(first->key.confirm_jaccard) + ", '" + from +
                                    "' has " + confirm_label(scheme.key.confirm_jaccard));
      }
      if (!first) {
        first = scheme;
        slices = s.header.params.num_slices;
      } else if (std::string diff = state_scheme_difference(*first, scheme); !diff.empty()) {
        return fail(kExitUsage,
                    "cannot merge '" + from + "' with '" + c.from.front() + "': " + diff);
      } else if (s.header.params.num_slices != slices) {
        return fail(kExitUsage,
                    "cannot merge '" + from + "' with '" + c.from.front() +
                        "': slice count differs: " + std::to_string(s.header.params.num_slices) +
                        " vs " + std::to_string(slices));
      }
      line += ' ' + std::to_string(candidates.front());
    }
    // A staging dir is left only by a merge that was killed: never a state.
    const fs::path staging = staging_dir(c.into);
    fs::remove_all(staging);
    fs::create_directories(staging);
    return std::string(1, '\0') + std::to_string(slices) + line;
  } catch (const std::exception& e) {
    return fail(kExitFailure, e.what());
  }
}

MergeSetup decode_merge_setup(std::string_view text) {
  MergeSetup s;
  std::istringstream in{std::string(text.substr(1))};
  in >> s.num_slices;
  std::uint64_t g = 0;
  while (in >> g) s.generations.push_back(g);
  return s;
}

// Walks the tier-2 keys of one loaded state's owned slices, run by run.
class Tier2Keys {
 public:
  Tier2Keys(const core::TwoTierSet& set, std::uint64_t seed) : set_(set), seed_(seed) {
    slice_ = set.owned().first;
  }

  // Appends up to `max` keys (hashed again from their bytes) to `out`.
  // Throws std::runtime_error for a key whose hash is not its stored
  // fingerprint or slice (a damaged or foreign state).
  void next(std::size_t max, std::vector<core::KeyRef>& out) {
    const core::ExactShard& exact = set_.exact();
    const std::uint32_t num_slices = set_.bloom().params().num_slices;
    while (out.size() < max && slice_ < set_.owned().last) {
      if (run_ >= exact.runs().size()) {
        ++slice_;
        run_ = 0;
        index_ = 0;
        continue;
      }
      const core::SliceBaseView view = exact.run_view(run_, slice_);
      if (index_ >= view.size()) {
        ++run_;
        index_ = 0;
        continue;
      }
      const std::string_view bytes = view.key(index_);
      const core::KeyHash h = core::hash_key(bytes, seed_);
      if (core::fingerprint(h) != view.fingerprints[index_] ||
          core::slice_of(h, num_slices) != slice_) {
        throw std::runtime_error("slice " + std::to_string(slice_) + ": tier-2 key #" +
                                 std::to_string(index_) +
                                 " does not hash to its stored fingerprint and slice");
      }
      out.push_back({h, bytes});
      ++index_;
    }
  }

 private:
  const core::TwoTierSet& set_;
  std::uint64_t seed_;
  std::uint32_t slice_ = 0;
  std::size_t run_ = 0;
  std::size_t index_ = 0;
};

class MergeJob {
 public:
  MergeJob(const comm::Communicator& world, MergeConfig config)
      : world_(world), c_(std::move(config)) {}

  int run() {
    const Clock::time_point start = Clock::now();
    const std::string setup = world_.broadcast(world_.rank() == 0 ? merge_setup_on_rank0(c_) : "");
    if (setup[0] != '\0') {
      if (world_.rank() == 0) std::cerr << "bloomshard merge: " << setup.substr(1) << '\n';
      return setup[0];
    }
    const MergeSetup s = decode_merge_setup(setup);
    if (s.num_slices < world_.usize()) {
      if (world_.rank() == 0) {
        std::cerr << "bloomshard merge: the states have " << s.num_slices << " slices for "
                  << world_.size() << " ranks; use at most " << s.num_slices << " ranks\n";
      }
      return kExitUsage;
    }
    const core::SliceRange owned =
        core::slices_of_rank(world_.urank(), world_.usize(), s.num_slices);
    // A confirming state's forms of the owned slices come with each source;
    // the first's confirmer collects the union (see fold_into).
    io::LoadedCheckpoint base = load(0, s.generations[0], owned);
    core::TwoTierSet& set = *base.set;
    set.bloom().set_auto_grow(false);  // layers open collectively, below
    const StateScheme scheme = state_scheme_of(base.summary.header);
    JobCounters counters = manifest_from_json(base.summary.header.manifest_json).counters;
    std::string run_ids = base.summary.header.run_id;
    std::uint64_t source_keys = base.summary.tier2_keys;
    for (std::size_t i = 1; i < c_.from.size(); ++i) {
      io::LoadedCheckpoint other = load(i, s.generations[i], owned);
      counters += manifest_from_json(other.summary.header.manifest_json).counters;
      run_ids += ' ' + other.summary.header.run_id;
      source_keys += other.summary.tier2_keys;
      fold_into(set, *other.set, scheme.hash_seed, base.forms.get(), other.forms.get());
    }
    const std::uint64_t keys = world_.allreduce_sum(set.exact().size());
    // The merged state keeps no form origins: each source numbers its runs
    // from 0, so a (run, position) would not say which state's run it
    // names. It continues in filter mode; annotate mode refuses it.
    StateScheme merged = scheme;
    merged.key.confirm_origins = false;
    write_state(set, merged, counters, run_ids, base.forms.get());
    if (world_.rank() == 0) {
      std::printf(
          "bloomshard merge: %zu states, %llu tier-2 keys in all, %llu distinct -> %s "
          "(%.2f s)\n",
          c_.from.size(), static_cast<unsigned long long>(source_keys),
          static_cast<unsigned long long>(keys), c_.into.c_str(),
          std::chrono::duration<double>(Clock::now() - start).count());
      std::fflush(stdout);
    }
    return kExitOk;
  }

 private:
  // Collective: loads source i, verifying both tiers of the owned slices.
  io::LoadedCheckpoint load(std::size_t i, std::uint64_t g, core::SliceRange owned) {
    try {
      return io::load_checkpoint(world_, io::generation_path(c_.from[i], g), owned, true, true);
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot read '" + c_.from[i] + "': " + one_line(e.what()));
    }
  }

  // Collective: decides every tier-2 key of `other` into `set`, in steps
  // that every rank takes together; before each step the next Bloom layer
  // opens when the step could overfill the newest (like dedup's sub-rounds).
  // Confirming states (`forms` and `other_forms` given): each key's form
  // from `other_forms` is adopted into `forms` unless `forms` has one, so a
  // key both states hold keeps the form of the state given first.
  void fold_into(core::TwoTierSet& set, const core::TwoTierSet& other, std::uint64_t seed,
                 core::BandConfirmer* forms, const core::BandConfirmer* other_forms) {
    Tier2Keys source(other, seed);
    std::vector<core::KeyRef> step;
    std::vector<core::Verdict> verdicts;
    core::ScalableBloom& bloom = set.bloom();
    for (;;) {
      const std::uint64_t capacity =
          core::layer_geometry(bloom.params(), static_cast<std::uint32_t>(bloom.num_layers() - 1))
              .capacity;
      // A step of all ranks stays within half the newest layer's capacity,
      // so it fits into a layer opened just before it.
      const std::size_t max_keys = static_cast<std::size_t>(
          std::clamp<std::uint64_t>(capacity / (2 * world_.usize()), 1, kMaxStepKeys));
      step.clear();
      source.next(max_keys, step);
      const std::vector<std::uint64_t> g = world_.allreduce_sum(
          std::vector<std::uint64_t>{step.size(), bloom.newest_layer_inserted()});
      if (g[0] == 0) return;
      if (g[1] + g[0] > capacity) bloom.add_layer();
      verdicts.resize(step.size());
      set.decide_batch(step, verdicts);
      if (forms != nullptr) adopt_forms(step, *forms, *other_forms);
    }
  }

  // The forms of `keys` (band keys of a confirming state) from `from` into
  // `into`, where `into` has none yet. Throws std::runtime_error for a key
  // without a form in `from` (the loader checked every slice's forms, so
  // only a state whose forms miss keys gets here).
  static void adopt_forms(std::span<const core::KeyRef> keys, core::BandConfirmer& into,
                          const core::BandConfirmer& from) {
    core::BandKey band;
    for (const core::KeyRef& k : keys) {
      if (k.bytes.size() != band.size()) {
        throw std::runtime_error("a tier-2 key of a confirming state is not a band key");
      }
      std::memcpy(band.data(), k.bytes.data(), band.size());
      const std::span<const std::uint8_t> form = from.find_form(band);
      if (form.empty()) throw std::runtime_error("a band key of a confirming state has no form");
      into.adopt_form(band, form);
    }
  }

  // Collective: generation 1 of the new state in the staging dir (all runs
  // folded into one, so it needs no file of the sources), verified, then
  // renamed to --into by rank 0.
  // Confirming states: `forms` holds the form of every key of `set`'s
  // owned slices, written beside them (/tier2/forms).
  void write_state(const core::TwoTierSet& set, const StateScheme& scheme,
                   const JobCounters& counters, const std::string& run_ids,
                   const core::BandConfirmer* forms) {
    io::CheckpointHeader h;
    store_state_scheme(scheme, h);
    h.tool_version = std::string(tool_version());
    h.params = set.bloom().params();
    h.generation = 1;
    char id[17];
    std::snprintf(id, sizeof id, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(run_ids.data(), run_ids.size())));
    h.run_id = id;
    h.finished = true;
    if (world_.rank() == 0) {
      RunManifest m;
      m.run_id = h.run_id;
      m.counters = counters;
      h.manifest_json = manifest_to_json(m);
    }
    std::vector<io::CheckpointLayerInfo> layers;
    for (std::size_t i = 0; i < set.bloom().num_layers(); ++i) {
      const core::BloomLayerStats st = set.bloom().layer_stats(i);
      layers.push_back({st.geometry, world_.allreduce_sum(st.inserted)});
    }
    const fs::path staging = staging_dir(c_.into);
    const fs::path file = io::write_checkpoint(world_, staging, h, layers, set,
                                               {.keep = 1,
                                                .data_path = c_.data_path,
                                                .compaction = {.fanout = 4, .max_runs = 1},
                                                .forms = forms});
    if (world_.rank() == 0) {
      const std::string prune = io::wait_for_background_prune();
      if (!prune.empty()) std::cerr << "bloomshard merge: warning: " << prune << '\n';
    }
    const io::VerifyReport report = io::verify_checkpoint(world_, file);
    if (!report.ok) {
      throw std::runtime_error("the merged state does not verify: " + report.problems.front());
    }
    std::string error;
    if (world_.rank() == 0) {
      try {
        fs::rename(staging, c_.into);
        io::fsync_path(fs::absolute(c_.into).lexically_normal().parent_path());
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    error = world_.broadcast(error);
    if (!error.empty())
      throw std::runtime_error("cannot move the merged state into place: " + error);
  }

  comm::Communicator world_;
  MergeConfig c_;
};

}  // namespace

int run_merge(const std::vector<std::string>& args) {
  return run_mpi_command<MergeConfig>(
      {.name = "merge",
       .parse = parse,
       .run = [](const comm::Communicator& world,
                 MergeConfig config) { return MergeJob(world, std::move(config)).run(); }},
      args);
}

}  // namespace bloomshard::app
