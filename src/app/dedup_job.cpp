#include "bloomshard/app/dedup_job.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "bloomshard/app/checkpointer.hpp"
#include "bloomshard/app/dedup_options.hpp"
#include "bloomshard/app/exit_codes.hpp"
#include "bloomshard/app/input_feed.hpp"
#include "bloomshard/app/input_manifest.hpp"
#include "bloomshard/app/job_metrics.hpp"
#include "bloomshard/app/output_guard.hpp"
#include "bloomshard/app/progress.hpp"
#include "bloomshard/app/resource_usage.hpp"
#include "bloomshard/app/round_batch.hpp"
#include "bloomshard/app/run_manifest.hpp"
#include "bloomshard/app/run_state.hpp"
#include "bloomshard/app/skipped_inputs.hpp"
#include "bloomshard/app/stop_signal.hpp"
#include "bloomshard/comm/environment.hpp"
#include "bloomshard/comm/router.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "bloomshard/io/checkpoint_store.hpp"
#include "bloomshard/io/errors.hpp"
#include "bloomshard/io/file_assignment.hpp"
#include "bloomshard/io/input_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Without --capacity the first layer is sized from the input bytes,
// assuming 64 bytes per record on disk (x4 for compressed files): generous
// for documents, about right for URL lists. Scalable layers absorb an
// underestimate at the cost of one more probe per layer.
std::uint64_t estimate_capacity(std::span<const io::InputFile> files) {
  std::uint64_t records = 0;
  for (const auto& f : files) {
    const std::uint64_t bytes = f.compression == io::Compression::kNone ? f.size : 4 * f.size;
    records += bytes / 64 + 1;
  }
  return std::max<std::uint64_t>(records, 100'000);
}

// Rank 0 finds the inputs, decides how the run starts and prepares the
// output dir; every rank gets the result. First byte: exit code (0 = go),
// then the plan and the input list, or the error text.
std::string setup_on_rank0(const DedupConfig& c) {
  const auto fail = [](int code, const std::string& why) {
    return std::string(1, static_cast<char>(code)) + why;
  };
  std::vector<fs::path> args(c.inputs.begin(), c.inputs.end());
  std::vector<io::InputFile> files;
  try {
    files = io::discover_inputs(args);
  } catch (const std::exception& e) {
    return fail(kExitUsage, e.what());
  }
  if (files.empty()) return fail(kExitUsage, "no input files found");
  const StartDecision d = decide_start(c, args, files);
  if (!d.error.empty()) return fail(d.exit_code, d.error);
  const std::string plan = encode_plan(d.plan);
  return std::string(1, '\0') + std::to_string(plan.size()) + '\n' + plan + encode_inputs(files);
}

// What the filter and the progress of a run start from.
struct Start {
  std::unique_ptr<core::TwoTierSet> set;
  RunManifest manifest;            // inputs with their starting progress; earlier rejects, counters
  std::uint64_t resumed_from = 0;  // generation loaded (0: none)
};

class DedupJob {
 public:
  DedupJob(const comm::Communicator& world, DedupConfig config)
      : world_(world), config_(std::move(config)) {}

  int run() {
    const Clock::time_point start = Clock::now();
    const std::string setup = world_.broadcast(world_.rank() == 0 ? setup_on_rank0(config_) : "");
    if (setup[0] != '\0') {
      if (world_.rank() == 0) std::cerr << "bloomshard dedup: " << setup.substr(1) << '\n';
      return setup[0];
    }
    const std::size_t nl = setup.find('\n');
    const std::size_t plan_size = std::stoull(setup.substr(1, nl - 1));
    const StartPlan plan = decode_plan(std::string_view(setup).substr(nl + 1, plan_size));
    const std::vector<io::InputFile> files =
        decode_inputs(std::string_view(setup).substr(nl + 1 + plan_size));
    if (plan.normalize != config_.normalize && world_.rank() == 0) {
      std::cerr << "bloomshard dedup: the state was saved with "
                << core::policy_label(plan.normalize) << " rules; keeping them\n";
    }
    config_.normalize = plan.normalize;
    if (plan.kind == StartKind::kFinished) {
      if (world_.rank() == 0) {
        std::cout << "bloomshard dedup: the run in '" << config_.state_dir
                  << "' already finished for these inputs; nothing to do\n";
      }
      return kExitOk;
    }
    const std::uint32_t slices = plan.num_slices != 0 ? plan.num_slices : config_.slices;
    if (slices < world_.usize()) {
      if (world_.rank() == 0) {
        std::cerr << "bloomshard dedup: " << slices << " slices for " << world_.size()
                  << " ranks; every rank must own a slice (use fewer ranks or more --slices)\n";
      }
      return kExitUsage;
    }
    const core::SliceRange owned = core::slices_of_rank(world_.urank(), world_.usize(), slices);

    std::optional<Start> begun = begin(plan, files, owned, slices);
    if (!begun) return kExitFailure;
    core::TwoTierSet& set = *begun->set;
    set.bloom().set_auto_grow(false);  // layers open collectively, below
    if (plan.kind == StartKind::kResume) prepare_resumed_outputs(begun->manifest);

    std::uint64_t total_bytes = 0;
    std::vector<FileTask> mine = my_tasks(begun->manifest, total_bytes);
    const bool checkpointing = !config_.state_dir.empty();
    InputFeed feed(config_, std::move(mine),
                   fs::path(config_.output_dir) / kRejectsDirName /
                       reject_file_name(world_.rank(), begun->resumed_from),
                   checkpointing);
    std::optional<Checkpointer> checkpointer;
    if (checkpointing) {
      checkpointer.emplace(world_, config_, begun->manifest, begun->resumed_from,
                           begun->resumed_from + 1);
    }
    comm::KeyRouter router(world_, slices);
    ProgressReporter progress(world_.rank() == 0 ? config_.progress_seconds : 0, std::cerr);

    RoundBatch batch;
    comm::RoutedBatch routed;
    std::vector<core::Verdict> owner_verdicts;
    std::vector<core::Verdict> my_verdicts;
    PhaseSeconds phases;
    std::uint64_t rounds = 0;
    std::uint64_t rounds_since_checkpoint = 0;
    std::uint64_t peak_rss_anon = 0;
    Clock::time_point last_checkpoint = Clock::now();
    std::string input_error;
    std::uint64_t skipped_inputs = skipped_in_manifest(begun->manifest).size();
    bool failed_anywhere = false;
    bool stopped = false;

    for (;;) {
      Clock::time_point t = Clock::now();
      if (!feed.exhausted()) {
        try {
          feed.fill(batch);
        } catch (const io::InputError& e) {
          input_error = e.what();
          feed.abandon();
        }
      } else {
        batch.clear();
      }
      const std::span<const core::KeyRef> keys = batch.keys();
      phases.read += seconds_since(t);

      t = Clock::now();
      router.exchange(keys, routed);
      phases.route += seconds_since(t);

      t = Clock::now();
      owner_verdicts.resize(routed.size());
      set.decide_batch(routed.keys(), owner_verdicts);
      phases.decide += seconds_since(t);

      t = Clock::now();
      my_verdicts.resize(keys.size());
      router.return_verdicts(routed, owner_verdicts, my_verdicts);
      phases.route += seconds_since(t);

      t = Clock::now();
      feed.write_kept(batch, my_verdicts);
      phases.write += seconds_since(t);
      ++rounds;
      ++rounds_since_checkpoint;
      // Anonymous memory (heap), sampled at the round's peak: mapped
      // checkpoint pages are page cache, not counted.
      peak_rss_anon = std::max(peak_rss_anon, rss_anon_bytes());

      // One reduction per round: termination, errors, signals, checkpoint
      // triggers, layer growth, progress. Rank 0's clock decides timed
      // checkpoints so that all ranks agree.
      t = Clock::now();
      const FeedCounters& c = feed.counters();
      const bool time_due = world_.rank() == 0 && config_.checkpoint_every > 0 &&
                            seconds_since(last_checkpoint) >= config_.checkpoint_every;
      const std::vector<std::uint64_t> g = world_.allreduce_sum(std::vector<std::uint64_t>{
          feed.exhausted() ? 0U : 1U, input_error.empty() ? 0U : 1U,
          set.bloom().newest_layer_inserted(), c.records, c.dropped, c.rejected, c.input_bytes_done,
          stop_requested() ? 1U : 0U, set.exact().delta_bytes() > config_.max_delta_bytes ? 1U : 0U,
          time_due ? 1U : 0U, feed.skip_pending() ? 1U : 0U});
      phases.route += seconds_since(t);
      if (set.bloom().layer_full(g[2])) set.bloom().add_layer();
      progress.maybe_report({g[3], g[4], g[5], g[6], total_bytes});
      if (g[1] != 0) {
        failed_anywhere = true;
        break;
      }
      if (g[10] != 0 && !resolve_broken_inputs(feed, g[10], skipped_inputs)) {
        failed_anywhere = true;
        break;
      }
      const bool finished = g[0] == 0;
      stopped = g[7] != 0 && !finished;
      if (finished) break;
      if (checkpointer && (stopped || g[8] != 0 || g[9] != 0 ||
                           (config_.checkpoint_rounds > 0 &&
                            rounds_since_checkpoint >= config_.checkpoint_rounds))) {
        checkpointer->write(feed, set, router.stats(), rounds, false);
        peak_rss_anon = std::max(peak_rss_anon, rss_anon_bytes());
        rounds_since_checkpoint = 0;
        last_checkpoint = Clock::now();
      }
      if (stopped) break;
    }

    if (failed_anywhere) {
      // A consistent cut still: the broken input stays unfinished at its
      // last good record, so a resume after it is replaced, or with
      // --on-input-error skip, goes on from here.
      if (checkpointer) checkpointer->write(feed, set, router.stats(), rounds, false);
      feed.finish();
      if (!input_error.empty()) {
        std::cerr << "bloomshard dedup: rank " << world_.rank() << ": input error: " << input_error
                  << '\n';
      }
      world_.barrier();  // let the failing rank's message out before the exit
      const bool too_many = skipped_inputs > config_.max_skipped_inputs;
      if (world_.rank() == 0) {
        std::cerr << "bloomshard dedup: "
                  << (too_many ? "more broken inputs than --max-skipped-inputs " +
                                     std::to_string(config_.max_skipped_inputs) +
                                     " (the one over the limit is not skipped); "
                               : std::string())
                  << (checkpointer ? "checkpointed: replace or fix the input and run again"
                                   : "no --state, nothing saved")
                  << (too_many ? "" : ", or run again with --on-input-error skip") << '\n';
      }
      return too_many ? kExitTooManyRejects : kExitFailure;
    }
    if (stopped) {
      feed.finish();
      if (checkpointer) checkpointer->wait_for_pruning();
      if (world_.rank() == 0) {
        std::cerr << "bloomshard dedup: stop signal received; checkpointed generation "
                  << (checkpointer ? "written" : "not written (no --state)") << "; exit "
                  << kExitCheckpointedRequeue << " (please requeue)\n";
      }
      return checkpointer ? kExitCheckpointedRequeue : kExitFailure;
    }
    if (checkpointer) {
      checkpointer->write(feed, set, router.stats(), rounds, true);
      checkpointer->wait_for_pruning();
    }
    feed.finish();

    JobSummary summary = reduce_metrics(world_, begun->manifest.counters, feed, set, router.stats(),
                                        phases, rounds, seconds_since(start));
    summary.input_files = files.size();
    summary.input_bytes = total_bytes;
    summary.checkpoints = checkpointer ? checkpointer->written() : 0;
    summary.max_rss_anon_bytes = world_.allreduce_max(peak_rss_anon);
    summary.skipped_inputs = skipped_in_manifest(begun->manifest);
    for (SkippedInput& s : gather_skipped_inputs(world_, feed.skipped())) {
      summary.skipped_inputs.push_back(std::move(s));
    }
    const double reject_fraction = summary.counters.records
                                       ? static_cast<double>(summary.counters.rejected) /
                                             static_cast<double>(summary.counters.records)
                                       : 0.0;
    if (world_.rank() == 0) {
      if (!config_.metrics_path.empty()) {
        std::ofstream(config_.metrics_path, std::ios::trunc) << metrics_json(summary);
      }
      std::cout << summary_text(summary) << std::flush;
      if (reject_fraction > config_.max_reject_fraction) {
        std::cerr << "bloomshard dedup: " << summary.counters.rejected << " of "
                  << summary.counters.records << " records rejected (" << 100.0 * reject_fraction
                  << "%), more than --max-reject-fraction " << 100.0 * config_.max_reject_fraction
                  << "%; see " << (fs::path(config_.output_dir) / kRejectsDirName).string() << '\n';
      }
    }
    return reject_fraction > config_.max_reject_fraction ? kExitTooManyRejects : kExitOk;
  }

 private:
  // After a round in which `broken` inputs broke under --on-input-error
  // skip: skips them all if the run stays within --max-skipped-inputs
  // (counting earlier segments), else none (false: the job stops).
  bool resolve_broken_inputs(InputFeed& feed, std::uint64_t broken, std::uint64_t& skipped) {
    const bool skip = skipped + broken <= config_.max_skipped_inputs;
    skipped += broken;
    feed.resolve_held_input(skip);
    if (skip && world_.rank() == 0) {
      std::cerr << "bloomshard dedup: warning: " << broken
                << " input(s) broke in this round and were skipped from the damage on (" << skipped
                << " of at most " << config_.max_skipped_inputs << ")\n";
    }
    return skip;
  }

  // Builds the filter: new, or loaded (collectively) from the newest
  // checkpoint generation that verifies, falling back to older ones.
  std::optional<Start> begin(const StartPlan& plan, const std::vector<io::InputFile>& files,
                             core::SliceRange owned, std::uint32_t slices) {
    Start s;
    s.manifest.run_id = plan.run_id;
    s.manifest.output_dir = fs::absolute(config_.output_dir).lexically_normal().string();
    for (const auto& f : files) s.manifest.inputs.push_back({f, {}, false, 0, {}, {}});
    if (plan.kind == StartKind::kFresh) {
      core::ScalableBloomParams params;
      params.initial_capacity = config_.capacity.value_or(estimate_capacity(files));
      params.fpr_target = config_.fpr;
      params.num_slices = slices;
      s.set = std::make_unique<core::TwoTierSet>(params, owned);
      return s;
    }
    for (const std::uint64_t g : plan.candidates) {
      const fs::path path = io::generation_path(config_.state_dir, g);
      try {
        io::LoadedCheckpoint loaded = io::load_checkpoint(world_, path, owned);
        s.set = std::move(loaded.set);
        s.resumed_from = g;
        if (plan.kind == StartKind::kResume) {
          RunManifest m = manifest_from_json(loaded.summary.header.manifest_json);
          // Rank 0 checked every change when it planned the start.
          const RevalidateFn trusted = [](const InputProgress&, const io::InputFile&) {
            return std::string();
          };
          const RevalidateFn* revalidated = config_.revalidate_inputs ? &trusted : nullptr;
          for (const std::string& note : reconcile_inputs(m, files, revalidated).notes) {
            if (world_.rank() == 0) std::cerr << "bloomshard dedup: " << note << '\n';
          }
          s.manifest.inputs = std::move(m.inputs);
          s.manifest.rejects = std::move(m.rejects);
          s.manifest.counters = std::move(m.counters);
          s.manifest.run_id = std::move(m.run_id);
        }
        if (world_.rank() == 0) {
          std::cerr << "bloomshard dedup: "
                    << (plan.kind == StartKind::kResume ? "resuming" : "incremental run on")
                    << " checkpoint generation " << g << " (" << path.string() << ")\n";
        }
        return s;
      } catch (const std::exception& e) {
        if (world_.rank() == 0) {
          std::cerr << "bloomshard dedup: warning: checkpoint generation " << g
                    << " cannot be used: " << e.what() << "; falling back to an older one\n";
        }
      }
    }
    if (world_.rank() == 0) {
      std::cerr << "bloomshard dedup: no checkpoint generation in '" << config_.state_dir
                << "' verifies; the run cannot resume. Inspect it with `bloomshard verify "
                   "--state DIR`, or rebuild by running again with an empty --state\n";
    }
    return std::nullopt;
  }

  // Rank 0, before anyone writes: rejects of a killed attempt that no
  // checkpoint counts go, counted ones are cut to their committed length,
  // and finished outputs to theirs.
  void prepare_resumed_outputs(const RunManifest& m) {
    if (world_.rank() == 0) {
      const fs::path rejects = fs::path(config_.output_dir) / kRejectsDirName;
      fs::create_directories(rejects);
      for (const auto& entry : fs::directory_iterator(rejects)) {
        const std::string name = entry.path().filename().string();
        const auto it = std::find_if(m.rejects.begin(), m.rejects.end(),
                                     [&](const RejectSegment& r) { return r.name == name; });
        if (it == m.rejects.end()) {
          fs::remove(entry.path());
        } else {
          fs::resize_file(entry.path(), it->length);
        }
      }
      for (const InputProgress& p : m.inputs) {
        const fs::path out = io::output_path_for(config_.output_dir, p.file.relative_path);
        if (p.done && fs::exists(out)) fs::resize_file(out, p.output_length);
      }
    }
    world_.barrier();
  }

  // This rank's share of the unfinished inputs, balanced by size.
  std::vector<FileTask> my_tasks(const RunManifest& m, std::uint64_t& total_bytes) const {
    std::vector<std::size_t> open_inputs;
    std::vector<std::uint64_t> weights;
    total_bytes = 0;
    for (std::size_t i = 0; i < m.inputs.size(); ++i) {
      total_bytes += m.inputs[i].file.size;
      if (m.inputs[i].done) continue;
      open_inputs.push_back(i);
      weights.push_back(m.inputs[i].file.size);
    }
    const std::vector<int> owners = io::assign_files_to_ranks(weights, world_.size());
    std::vector<FileTask> tasks;
    for (std::size_t j = 0; j < open_inputs.size(); ++j) {
      if (owners[j] != world_.rank()) continue;
      const InputProgress& p = m.inputs[open_inputs[j]];
      tasks.push_back({p.file, open_inputs[j], p.cursor, p.output_length, p.prefix_digest});
    }
    return tasks;
  }

  comm::Communicator world_;
  DedupConfig config_;
};

}  // namespace

int run_dedup(const std::vector<std::string>& args) {
  install_stop_signal_handlers();  // before MPI starts: no signal is lost
  comm::Environment env;
  comm::Communicator world;
  ParsedDedup parsed = parse_dedup_options(args);
  if (parsed.exit_code) {
    // Every rank parsed the same arguments and agrees; rank 0 speaks.
    if (world.rank() == 0) {
      (*parsed.exit_code == kExitOk ? std::cout : std::cerr)
          << (*parsed.exit_code == kExitOk ? "" : "bloomshard dedup: ") << parsed.message
          << (parsed.message.ends_with('\n') ? "" : "\n");
    }
    return *parsed.exit_code;
  }
  try {
    return DedupJob(world, std::move(parsed.config)).run();
  } catch (const std::exception& e) {
    std::cerr << "bloomshard dedup: rank " << world.rank() << " of " << world.size()
              << ": error: " << e.what() << '\n'
              << std::flush;
    comm::abort_job(kExitFailure);
  }
}

}  // namespace bloomshard::app
