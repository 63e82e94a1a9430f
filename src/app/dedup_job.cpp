#include "bloomshard/app/dedup_job.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>

#include "bloomshard/app/checkpointer.hpp"
#include "bloomshard/app/dedup_options.hpp"
#include "bloomshard/app/dedup_preflight.hpp"
#include "bloomshard/app/exit_codes.hpp"
#include "bloomshard/app/fault_pause.hpp"
#include "bloomshard/app/file_order_rebuild.hpp"
#include "bloomshard/app/input_feed.hpp"
#include "bloomshard/app/input_manifest.hpp"
#include "bloomshard/app/job_abort.hpp"
#include "bloomshard/app/job_metrics.hpp"
#include "bloomshard/app/order_tag_wire.hpp"
#include "bloomshard/app/output_guard.hpp"
#include "bloomshard/app/plan_command.hpp"
#include "bloomshard/app/progress.hpp"
#include "bloomshard/app/range_join.hpp"
#include "bloomshard/app/rank_tasks.hpp"
#include "bloomshard/app/resource_usage.hpp"
#include "bloomshard/app/round_batch.hpp"
#include "bloomshard/app/run_lease.hpp"
#include "bloomshard/app/run_manifest.hpp"
#include "bloomshard/app/run_state.hpp"
#include "bloomshard/app/skipped_inputs.hpp"
#include "bloomshard/app/split_inputs.hpp"
#include "bloomshard/app/state_overrides.hpp"
#include "bloomshard/app/stderr_line.hpp"
#include "bloomshard/app/stop_signal.hpp"
#include "bloomshard/app/watchdog.hpp"
#include "bloomshard/app/window_slots.hpp"
#include "bloomshard/comm/environment.hpp"
#include "bloomshard/comm/heartbeat.hpp"
#include "bloomshard/comm/router.hpp"
#include "bloomshard/core/sizing_plan.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "bloomshard/io/checkpoint_generations.hpp"
#include "bloomshard/io/checkpoint_store.hpp"
#include "bloomshard/io/durable_entries.hpp"
#include "bloomshard/io/errors.hpp"
#include "bloomshard/io/input_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// For error messages: which node a failing rank ran on.
std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("?");
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One stretch of a round: its wall time and the thread's kernel time (page
// faults, system calls) since construction, added to a phase's totals.
class PhaseTimer {
 public:
  PhaseTimer() : wall_(Clock::now()), system_(thread_system_seconds()) {}
  void add_to(double& wall, double& system) const {
    wall += seconds_since(wall_);
    system += thread_system_seconds() - system_;
  }

 private:
  Clock::time_point wall_;
  double system_;
};

// Without --capacity the first layer is sized from the input bytes,
// assuming 64 bytes per record on disk (x4 for compressed files): generous
// for documents, about right for URL lists. Scalable layers absorb an
// underestimate at the cost of one more probe per layer.
// BLOOMSHARD_RANKS_PER_NODE=k makes the node-aware exchange treat groups of
// k consecutive ranks as nodes: several "nodes" on one machine, for tests
// and benchmarks. Unset (the normal case): the real MPI_COMM_TYPE_SHARED split.
int ranks_per_node_override() {
  const char* value = std::getenv("BLOOMSHARD_RANKS_PER_NODE");
  return value != nullptr ? std::max(0, std::atoi(value)) : 0;
}

