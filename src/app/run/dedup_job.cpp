#include "app/run/dedup_job.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "app/cli/exit_codes.hpp"
#include "app/cli/mpi_command.hpp"
#include "app/cli/plan_command.hpp"
#include "app/feed/input_feed.hpp"
#include "app/feed/skipped_inputs.hpp"
#include "app/guard/dedup_preflight.hpp"
#include "app/guard/output_guard.hpp"
#include "app/options/dedup_options.hpp"
#include "app/report/job_abort.hpp"
#include "app/report/job_metrics.hpp"
#include "app/report/progress.hpp"
#include "app/report/stderr_line.hpp"
#include "app/round/confirmed_band_order.hpp"
#include "app/round/key_order.hpp"
#include "app/round/layer_growth.hpp"
#include "app/round/phase_timer.hpp"
#include "app/round/retracted_copies.hpp"
#include "app/round/retracted_line_cut.hpp"
#include "app/round/round.hpp"
#include "app/run/checkpointer.hpp"
#include "app/run/fault_pause.hpp"
#include "app/run/job_setup.hpp"
#include "app/run/job_start.hpp"
#include "app/run/lease_holder.hpp"
#include "app/run/metrics_file.hpp"
#include "app/run/run_lease.hpp"
#include "app/run/run_state.hpp"
#include "app/run/stop_signal.hpp"
#include "app/run/watchdog.hpp"
#include "app/split/lockstep_layout.hpp"
#include "app/split/range_join.hpp"
#include "app/split/rank_tasks.hpp"
#include "app/split/split_inputs.hpp"
#include "app/state/state_overrides.hpp"
#include "app/state/window_slots.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/environment.hpp"
#include "comm/heartbeat.hpp"
#include "comm/router.hpp"
#include "core/bloom/sizing_plan.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"
#include "io/checkpoint/checkpoint_summary.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// BLOOMSHARD_RANKS_PER_NODE=k makes the node-aware exchange treat groups of
// k consecutive ranks as nodes: several "nodes" on one machine, for tests
// and benchmarks. Unset (the normal case): the real MPI_COMM_TYPE_SHARED split.
int ranks_per_node_override() {
  const char* value = std::getenv("BLOOMSHARD_RANKS_PER_NODE");
  return value != nullptr ? std::max(0, std::atoi(value)) : 0;
}

// How a segment's rounds ended.
enum class RoundsEnd : std::uint8_t { kFinished, kStopped, kFailed };

// Everything one segment of a run works with, in the order it is built
// (and torn down in reverse: the checkpointer and the round refer to the
// pieces before them). Built in place, never moved.
struct Segment {
  StartPlan plan;
  std::vector<io::InputFile> files;
  Start begun;
  std::optional<SlotClock> slot_clock;
  std::uint64_t total_bytes = 0;            // on-disk size of every input, for progress
  std::optional<LockstepOutputs> lockstep;  // the lockstep layout's blocks, or none
  std::optional<InputFeed> feed;
  std::optional<Checkpointer> checkpointer;
  std::optional<comm::KeyRouter> router;
  std::optional<ProgressReporter> progress;
  ProgressSnapshot last_progress;  // of the last round
  std::string end_messages;        // of the join and the end pass, after the bar
  std::unique_ptr<KeyOrder> order;
  std::optional<LayerGrowth> growth;
  std::optional<Round> round;
  std::uint64_t skipped_inputs = 0;  // broken inputs skipped, earlier segments included
  std::uint64_t rounds_since_checkpoint = 0;
  Clock::time_point last_checkpoint;  // or the first round's start