std::uint64_t estimate_capacity(std::span<const io::InputFile> files) {
  std::uint64_t records = 0;
  for (const auto& f : files) {
    const std::uint64_t bytes = f.compression == io::Compression::kNone ? f.size : 4 * f.size;
    records += bytes / 64 + 1;
  }
  return std::max<std::uint64_t>(records, 100'000);
}

// Keys an owner's FileOrder is sized for up front: its share of the later
// ranges of open split inputs at 128 bytes a record (a guess between short
// URL lines and long documents; growth is only slower, never wrong), at
// most 1M keys (a 48 MiB table).
std::size_t file_order_reserve(const RunManifest& m, std::uint32_t ranks) {
  std::uint64_t bytes = 0;
  for (const InputProgress& p : m.inputs) {
    if (p.done) continue;
    for (std::size_t k = 1; k < p.ranges.size(); ++k) bytes += p.ranges[k].end - p.ranges[k].begin;
  }
  return static_cast<std::size_t>(std::min<std::uint64_t>(bytes / 128 / ranks, 1U << 20));
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
  if (!c.state_dir.empty()) {
    // Under the run's lock no attempt writes: what a killed one left half
    // written goes now, before this start decides or writes anything.
    try {
      (void)io::remove_stale_temporaries(c.state_dir);
    } catch (const std::exception& e) {
      return fail(kExitFailure, e.what());
    }
  }
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
  std::uint64_t window_progress = 0;  // records/seconds of the loaded state's current slot
};

class DedupJob {
 public:
  DedupJob(const comm::Communicator& world, DedupConfig config, Watchdog& watchdog)
      : world_(world), config_(std::move(config)), watchdog_(watchdog) {}
  DedupJob(const DedupJob&) = delete;
  DedupJob& operator=(const DedupJob&) = delete;
  // The watchdog thread must stop calling into this object first.
  ~DedupJob() { watchdog_.set_periodic(nullptr, 0); }

  // Collective. Every orderly end (done, stopped, refused) removes the
  // run's lock file; an exception aborts the job and leaves it, like a kill.
  int run() {
    const Clock::time_point start = Clock::now();
    if (config_.batch_bytes == 0) config_.batch_bytes = core::default_batch_bytes(world_.usize());
    // --- paths: every one the job writes, checked before anything exists.
    if (const int refused = refuse_unwritable_paths(); refused != kExitOk) return refused;
    // --- fencing: this attempt holds the run before anything is touched.
    set_activity("taking the run's lock");
    if (!take_run_lease()) return kExitRunLocked;
    const int code = run_holding_lease(start);
    release_run_lease();
    return code;
  }

 private:
  int run_holding_lease(Clock::time_point start) {
    // Setup is rank 0's file work (input walk, checkpoint header): the
    // others wait in the broadcast without beating.
    set_activity("setting up the run");
    watchdog_.allow_quiet(4 * config_.stall_timeout);
    const std::string setup = world_.broadcast(world_.rank() == 0 ? setup_on_rank0(config_) : "");
    watchdog_.allow_quiet(0);  // the quiet period ends with the setup
    comm::heartbeat();
    if (setup[0] != '\0') {
      if (world_.rank() == 0) std::cerr << "bloomshard dedup: " << setup.substr(1) << '\n';
      return setup[0];
    }
    const std::size_t nl = setup.find('\n');
    const std::size_t plan_size = std::stoull(setup.substr(1, nl - 1));
    const StartPlan plan = decode_plan(std::string_view(setup).substr(nl + 1, plan_size));
    const std::vector<io::InputFile> files =
        decode_inputs(std::string_view(setup).substr(nl + 1 + plan_size));
    if (plan.normalize != config_.key.normalize && world_.rank() == 0) {
      std::cerr << "bloomshard dedup: the state was saved with "
                << core::policy_label(plan.normalize) << " rules; keeping them\n";
    }
    config_.key.normalize = plan.normalize;
    if (plan.kind == StartKind::kFinished) {
      if (world_.rank() == 0) {
        // A kill after the finishing generation and before the parts of
        // split inputs were deleted left them: every input is joined now.
        std::error_code ignored;
        fs::remove_all(fs::path(config_.output_dir) / kRangesDirName, ignored);
        std::cout << "bloomshard dedup: the run in '" << config_.state_dir
                  << "' already finished for these inputs; nothing to do\n";
        write_metrics_of_finished_run();
      }
      return kExitOk;
    }
    // A state keeps its slice count; a new filter takes --slices or the
    // default for this rank count and capacity.
    const std::uint32_t slices =
        plan.num_slices != 0  ? plan.num_slices
        : config_.slices != 0 ? config_.slices
                              : core::default_num_slices(world_.usize(), initial_capacity(files));
    if (slices < world_.usize()) {
      if (world_.rank() == 0) {
        std::cerr << "bloomshard dedup: " << slices << " slices for " << world_.size()
                  << " ranks; every rank must own a slice (use fewer ranks or more --slices)\n";
      }
      return kExitUsage;
    }
    const core::SliceRange owned = core::slices_of_rank(world_.urank(), world_.usize(), slices);
    if (world_.rank() == 0 && plan.kind != StartKind::kResume) {
      std::cerr << "bloomshard dedup: "
                << dedup_plan_line(config_, files, initial_capacity(files), world_.usize(), slices)
                << '\n';
    }

    set_activity("loading the checkpoint");
    comm::heartbeat();
    std::optional<Start> begun = begin(plan, files, owned, slices);
    if (!begun) return kExitFailure;
    core::TwoTierSet& set = *begun->set;
    set.bloom().set_auto_grow(false);  // layers open collectively, below
    if (world_.rank() == 0 && plan.kind != StartKind::kFresh) {
      for (const std::string& note : state_override_notes(config_, set.bloom().params())) {
        write_stderr_line("bloomshard dedup: " + note);
      }
    }
    // --- windows: slot 0 of a fresh state, or the next slot (issue 13).
    SlotClock slot_clock(config_.window, begun->window_progress);
    slot_clock.start(set, plan.kind == StartKind::kFresh, plan.kind == StartKind::kIncremental);
    if (plan.kind == StartKind::kResume) prepare_resumed_outputs(begun->manifest);

    std::uint64_t total_bytes = 0;
    std::vector<FileTask> mine =
        tasks_of_rank(begun->manifest, world_.rank(), world_.size(), total_bytes);
    const bool checkpointing = !config_.state_dir.empty();
    InputFeed feed(config_, std::move(mine),
                   fs::path(config_.output_dir) / kRejectsDirName /
                       reject_file_name(world_.rank(), begun->resumed_from),
                   checkpointing);
    std::optional<Checkpointer> checkpointer;
    if (checkpointing) {
      checkpointer.emplace(world_, config_, begun->manifest, begun->resumed_from,
                           begun->resumed_from + 1);
      // --- fencing: no generation is committed by a fenced-out attempt.
      checkpointer->set_commit_fence([this] { lease_->check(); });
      checkpointer->set_slot_clock(&slot_clock);
    }
    comm::KeyRouter router(world_, slices, {}, config_.exchange, ranks_per_node_override());
    if (world_.rank() == 0 && router.node_aware()) {
      std::cerr << "bloomshard dedup: node-aware exchange: " << router.topology()->num_nodes()
                << " nodes x " << router.topology()->ranks_per_node() << " ranks\n";
    }
    ProgressReporter progress(world_.rank() == 0, config_.progress_seconds, config_.progress_style,
                              std::cerr);

    // Split inputs keep the first copy in file order, as one reader would
    // (core/file_order.hpp): keys travel with order tags and owners
    // retract kept copies that turn out to be later ones. Whole records
    // only: a paragraph's or a window's verdicts are not flipped.
    // (Every rank decides the same from the same manifest.)
    const bool file_order =
        config_.annotate.mode == RunMode::kFilter && config_.key.unit == core::KeyUnit::kRecord &&
        config_.window.window == 0 &&
        std::any_of(begun->manifest.inputs.begin(), begun->manifest.inputs.end(),
                    [](const InputProgress& p) { return !p.ranges.empty() && !p.done; });
    if (file_order) feed.tag_keys_in_file_order();
    core::FileOrder order;
    if (file_order) order.reserve(file_order_reserve(begun->manifest, world_.usize()));
    if (file_order && plan.kind == StartKind::kResume) {
      set_activity("remembering the kept copies of split inputs");
      const Clock::time_point r = Clock::now();
      const std::uint64_t walked = world_.allreduce_sum(rebuild_file_order(
          router, begun->manifest, feed, config_.output_dir, config_.max_exchange_bytes, order));
      if (world_.rank() == 0 && walked > 0) {
        std::cerr << "bloomshard dedup: remembered " << walked
                  << " kept record(s) of split inputs' later ranges for file order in "
                  << seconds_since(r) << " s\n";
      }
    }
    CombineScratch combine_scratch;               // combine_in_file_order()'s
    std::vector<std::uint32_t> routed_index;      // batch index of each key routed
    std::vector<core::KeyRef> routed_keys;        // those keys
    std::vector<core::OrderTag> routed_tags;      // and their tags
    std::vector<core::Verdict> routed_verdicts;   // and their verdicts
    std::vector<char> wire_bytes;                 // this round's keys with their tags
    std::vector<core::KeyRef> wire_keys;          // views into wire_bytes
    std::vector<core::KeyRef> untagged_keys;      // an owner's keys without their tags
    std::vector<core::OrderTag> owned_tags;       // and the tags
    std::vector<core::OrderTag> retracted_round;  // this round's retractions

    RoundBatch batch;
    std::vector<core::Verdict> my_verdicts;
    PhaseSeconds phases;
    PhaseSeconds phases_system;  // the kernel's share of each phase
    std::uint64_t rounds = 0;
    std::uint64_t rounds_since_checkpoint = 0;
    std::uint64_t peak_rss_anon = 0;
    Clock::time_point last_checkpoint = Clock::now();
    newest_inserted_ = world_.allreduce_sum(set.bloom().newest_layer_inserted());
    std::string input_error;
    std::uint64_t skipped_inputs = skipped_in_manifest(begun->manifest).size();
    bool failed_anywhere = false;
    bool stopped = false;

    for (;;) {
      // --- watchdog: one beat per round, and what the round is doing.
      comm::heartbeat();
      set_activity("reading inputs", rounds + 1);
      const PhaseTimer reading;
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
      if (file_order) {  // later copies of a key in the batch stay home, then tags on
        feed.count_combined(
            combine_in_file_order(batch.keys(), batch.tags(), combine_scratch, routed_index));
        routed_keys.clear();
        routed_tags.clear();
        for (const std::uint32_t i : routed_index) {
          routed_keys.push_back(batch.keys()[i]);
          routed_tags.push_back(batch.tags()[i]);
        }
        append_order_tags(routed_keys, routed_tags, wire_bytes, wire_keys);
      }
      const std::span<const core::KeyRef> keys =
          file_order ? std::span<const core::KeyRef>(wire_keys) : batch.keys();
      reading.add_to(phases.read, phases_system.read);

      // Route (combined, in sub-rounds under --max-exchange-bytes), decide
      // at the owners, verdicts back; the decisions are timed apart.
      const PhaseTimer routing;
      set_activity("exchanging keys and deciding", rounds + 1);
      PhaseSeconds round;  // this round's decide (and route) times
      PhaseSeconds round_system;
      my_verdicts.resize(batch.keys().size());
      routed_verdicts.resize(keys.size());
      router.route(
          keys,
          [&](std::span<const core::KeyRef> owned_keys, std::span<core::Verdict> verdicts) {
            const PhaseTimer deciding;
            if (file_order) {
              split_order_tags(owned_keys, untagged_keys, owned_tags);
              set.decide_batch(untagged_keys, verdicts);
              order.settle(untagged_keys, owned_tags, verdicts, retracted_round);
            } else {
              set.decide_batch(owned_keys, verdicts);
            }
            deciding.add_to(round.decide, round_system.decide);
          },
          file_order ? std::span<core::Verdict>(routed_verdicts) : std::span(my_verdicts),
          {.budget = config_.max_exchange_bytes,
           .max_keys = newest_layer_capacity(set),
           .before_subround = [&](std::uint64_t upcoming) {
             open_layer_if_needed(set, upcoming);
           }});
      routing.add_to(round.route, round_system.route);
      if (file_order) {
        std::fill(my_verdicts.begin(), my_verdicts.end(), core::Verdict::kDuplicate);
        for (std::size_t j = 0; j < routed_index.size(); ++j) {
          my_verdicts[routed_index[j]] = routed_verdicts[j];
        }
      }
      feed.note_retracted(retracted_round);
      retracted_round.clear();
      phases.decide += round.decide;
      phases_system.decide += round_system.decide;
      phases.route += round.route - round.decide;
      phases_system.route += round_system.route - round_system.decide;

      const PhaseTimer writing;
      // --- fencing: a fenced-out attempt never extends an output.
      set_activity("writing outputs", rounds + 1);
      lease_->check();
      feed.write_kept(batch, my_verdicts);
      writing.add_to(phases.write, phases_system.write);
      ++rounds;
      ++rounds_since_checkpoint;
      // Anonymous memory (heap), sampled at the round's peak: mapped
      // checkpoint pages are page cache, not counted.
      peak_rss_anon = std::max(peak_rss_anon, rss_anon_bytes());

      // One reduction per round: termination, errors, signals, checkpoint
      // triggers, layer growth, progress. Rank 0's clock decides timed
      // checkpoints so that all ranks agree.
      const PhaseTimer agreeing;
      set_activity("agreeing on the round's end", rounds);
      const FeedCounters& c = feed.counters();
      const bool time_due = world_.rank() == 0 && config_.checkpoint_every > 0 &&
                            seconds_since(last_checkpoint) >= config_.checkpoint_every;
      const std::vector<std::uint64_t> g = world_.allreduce_sum(std::vector<std::uint64_t>{
          feed.exhausted() ? 0U : 1U, input_error.empty() ? 0U : 1U,
          set.bloom().newest_layer_inserted(), c.records, c.dropped, c.rejected, c.input_bytes_done,
          stop_requested() ? 1U : 0U, set.exact().delta_bytes() > config_.max_delta_bytes ? 1U : 0U,
          time_due ? 1U : 0U, feed.skip_pending() ? 1U : 0U});
      agreeing.add_to(phases.route, phases_system.route);
      newest_inserted_ = g[2];  // exact again
      if (set.bloom().layer_full(g[2])) {
        set.bloom().add_layer();
        newest_inserted_ = 0;
      }
      const bool slot_due = slot_clock.due(world_, g[3]);  // collective
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
      if (checkpointer && (stopped || slot_due || g[8] != 0 || g[9] != 0 ||
                           (config_.checkpoint_rounds > 0 &&
                            rounds_since_checkpoint >= config_.checkpoint_rounds))) {
        set_activity("writing a checkpoint", rounds);
        checkpointer->write(feed, set, router.stats(), rounds, false, stopped);
        if (checkpointer->written() == 1 && !stopped) {
          fault_pause_until_stop(kPauseAfterFirstCheckpoint, world_.rank());
        }
        if (slot_due && !stopped) {  // the delta is now a run of the closing slot
          slot_clock.open_next(set);
          newest_inserted_ = 0;
        }
        comm::heartbeat();
        peak_rss_anon = std::max(peak_rss_anon, rss_anon_bytes());
        rounds_since_checkpoint = 0;
        last_checkpoint = Clock::now();
        // --- stop during a checkpoint: the generation just written is the
        // stop's checkpoint; no second full one after the next round.
        if (!stopped && world_.allreduce_max(std::uint64_t{stop_requested() ? 1U : 0U}) != 0) {
          stopped = true;
          if (world_.rank() == 0) {
            std::cerr << "bloomshard dedup: stop signal arrived during checkpoint generation "
                      << begun->resumed_from + checkpointer->written()
                      << ": it is the stop's checkpoint\n";
          }
        }
      }
      if (stopped) break;
    }

    progress.finish();  // a bar's line ends before any message
    if (failed_anywhere) {
      // A consistent cut still: the broken input stays unfinished at its
      // last good record, so a resume after it is replaced, or with
      // --on-input-error skip, goes on from here.
      if (checkpointer) checkpointer->write(feed, set, router.stats(), rounds, false, true);
      feed.finish();
      if (!input_error.empty()) {
        write_stderr_line("bloomshard dedup: rank " + std::to_string(world_.rank()) +
                          ": input error: " + input_error);
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
        if (checkpointer) {
          std::cerr << "bloomshard dedup: stop signal received; checkpointed generation "
                       "written; exit "
                    << kExitCheckpointedRequeue << " (please requeue)\n";
        } else {
          // Nothing to resume from: a requeue would only meet its own outputs.
          std::cerr << "bloomshard dedup: stop signal received; no --state, so nothing was "
                       "saved and the outputs in '"
                    << config_.output_dir << "' are partial; exit " << kExitFailure
                    << ". Run again with --overwrite to start over, and give --state DIR to "
                       "make a stop resumable\n";
        }
      }
      return checkpointer ? kExitCheckpointedRequeue : kExitFailure;
    }
    set_activity("finishing the run");
    comm::heartbeat();
    const bool split = has_split_inputs(begun->manifest);
    RunManifest cut;
    double join_seconds = 0;
    fault_pause_in_finish(kPauseBeforeJoin, world_.rank());
    if (split) {
      set_activity("joining split inputs");
      const Clock::time_point j = Clock::now();
      cut = merge_cut(world_, begun->manifest, feed.commit(), feed.retracted());
      const std::vector<std::size_t> joined =
          join_split_inputs(world_, cut, feed, config_.output_dir, checkpointing);
      for (const std::size_t i : joined) {
        if (checkpointer) checkpointer->note_joined(i, cut.inputs[i].output_length);
      }
      join_seconds = world_.allreduce_max(seconds_since(j));
      if (world_.rank() == 0 && !joined.empty()) {
        std::cerr << "bloomshard dedup: joined the ranges of " << joined.size()
                  << " split input(s) in " << join_seconds << " s\n";
      }
      comm::heartbeat();
    }
    fault_pause_in_finish(kPauseBeforeFinalCheckpoint, world_.rank());
    if (checkpointer) {
      checkpointer->set_commit_fence([this] {
        lease_->check();
        fault_pause_in_finish(kPauseInFinalCommit, 0);  // both files still *.tmp
      });
      checkpointer->write(feed, set, router.stats(), rounds, true, true);
      checkpointer->wait_for_pruning();
    }
    fault_pause_in_finish(kPauseAfterFinalCheckpoint, world_.rank());
    feed.finish();
    // The parts go only once a generation records the joins.
    if (split && world_.rank() == 0) remove_joined_parts(cut, config_.output_dir);

    JobSummary summary = reduce_metrics(world_, begun->manifest.counters, feed, set, router.stats(),
                                        phases, phases_system, rounds, seconds_since(start));
    summary.input_files = files.size();
    summary.join_seconds = join_seconds;
    summary.input_bytes = total_bytes;
    summary.checkpoints = checkpointer ? checkpointer->written() : 0;
    if (checkpointer) summary.checkpoint = checkpointer->metrics();
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
      if (!config_.metrics_path.empty()) write_metrics_file(metrics_json(summary));
      std::cout << summary_text(summary) << std::flush;
      fault_pause_in_finish(kPauseAfterSummary, 0);
      if (reject_fraction > config_.max_reject_fraction) {
        std::cerr << "bloomshard dedup: " << summary.counters.rejected << " of "
                  << summary.counters.records << " records rejected (" << 100.0 * reject_fraction
                  << "%), more than --max-reject-fraction " << 100.0 * config_.max_reject_fraction
                  << "%; see " << (fs::path(config_.output_dir) / kRejectsDirName).string() << '\n';
      }
    }
    return reject_fraction > config_.max_reject_fraction ? kExitTooManyRejects : kExitOk;
  }

  // Collective, before the lock: rank 0's pre-flight of every path the job
  // writes (dedup_preflight.hpp). Returns the exit code (0: go on).
  int refuse_unwritable_paths() {
    std::string verdict;  // exit code byte + message
    if (world_.rank() == 0) {
      const OutputCheck check = preflight_dedup(config_);
      verdict = std::string(1, static_cast<char>(check.exit_code)) + check.error;
    }
    verdict = world_.broadcast(verdict);
    if (verdict[0] != '\0' && world_.rank() == 0) {
      std::cerr << "bloomshard dedup: " << verdict.substr(1) << '\n';
    }
    return verdict[0];
  }

  // Collective, at an orderly end: the other ranks close the lock file,
  // then rank 0 removes it (run_lease.hpp: only with fcntl locks, under
  // the write lock).
  void release_run_lease() {
    if (!lease_) return;
    watchdog_.set_periodic(nullptr, 0);  // no beat into a closed lease
    if (world_.rank() != 0) lease_.reset();
    world_.barrier();
    if (world_.rank() == 0) {
      (void)lease_->release_and_remove(lock_file_for(config_.state_dir, config_.output_dir));
      lease_.reset();
    }
  }

  std::uint64_t initial_capacity(std::span<const io::InputFile> files) const {
    return config_.capacity.value_or(estimate_capacity(files));
  }

  // Keys one sub-round may decide (all ranks): the newest layer's capacity,
  // less the rounding slack of route()'s cut (one key per rank pair), so
  // that a sub-round fits into a layer opened just before it.
  std::uint64_t newest_layer_capacity(const core::TwoTierSet& set) const {
    const core::ScalableBloom& bloom = set.bloom();
    const std::uint64_t capacity = bloom.layer_geometry(bloom.num_layers() - 1).capacity;
    const std::uint64_t slack = world_.usize() * world_.usize();
    return capacity > 2 * slack ? capacity - slack : std::max<std::uint64_t>(1, capacity / 2);
  }

  // Called by route() on every rank before each sub-round, with the same
  // `upcoming` (keys it will decide, an upper bound of its inserts): opens
  // the next layer when the newest could overflow, so the compound FPR
  // bound holds; a layer may open up to one sub-round early.
  void open_layer_if_needed(core::TwoTierSet& set, std::uint64_t upcoming) {
    core::ScalableBloom& bloom = set.bloom();
    const std::uint64_t capacity = bloom.layer_geometry(bloom.num_layers() - 1).capacity;
    if (newest_inserted_ + upcoming > capacity) {
      bloom.add_layer();
      newest_inserted_ = 0;
    }
    newest_inserted_ += upcoming;
  }

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
    s.manifest.mode = run_mode_label(config_.annotate);  // pinned for resume (run_state.cpp)
    for (const auto& f : files) s.manifest.inputs.push_back({f, {}, false, 0, {}, {}, {}});
    if (plan.kind != StartKind::kResume) split_at_first_start(s.manifest);
    if (plan.kind == StartKind::kFresh) {
      core::ScalableBloomParams params;
      params.initial_capacity = initial_capacity(files);
      params.fpr_target = config_.fpr;
      params.num_slices = slices;
      s.set = std::make_unique<core::TwoTierSet>(params, owned);
      return s;
    }
    // --- fallback only within the same run: one line per skipped generation.
    for (const std::uint64_t g : plan.candidates) {
      const fs::path path = io::generation_path(config_.state_dir, g);
      comm::heartbeat();
      try {
        io::LoadedCheckpoint loaded = io::load_checkpoint(world_, path, owned);
        const std::string foreign = foreign_generation(plan, g, loaded.summary.header.run_id,
                                                       loaded.summary.header.finished);
        if (!foreign.empty()) {
          if (world_.rank() == 0) std::cerr << "bloomshard dedup: " << foreign << '\n';
          continue;
        }
        s.set = std::move(loaded.set);
        s.resumed_from = g;
        s.window_progress = loaded.summary.header.window_slot_progress;
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
                    << " cannot be used: " << one_line(e.what())
                    << "; falling back to an older one\n";
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

  // Collective, at a run's first start: rank 0 cuts the big uncompressed
  // inputs into ranges (probing each file near the cuts) and every rank
  // gets them as "input begin end" lines. Annotate runs read whole files:
  // their attribute records are written per input in one pass.
  void split_at_first_start(RunManifest& m) {
    if (!config_.split_inputs || config_.annotate.mode != RunMode::kFilter) return;
    std::string text;
    if (world_.rank() == 0) {
      try {
        split_large_inputs(m, world_.size(), config_.split_min_bytes);
        for (std::size_t i = 0; i < m.inputs.size(); ++i) {
          for (const RangeProgress& r : m.inputs[i].ranges) {
            text += std::to_string(i) + ' ' + std::to_string(r.begin) + ' ' +
                    std::to_string(r.end) + '\n';
          }
        }
      } catch (const std::exception& e) {
        text = std::string("!") + e.what();
      }
    }
    text = world_.broadcast(text);
    if (text.starts_with('!')) throw std::runtime_error("cannot split inputs: " + text.substr(1));
    if (world_.rank() == 0) {
      std::size_t split = 0;
      std::size_t ranges = 0;
      for (const InputProgress& p : m.inputs) {
        split += p.ranges.empty() ? 0U : 1U;
        ranges += p.ranges.size();
      }
      if (split > 0) {
        std::cerr << "bloomshard dedup: split " << split << " input(s) into " << ranges
                  << " line-aligned ranges (--split-min-bytes " << config_.split_min_bytes << ")\n";
      }
      return;
    }
    std::istringstream in(text);
    std::size_t i = 0;
    RangeProgress r;
    while (in >> i >> r.begin >> r.end) {
      r.cursor = {0, r.begin};
      m.inputs.at(i).ranges.push_back(r);
    }
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

  // --- fencing. Collective: rank 0 takes the run's lock (waiting up to
  // --lock-wait for an earlier attempt to end), then every other rank joins
  // it. False (on every rank) when the wait ran out.
  bool take_run_lease() {
    const fs::path file = lock_file_for(config_.state_dir, config_.output_dir);
    std::string verdict;  // "ok EPOCH fcntl|lease" or "no MESSAGE"
    if (world_.rank() == 0) {
      try {
        LeaseRecord holder;
        lease_ = RunLease::acquire(file, config_.fencing, 0, holder);
        if (!lease_ && config_.lock_wait > 0) {
          std::cerr << "bloomshard dedup: another attempt of this run is alive ("
                    << describe_holder(holder) << "); waiting up to " << config_.lock_wait
                    << " s for it to end\n"
                    << std::flush;
          lease_ = RunLease::acquire(file, config_.fencing, config_.lock_wait, holder,
                                     [] { comm::heartbeat(); });
        }
        if (lease_) {
          verdict = "ok " + std::to_string(lease_->epoch()) +
                    (lease_->uses_fcntl() ? " fcntl" : " lease");
        } else {
          verdict = "no another attempt of this run still holds '" + file.string() + "' after " +
                    std::to_string(static_cast<long>(config_.lock_wait)) + " s (" +
                    describe_holder(holder) +
                    "); not starting a second writer. Wait for it to end, or raise --lock-wait";
        }
      } catch (const std::exception& e) {
        verdict = std::string("err cannot take the run's lock: ") + e.what();
      }
    } else {
      watchdog_.allow_quiet(config_.lock_wait + 30);
    }
    verdict = world_.broadcast(verdict);
    watchdog_.allow_quiet(0);
    comm::heartbeat();
    if (verdict.starts_with("err ")) throw std::runtime_error(verdict.substr(4));
    if (verdict.starts_with("no ")) {
      if (world_.rank() == 0) std::cerr << "bloomshard dedup: " << verdict.substr(3) << '\n';
      return false;
    }
    std::istringstream in(verdict.substr(3));
    std::uint64_t epoch = 0;
    std::string mode;
    in >> epoch >> mode;
    if (world_.rank() != 0) {
      lease_.emplace(RunLease::join(file, mode == "fcntl", epoch));
    } else if (mode == "lease") {
      watchdog_.set_periodic([this] { return lease_->beat(); }, RunLease::kBeatSeconds);
    }
    return true;
  }

  // Rank 0, on a start that finds the run finished: a kill between the
  // finishing generation and the metrics file (or a lost file) left no
  // metrics; the state's newest generation has the run's totals. A metrics
  // file already there (the run's own, from its end) is kept.
  void write_metrics_of_finished_run() const {
    if (config_.metrics_path.empty() || fs::exists(config_.metrics_path)) return;
    // The generation the start decided by: the newest whose header reads.
    std::optional<io::CheckpointSummary> saved;
    for (const std::uint64_t g : io::resume_candidates(config_.state_dir)) {
      try {
        saved = io::read_checkpoint_summary(io::generation_path(config_.state_dir, g));
        break;
      } catch (const std::exception&) {
        continue;  // the start's own decision skipped it too
      }
    }
    if (!saved || !saved->header.finished) return;  // changed since the decision: say nothing
    write_metrics_file(metrics_json(
        summary_of_finished_run(*saved, manifest_from_json(saved->header.manifest_json))));
    std::cout << "bloomshard dedup: metrics of the finished run written to '"
              << config_.metrics_path << "' (from its state)\n";
  }

  // Rank 0: the metrics JSON, through a temporary that is fsynced and
  // renamed, its directory fsynced: a full disk leaves no empty or half file
  // (and says so), a power cut the old file or the new one.
  void write_metrics_file(const std::string& json) const {
    io::replace_file_durably(config_.metrics_path, json);
  }

  comm::Communicator world_;
  DedupConfig config_;
  // Keys in the newest Bloom layer, all ranks: exact after each round's
  // reduction, an upper bound in between (open_layer_if_needed).
  std::uint64_t newest_inserted_ = 0;
  Watchdog& watchdog_;
  std::optional<RunLease> lease_;
};

}  // namespace

int run_dedup(const std::vector<std::string>& args) {
  install_stop_signal_handlers();  // before MPI starts: no signal is lost
  // Before MPI_Init, which can hang when the launcher is already gone;
  // destroyed last, after MPI_Finalize (which can hang on a lost peer too).
  Watchdog watchdog(DedupConfig{}.stall_timeout);
  comm::Environment env;
  comm::Communicator world;
  watchdog.set_rank(world.rank());
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
  watchdog.set_stall_timeout(parsed.config.stall_timeout);
  try {
    return DedupJob(world, std::move(parsed.config), watchdog).run();
  } catch (const FencedOut& e) {
    write_stderr_line("bloomshard dedup: rank " + std::to_string(world.rank()) + " of " +
                      std::to_string(world.size()) + " on " + host_name() + ": " + e.what());
    comm::abort_job(kExitRunLocked);
  } catch (const std::exception& e) {
    report_error_and_abort(world, "dedup", e, kExitFailure);
  }
}

}  // namespace bloomshard::app