  core::TwoTierSet& set() { return *begun.set; }
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
    if (!lease_.take()) return kExitRunLocked;
    const int code = run_holding_lease(start);
    lease_.release();
    return code;
  }

 private:
  int run_holding_lease(Clock::time_point start) {
    // Setup is rank 0's file work (input walk, checkpoint header).
    set_activity("setting up the run");
    JobSetup setup = agree_on_setup(world_, config_, watchdog_);
    if (setup.exit_code != kExitOk) return setup.exit_code;
    if (setup.plan.normalize != config_.key.normalize && world_.rank() == 0) {
      std::cerr << "bloomshard dedup: the state was saved with "
                << core::policy_label(setup.plan.normalize) << " rules; keeping them\n";
    }
    config_.key.normalize = setup.plan.normalize;
    config_.key.confirm_origins = setup.plan.origins;  // the state's (or a new state's)
    // Rank 0's estimate, the same on every rank (sampling on each could
    // differ if an input changes meanwhile). Not an explicit option: a
    // state's own capacity is never overridden by it.
    if (!config_.capacity && setup.capacity != 0) config_.capacity = setup.capacity;
    if (setup.plan.kind == StartKind::kFinished) return report_finished_run();
    const std::uint32_t slices = slice_count(setup);
    if (slices < world_.usize()) {
      if (world_.rank() == 0) {
        std::cerr << "bloomshard dedup: " << slices << " slices for " << world_.size()
                  << " ranks; every rank must own a slice (use fewer ranks or more --slices)\n";
      }
      return kExitUsage;
    }
    if (world_.rank() == 0) print_plan_line(setup, slices);
    const std::unique_ptr<Segment> s = open_segment(std::move(setup), slices);
    if (!s) return kExitFailure;
    const RoundsEnd end = run_rounds(*s);
    // A bar's line ends before any message. In input order it waits for the
    // end of the run, which still leaves retracted copies out: its last
    // duplicate figure is then the final one.
    if (end != RoundsEnd::kFinished || !s->order->in_input_order()) s->progress->finish();
    if (end == RoundsEnd::kFailed) return end_failed(*s);
    if (end == RoundsEnd::kStopped) return end_stopped(*s);
    return finish_run(*s, start);
  }

  // Rank 0: the start-up plan line. A resume prints none (its filter is
  // sized already) unless it loads a confirming state's forms.
  void print_plan_line(const JobSetup& setup, std::uint32_t slices) const {
    std::string loaded;
    if (setup.plan.kind != StartKind::kFresh && !setup.plan.candidates.empty()) {
      std::uint64_t state_keys = 0;
      try {  // the header only; a generation that cannot be read is fallen back from later
        state_keys = io::read_checkpoint_summary(
                         io::generation_path(config_.state_dir, setup.plan.candidates.front()))
                         .tier2_keys;
      } catch (const std::exception&) {
      }
      loaded = loaded_forms_plan(config_, state_keys, world_.usize());
    }
    if (setup.plan.kind == StartKind::kResume) {
      if (!loaded.empty()) {
        std::cerr << "bloomshard dedup: plan: " << world_.size() << " ranks, resume" << loaded
                  << '\n';
      }
      return;
    }
    std::cerr << "bloomshard dedup: "
              << dedup_plan_line(config_, setup.files, initial_capacity(config_, setup.files),
                                 world_.usize(), slices)
              << loaded << '\n';
  }

  // A state keeps its slice count; a new filter takes --slices or the
  // default for this rank count and capacity.
  std::uint32_t slice_count(const JobSetup& setup) const {
    if (setup.plan.num_slices != 0) return setup.plan.num_slices;
    if (config_.slices != 0) return config_.slices;
    return core::default_num_slices(world_.usize(), initial_capacity(config_, setup.files));
  }

  int report_finished_run() const {
    if (world_.rank() == 0) {
      // A kill after the finishing generation and before the parts of
      // split inputs were deleted left them: every input is joined now.
      std::error_code ignored;
      fs::remove_all(fs::path(config_.output_dir) / kRangesDirName, ignored);
      std::cout << "bloomshard dedup: the run in '" << config_.state_dir
                << "' already finished for these inputs; nothing to do\n";
      write_metrics_of_finished_run(config_);
    }
    return kExitOk;
  }

  // --- the segment: filter, windows, outputs, feed, checkpointer, exchange.
  // nullptr when no checkpoint generation verifies (rank 0 said so).
  std::unique_ptr<Segment> open_segment(JobSetup setup, std::uint32_t slices) {
    auto s = std::make_unique<Segment>();
    s->plan = std::move(setup.plan);
    s->files = std::move(setup.files);
    const core::SliceRange owned = core::slices_of_rank(world_.urank(), world_.usize(), slices);
    set_activity("loading the checkpoint");
    comm::heartbeat();
    std::optional<Start> begun = load_start(world_, config_, s->plan, s->files, owned, slices);
    if (!begun) return nullptr;
    s->begun = std::move(*begun);
    if (s->plan.kind == StartKind::kResume && !kept_copy_chosen(config_)) {
      // A resume without --kept-copy goes on with its state's rule (the
      // start decision refused a rule chosen against it): every rank read
      // the same manifest.
      config_.kept_copy =
          s->begun.manifest.input_order ? KeptCopy::kFirstInInputOrder : KeptCopy::kArrival;
    }
    s->set().bloom().set_auto_grow(false);  // layers open collectively, in the rounds
    if (world_.rank() == 0 && s->plan.kind != StartKind::kFresh) {
      for (const std::string& note : state_override_notes(config_, s->set().bloom().params())) {
        write_stderr_line("bloomshard dedup: " + note);
      }
    }
    // --- windows: slot 0 of a fresh state, or the next slot.
    s->slot_clock.emplace(config_.window, s->begun.window_progress);
    s->slot_clock->start(s->set(), s->plan.kind == StartKind::kFresh,
                         s->plan.kind == StartKind::kIncremental, s->begun.forms.get());
    if (s->plan.kind == StartKind::kResume) {
      // Before the outputs are cut to their committed lengths: an end pass
      // the last generation recorded renames what a kill left.
      redo_end_pass_renames(*s);
      prepare_resumed_outputs(world_, config_, s->begun.manifest);
    }
    open_feed(*s);
    open_exchange(*s, slices);
    return s;
  }

  void open_feed(Segment& s) {
    const RunManifest& m = s.begun.manifest;
    std::vector<FileTask> mine;
    const bool checkpointing = !config_.state_dir.empty();
    // A new run, or a state whose cut has the frontier shape (a lockstep
    // cut always has), on any rank count.
    if (lockstep_layout_applies(config_, m)) {
      set_activity("cutting the inputs into blocks");
      s.lockstep.emplace(agree_on_blocks(world_, m, config_.batch_bytes), m);
      mine = lockstep_tasks_of_rank(s.lockstep->blocks(), m, world_.rank(), world_.size(),
                                    s.total_bytes);
      prepare_lockstep_outputs(world_, m, config_.output_dir, checkpointing);
    } else {
      mine = tasks_of_rank(m, world_.rank(), world_.size(), s.total_bytes);
    }
    s.feed.emplace(config_, std::move(mine),
                   fs::path(config_.output_dir) / kRejectsDirName /
                       reject_file_name(world_.rank(), s.begun.resumed_from),
                   checkpointing);
    if (!checkpointing) return;
    s.checkpointer.emplace(world_, config_, s.begun.manifest, s.begun.resumed_from,
                           s.begun.resumed_from + 1);
    // --- fencing: no generation is committed by a fenced-out attempt.
    s.checkpointer->set_commit_fence([this] { lease_.check(); });
    s.checkpointer->set_slot_clock(&*s.slot_clock);
    if (s.lockstep) s.checkpointer->set_lockstep(&*s.lockstep);
  }

  // The router, the progress line, the key order (file order for open
  // split inputs: every rank decides the same from the same manifest) and
  // the round that ties them together.
  void open_exchange(Segment& s, std::uint32_t slices) {
    s.router.emplace(world_, slices, comm::RouterLimits{}, config_.exchange,
                     ranks_per_node_override());
    if (world_.rank() == 0 && s.router->node_aware()) {
      std::cerr << "bloomshard dedup: node-aware exchange: " << s.router->topology()->num_nodes()
                << " nodes x " << s.router->topology()->ranks_per_node() << " ranks\n";
    }
    s.progress.emplace(world_.rank() == 0, config_.progress_seconds, config_.progress_style,
                       std::cerr);
    s.order = make_key_order(config_, s.begun.manifest, world_.usize(), *s.feed,
                             s.lockstep ? config_.batch_bytes * world_.usize() : 0);
    if (s.begun.forms) adopt_loaded_forms(*s.order, std::move(s.begun.forms));
    // On one rank the tasks are read in the one order and no copy is ever
    // retracted; on more, the end pass compresses again most outputs it
    // cuts, so the rounds leave compressed outputs stored for it to
    // compress once.
    if (config_.defer_compression && s.order->in_input_order() && !s.lockstep &&
        world_.size() > 1 && config_.annotate.mode != RunMode::kAnnotate) {
      s.feed->defer_compression();
    }
    // Keys this run inserts carry its ordinal beside their positions.
    if (core::BandConfirmer* forms = band_confirmer_of(*s.order)) {
      if (s.begun.manifest.run_ordinal > core::kMaxOriginRun) {
        throw std::runtime_error("run ordinal " + std::to_string(s.begun.manifest.run_ordinal) +
                                 " of the state is beyond what its form origins keep");
      }
      forms->set_run(static_cast<std::uint32_t>(s.begun.manifest.run_ordinal));
    }
    if (s.checkpointer) {
      s.checkpointer->set_band_forms(band_confirmer_of(*s.order));
      s.checkpointer->set_key_order(s.order.get());
    }
    if (s.order->in_file_order() && s.plan.kind == StartKind::kResume) remember_kept_copies(s);
    if (s.order->in_input_order() && s.plan.kind == StartKind::kResume &&
        s.begun.manifest.input_order) {
      s.order->restore_input_order(*s.begun.manifest.input_order, *s.router, world_.rank());
    }
    s.growth.emplace(world_.usize(), world_.allreduce_sum(s.set().bloom().newest_layer_inserted()));
    s.round.emplace(RoundParts{
        world_, *s.router, s.set(), *s.feed, *s.order, *s.growth, config_.max_exchange_bytes,
        config_.key.unit == core::KeyUnit::kMinHash, s.lockstep ? &*s.lockstep : nullptr});
    s.skipped_inputs = skipped_in_manifest(s.begun.manifest).size();
  }

  // Collective, at a resume in input order: the outputs the end pass had
  // cut (the last generation lists them) get their temporary files renamed
  // over them, if a kill came first (a renamed one is checked by length);
  // temporary files of an end pass no generation recorded are removed.
  void redo_end_pass_renames(Segment& s) {
    const std::optional<InputOrderProgress>& order = s.begun.manifest.input_order;
    if (!order) return;
    commit_cut_outputs(world_, s.begun.manifest, order->cut_outputs, config_.output_dir, true);
    if (world_.rank() != 0) return;
    for (std::size_t i = 0; i < s.begun.manifest.inputs.size(); ++i) {
      if (std::any_of(order->cut_outputs.begin(), order->cut_outputs.end(),
                      [i](const CutOutput& c) { return c.input == i; })) {
        continue;
      }
      std::error_code ignored;
      fs::remove(cut_output_temp_path(io::output_path_for(
                     config_.output_dir, s.begun.manifest.inputs[i].file.relative_path)),
                 ignored);
    }
  }

  void remember_kept_copies(Segment& s) {
    set_activity("remembering the kept copies of split inputs");
    const Clock::time_point r = Clock::now();
    const std::uint64_t walked = world_.allreduce_sum(s.order->remember_committed(
        *s.router, s.begun.manifest, *s.feed, config_.output_dir, config_.max_exchange_bytes));
    if (world_.rank() == 0 && walked > 0) {
      std::cerr << "bloomshard dedup: remembered " << walked
                << " kept record(s) of split inputs' later ranges for file order in "
                << seconds_since(r) << " s\n";
    }
  }

  // --- the rounds, until every input is read, a rank fails, or a stop.
  RoundsEnd run_rounds(Segment& s) {
    Round& round = *s.round;
    s.last_checkpoint = Clock::now();  // --checkpoint-every counts from the first round
    for (;;) {
      round.read();
      round.route();
      round.write([this] { lease_.check(); });  // --- fencing: never extend an output
      ++s.rounds_since_checkpoint;
      // Rank 0's clock decides timed checkpoints so that all ranks agree.
      const bool time_due = world_.rank() == 0 && config_.checkpoint_every > 0 &&
                            seconds_since(s.last_checkpoint) >= config_.checkpoint_every;
      fault_pause_before_agreement(round.number(), world_.rank());
      const RoundAgreement g = round.agree(time_due, config_.max_delta_bytes);
      const bool slot_due = s.slot_clock->due(world_, g.records);  // collective
      s.last_progress = {g.records, g.dropped, g.rejected, g.input_bytes_done, s.total_bytes};
      s.progress->maybe_report(s.last_progress);
      if (g.input_errors != 0) return RoundsEnd::kFailed;
      if (g.broken_inputs != 0 && !resolve_broken_inputs(s, g.broken_inputs)) {
        return RoundsEnd::kFailed;
      }
      if (g.finished()) return RoundsEnd::kFinished;
      bool stopped = g.stop_requests != 0;
      if (s.checkpointer && checkpoint_due(s, g, slot_due, stopped)) {
        // In lockstep no cut is written while an input that broke (skipped
        // from the break to its block's end) still has blocks to place: its
        // line count is lost. The checkpoint, a stop's too, waits until the
        // rounds have placed its last block (the same on every rank).
        if (s.lockstep && !s.lockstep->can_cut()) {
          if (stopped && world_.rank() == 0 && !stop_postponed_) {
            std::cerr << "bloomshard dedup: stop signal received; its checkpoint waits until "
                         "the input that broke is read to its end\n";
          }
          stop_postponed_ = stop_postponed_ || stopped;
          continue;
        }
        stopped = checkpoint_at_round_end(s, slot_due, stopped);
      }
      if (stopped) return RoundsEnd::kStopped;
    }
  }

  bool checkpoint_due(const Segment& s, const RoundAgreement& g, bool slot_due,
                      bool stopped) const {
    return stopped || slot_due || g.delta_over_budget != 0 || g.checkpoint_due != 0 ||
           (config_.checkpoint_rounds > 0 &&
            s.rounds_since_checkpoint >= config_.checkpoint_rounds);
  }

  // Collective: a checkpoint after the round. Returns whether the job
  // stops: a stop that arrived while the generation was written makes it
  // the stop's checkpoint (no second full one after the next round).
  bool checkpoint_at_round_end(Segment& s, bool slot_due, bool stopped) {
    Round& round = *s.round;
    set_activity("writing a checkpoint", round.number());
    s.checkpointer->write(*s.feed, s.set(), s.router->stats(), round.number(), false, stopped);
    if (s.checkpointer->written() == 1 && !stopped) {
      fault_pause_until_stop(kPauseAfterFirstCheckpoint, world_.rank());
    }
    if (slot_due && !stopped) {  // the delta is now a run of the closing slot
      s.slot_clock->open_next(s.set(), band_confirmer_of(*s.order));
      s.growth->layer_opened();
    }
    comm::heartbeat();
    round.sample_rss_anon();
    s.rounds_since_checkpoint = 0;
    s.last_checkpoint = Clock::now();
    if (stopped || world_.allreduce_max(std::uint64_t{stop_requested() ? 1U : 0U}) == 0) {
      return stopped;
    }
    if (world_.rank() == 0) {
      std::cerr << "bloomshard dedup: stop signal arrived during checkpoint generation "
                << s.begun.resumed_from + s.checkpointer->written()
                << ": it is the stop's checkpoint\n";
    }
    return true;
  }

  // After a round in which `broken` inputs broke under --on-input-error
  // skip: skips them all if the run stays within --max-skipped-inputs
  // (counting earlier segments), else none (false: the job stops).
  bool resolve_broken_inputs(Segment& s, std::uint64_t broken) {
    const bool skip = s.skipped_inputs + broken <= config_.max_skipped_inputs;
    s.skipped_inputs += broken;
    s.feed->resolve_held_input(skip);
    if (skip && world_.rank() == 0) {
      std::cerr << "bloomshard dedup: warning: " << broken
                << " input(s) broke in this round and were skipped from the damage on ("
                << s.skipped_inputs << " of at most " << config_.max_skipped_inputs << ")\n";
    }
    return skip;
  }

  // --- the ends of a segment.

  // A consistent cut still: the broken input stays unfinished at its last
  // good record, so a resume after it is replaced, or with
  // --on-input-error skip, goes on from here.
  int end_failed(Segment& s) {
    // In lockstep the broken block's lines past the break are not known,
    // nor placed: the last generation (a cut before the round) stands.
    const bool cut = s.checkpointer && !s.lockstep;
    if (cut) {
      s.checkpointer->write(*s.feed, s.set(), s.router->stats(), s.round->number(), false, true);
    }
    s.feed->finish();
    if (!s.round->input_error().empty()) {
      write_stderr_line("bloomshard dedup: rank " + std::to_string(world_.rank()) +
                        ": input error: " + s.round->input_error());
    }
    world_.barrier();  // let the failing rank's message out before the exit
    const bool too_many = s.skipped_inputs > config_.max_skipped_inputs;
    if (world_.rank() == 0) {
      std::cerr << "bloomshard dedup: "
                << (too_many ? "more broken inputs than --max-skipped-inputs " +
                                   std::to_string(config_.max_skipped_inputs) +
                                   " (the one over the limit is not skipped); "
                             : std::string())
                << (cut              ? "checkpointed: replace or fix the input and run again"
                    : s.checkpointer ? "the last checkpoint stands: replace or fix the input and "
                                       "run again"
                                     : "no --state, nothing saved")
                << (too_many ? "" : ", or run again with --on-input-error skip") << '\n';
    }
    return too_many ? kExitTooManyRejects : kExitFailure;
  }

  int end_stopped(Segment& s) {
    s.feed->finish();
    if (s.checkpointer) s.checkpointer->wait_for_pruning();
    if (world_.rank() == 0) {
      if (s.checkpointer) {
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
    return s.checkpointer ? kExitCheckpointedRequeue : kExitFailure;
  }

  // Every input read: split inputs joined, the finishing generation, the
  // metrics and the summary.
  int finish_run(Segment& s, Clock::time_point start) {
    set_activity("finishing the run");
    comm::heartbeat();
    s.feed->wait_for_writes();  // the lockstep layout's last block, before the end pass reads
    const bool split = has_split_inputs(s.begun.manifest);
    RunManifest cut;
    double join_seconds = 0;
    fault_pause_in_finish(kPauseBeforeJoin, world_.rank());
    if (split) join_seconds = join_split(s, cut);
    double end_pass_seconds = 0;
    std::uint64_t end_pass_by_map = 0;
    std::uint64_t end_pass_compressed = 0;
    std::uint64_t offset_map_bytes = 0;
    if (s.order->in_input_order()) {
      offset_map_bytes = world_.allreduce_max(std::uint64_t{s.feed->offset_map_bytes()});
      // The clock starts once every rank is here: the rank that finished
      // reading first would otherwise count its wait for the others.
      world_.barrier();
      const Clock::time_point e = Clock::now();
      std::tie(end_pass_by_map, end_pass_compressed) = leave_out_retracted(s);
      end_pass_seconds = world_.allreduce_max(seconds_since(e));
    }
    s.progress->finish();
    if (world_.rank() == 0) std::cerr << s.end_messages;
    fault_pause_in_finish(kPauseBeforeFinalCheckpoint, world_.rank());
    if (s.checkpointer) {
      s.checkpointer->set_commit_fence([this] {
        lease_.check();
        fault_pause_in_finish(kPauseInFinalCommit, 0);  // both files still *.tmp
      });
      s.checkpointer->write(*s.feed, s.set(), s.router->stats(), s.round->number(), true, true);
      s.checkpointer->wait_for_pruning();
    }
    fault_pause_in_finish(kPauseAfterFinalCheckpoint, world_.rank());
    s.feed->finish();
    // The parts go only once a generation records the joins.
    if (split && world_.rank() == 0) remove_joined_parts(cut, config_.output_dir);
    JobSummary summary = summarize(s, seconds_since(start));
    summary.join_seconds = join_seconds;
    if (s.lockstep) {
      summary.input_layout = "lockstep";
      summary.input_blocks = s.lockstep->block_count();
      summary.rounds_without_order_table = s.order->rounds_without_table();
    }
    summary.end_pass_seconds = end_pass_seconds;
    summary.end_pass_outputs_by_map = end_pass_by_map;
    summary.end_pass_compressed_outputs = end_pass_compressed;
    summary.end_pass_offset_map_bytes = offset_map_bytes;
    return report(summary);
  }

  // Collective, in input order: the copies an earlier copy in another input
  // retracted leave the outputs, or in annotate mode get their attribute
  // lines flagged a duplicate (app/round/retracted_copies.hpp).
  // No message: the summary must follow the bar; the metrics count the
  // lines as `retracted`.
  // With --state the cut outputs are recorded in a generation before they
  // are renamed over the outputs: a kill before that generation resumes
  // from the last one (no output touched yet), a kill after it renames
  // what is left (redo_end_pass_renames); no output is ever cut twice.
  // Returns the outputs whose lines were placed by their offset map, and
  // the stored gzip outputs it compressed.
  std::pair<std::uint64_t, std::uint64_t> leave_out_retracted(Segment& s) {
    set_activity("leaving retracted copies out of the outputs");
    const bool durable = s.checkpointer.has_value();
    const bool annotate = config_.annotate.mode == RunMode::kAnnotate;
    const EndPassOptions how{
        .max_line_bytes = config_.max_line_bytes,
        .durable = durable,
        .annotate = annotate ? std::optional(config_.annotate.format) : std::nullopt,
        .gzip_level = config_.gzip_level,
        .zstd_level = config_.zstd_level,
        .paragraphs = config_.key.unit == core::KeyUnit::kParagraph ? std::optional(config_.key)
                                                                    : std::nullopt,
        .hash_seed = config_.hash_seed};
    const RetractedCopiesPass pass =
        cut_retracted_copies(world_, s.begun.manifest, s.order->cross_input_retractions(), *s.feed,
                             config_.output_dir, how);
    if (s.checkpointer && !pass.cut.empty()) {
      fault_pause_in_finish(kPauseBeforeEndPassCheckpoint, world_.rank());
      set_activity("recording the end pass in a checkpoint");
      s.checkpointer->set_end_pass(pass.cut, true);
      s.checkpointer->write(*s.feed, s.set(), s.router->stats(), s.round->number(), false, false);
      fault_pause_in_finish(kPauseBeforeEndPassRenames, world_.rank());
    }
    commit_cut_outputs(world_, s.begun.manifest, pass.cut, config_.output_dir, durable);
    if (s.checkpointer) s.checkpointer->set_end_pass(pass.cut, false);
    ProgressSnapshot last = s.last_progress;  // the lines left out count as duplicates
    last.dropped = world_.allreduce_sum(s.feed->counters().dropped);
    s.progress->maybe_report(last);
    comm::heartbeat();
    return {pass.by_map, pass.deferred};
  }

  // Collective: joins the ranges of split inputs into their outputs; `cut`
  // gets the manifest they were joined by. Returns the slowest rank's seconds.
  double join_split(Segment& s, RunManifest& cut) {
    set_activity("joining split inputs");
    const Clock::time_point j = Clock::now();
    cut = merge_cut(world_, s.begun.manifest, s.feed->commit(), s.feed->retracted());
    const std::vector<std::size_t> joined =
        join_split_inputs(world_, cut, *s.feed, config_.output_dir, s.checkpointer.has_value());
    for (const std::size_t i : joined) {
      if (s.checkpointer) s.checkpointer->note_joined(i, cut.inputs[i].output_length);
    }
    const double join_seconds = world_.allreduce_max(seconds_since(j));
    if (!joined.empty()) {
      std::ostringstream m;
      m << "bloomshard dedup: joined the ranges of " << joined.size() << " split input(s) in "
        << join_seconds << " s\n";
      s.end_messages += m.str();
    }
    comm::heartbeat();
    return join_seconds;
  }

  // Collective: the segment's figures over all ranks.
  JobSummary summarize(Segment& s, double wall_seconds) {
    const Round& round = *s.round;
    JobSummary summary =
        reduce_metrics(world_, s.begun.manifest.counters, *s.feed, s.set(), s.router->stats(),
                       round.phases().wall, round.phases().system, round.number(), wall_seconds);
    summary.input_files = s.files.size();
    summary.input_bytes = s.total_bytes;
    summary.checkpoints = s.checkpointer ? s.checkpointer->written() : 0;
    if (s.checkpointer) summary.checkpoint = s.checkpointer->metrics();
    summary.max_rss_anon_bytes = world_.allreduce_max(round.peak_rss_anon());
    summary.skipped_inputs = skipped_in_manifest(s.begun.manifest);
    for (SkippedInput& k : gather_skipped_inputs(world_, s.feed->skipped())) {
      summary.skipped_inputs.push_back(std::move(k));
    }
    return summary;
  }

  // Rank 0 writes --metrics and prints the summary. Exit 3 over
  // --max-reject-fraction, on every rank.
  int report(const JobSummary& summary) const {
    const double reject_fraction = summary.counters.records
                                       ? static_cast<double>(summary.counters.rejected) /
                                             static_cast<double>(summary.counters.records)
                                       : 0.0;
    if (world_.rank() == 0) {
      if (!config_.metrics_path.empty()) {
        write_metrics_file(config_.metrics_path, metrics_json(summary));
      }
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

  comm::Communicator world_;
  DedupConfig config_;
  Watchdog& watchdog_;
  LeaseHolder lease_{world_, config_, watchdog_};
  bool stop_postponed_ = false;  // a stop waits for a lockstep cut (said once)
};

}  // namespace

int run_dedup(const std::vector<std::string>& args) {
  // Built in the hook, before MPI_Init (which can hang when the launcher is gone);
  // destroyed last, after MPI_Finalize (which can hang on a lost peer too).
  std::optional<Watchdog> watchdog;
  return run_mpi_command<DedupConfig>(
      {.name = "dedup",
       .parse = parse_dedup_options,
       .run =
           [&watchdog](const comm::Communicator& world, DedupConfig config) {
             watchdog->set_rank(world.rank());
             watchdog->set_stall_timeout(config.stall_timeout);
             return DedupJob(world, std::move(config), *watchdog).run();
           },
       .before_mpi =
           [&watchdog] {
             install_stop_signal_handlers();  // before MPI starts: no signal is lost
             watchdog.emplace(DedupConfig{}.stall_timeout);
           }},
      args);
}

}  // namespace bloomshard::app
