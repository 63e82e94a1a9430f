#include "app/run/checkpointer.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <tuple>

#include "app/cli/version.hpp"
#include "app/feed/input_windows.hpp"
#include "app/feed/skipped_inputs.hpp"
#include "app/report/job_metrics.hpp"
#include "app/run/run_state.hpp"
#include "app/split/split_inputs.hpp"
#include "app/state/state_key_scheme.hpp"
#include "bloomshard/core/bloom_kernel.hpp"
#include "comm/heartbeat.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/hdf5/hdf5_parallel.hpp"

namespace bloomshard::app {
namespace {

// A generation that could not be deleted is left for a later prune: a
// warning, not a failure of a multi-day job.
void warn_prune_error(const std::string& error) {
  if (!error.empty()) std::cerr << "bloomshard dedup: warning: " << error << '\n';
}

}  // namespace

std::string reject_file_name(int rank, std::uint64_t resumed_from) {
  std::string name = "rank-" + std::to_string(rank);
  if (resumed_from != 0) name += ".resume-g" + std::to_string(resumed_from);
  return name + ".jsonl";
}

Checkpointer::Checkpointer(const comm::Communicator& comm, const CheckpointerConfig& config,
                           RunManifest base, std::uint64_t resumed_from,
                           std::uint64_t next_generation)
    : comm_(comm),
      config_(config),
      base_(std::move(base)),
      resumed_from_(resumed_from),
      generation_(next_generation) {
  if (!config_.mpiio_hints.empty()) io::set_mpiio_hints(io::parse_mpiio_hints(config_.mpiio_hints));
}

void Checkpointer::write(InputFeed& feed, core::TwoTierSet& set, const comm::RouterStats& router,
                         std::uint64_t rounds, bool finished, bool segment_ends) {
  const auto start = std::chrono::steady_clock::now();
  // 1. Outputs durable, cursors known (every rank).
  std::vector<FileState> states = feed.commit();
  const auto outputs_done = std::chrono::steady_clock::now();
  // 2. The manifest of this cut (the same on every rank).
  if (lockstep_ != nullptr) {
    std::optional<std::vector<FileState>> cut = lockstep_->cut_states();
    if (!cut) throw std::logic_error("lockstep layout: a cut while a broken input is not done");
    states = comm_.rank() == 0 ? std::move(*cut) : std::vector<FileState>{};
  }
  RunManifest m = merge_cut(comm_, base_, states, feed.retracted());
  if (order_ != nullptr) m.input_order = order_->input_order_cut(comm_);
  // Each rank's remembered kept copies and its retractions waiting for the
  // end pass (none once the end pass has cut them out): two tables of rows
  // of the generation, written by every rank collectively (no gather); the
  // manifest counts them.
  std::vector<store::InputOrderRow> order_rows, retracted_rows;
  if (m.input_order && !end_pass_) {
    for (const core::CrossInputRetraction& c : order_->remembered_copies()) {
      order_rows.push_back({c.tag, c.hash});
    }
    for (const core::CrossInputRetraction& c : order_->cross_input_retractions()) {
      retracted_rows.push_back({c.tag, c.hash});
    }
    // Counted as the store writes them: once each.
    std::sort(retracted_rows.begin(), retracted_rows.end(),
              [](const store::InputOrderRow& a, const store::InputOrderRow& b) {
                return std::tie(a.tag, a.hash.hi, a.hash.lo) <
                       std::tie(b.tag, b.hash.hi, b.hash.lo);
              });
    retracted_rows.erase(std::unique(retracted_rows.begin(), retracted_rows.end()),
                         retracted_rows.end());
  }
  if (m.input_order) {
    const std::vector<std::uint64_t> counts =
        comm_.allreduce_sum(std::vector<std::uint64_t>{order_rows.size(), retracted_rows.size()});
    m.input_order->kept_rows = counts[0];
    m.input_order->retracted_rows = counts[1];
  }
  if (end_pass_ && m.input_order) {
    for (const CutOutput& c : *end_pass_) m.inputs.at(c.input).output_length = c.length;
    if (renames_pending_) m.input_order->cut_outputs = *end_pass_;
  }
  std::vector<std::uint64_t> reject_lengths(comm_.usize(), 0);
  reject_lengths[comm_.urank()] = feed.reject_length();
  reject_lengths = comm_.allreduce_sum(reject_lengths);

  for (int r = 0; r < comm_.size(); ++r) {
    m.rejects.push_back(
        {reject_file_name(r, resumed_from_), reject_lengths[static_cast<std::size_t>(r)]});
  }
  m.counters += reduce_counters(comm_, local_counters(feed, set, router, rounds));
  const std::vector<SkippedInput> skipped = gather_skipped_inputs(comm_, feed.skipped());
  mark_skipped_inputs(m, skipped);
  if (lockstep_ != nullptr) {
    // A skipped input's cursor says where its skipped part starts, as the
    // tasks layout's does: its first break (the input is done by now; the
    // lines after the break were read, docs/inputs.md "The lockstep layout").
    std::vector<SkippedInput> first = skipped;
    std::sort(first.begin(), first.end(), [](const SkippedInput& a, const SkippedInput& b) {
      return std::tie(a.index, a.at.decompressed_offset) <
             std::tie(b.index, b.at.decompressed_offset);
    });
    for (auto k = first.rbegin(); k != first.rend(); ++k) {
      if (k->index < m.inputs.size()) m.inputs[k->index].cursor = k->at;
    }
  }

  // 3. Header and layers.
  io::CheckpointHeader h;
  h.tool_version = std::string(tool_version());
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.hash_seed = config_.hash_seed;
  h.bloom_layout = std::string(core::kBloomLayoutName);
  put_key_scheme(config_.key, h);
  h.params = set.bloom().params();
  h.generation = generation_;
  h.run_id = base_.run_id;
  h.finished = finished;
  h.split_inputs = has_split_inputs(m);  // marks the state for builds that predate split inputs
  h.retracted_records = has_retracted_records(m);  // and for builds before retractions
  h.input_order = m.input_order.has_value();       // and for builds before a resumable one
  h.input_order_rows = h.input_order;  // and for builds that read its kept copies from the text
  h.input_order_retracted_rows = h.input_order;  // and for those that read its retractions there
  put_window(config_.window, set, slot_clock_ != nullptr ? slot_clock_->progress() : 0, h);
  // The manifest text is rank 0's alone (the store writes rank 0's copy):
  // the other ranks only sent their cursors (the allreduce above).
  // A manifest that cannot be written (e.g. a path that is not UTF-8)
  // fails on every rank, agreed, before any collective write starts.
  std::string manifest_error;
  if (comm_.rank() == 0) {
    try {
      refresh_input_windows(m);  // docs/inputs.md "Replaced inputs"
      h.manifest_json = manifest_to_json(m);
      if (m.input_order) *m.input_order = InputOrderProgress{};  // in the text now
    } catch (const std::exception& e) {
      manifest_error = e.what();
    }
  }
  manifest_error = comm_.broadcast(manifest_error);
  if (!manifest_error.empty()) throw std::runtime_error(manifest_error);
  std::vector<io::CheckpointLayerInfo> layers;
  for (std::size_t i = 0; i < set.bloom().num_layers(); ++i) {
    layers.push_back({set.bloom().layer_geometry(i),
                      comm_.allreduce_sum(set.bloom().layer_inserted(i)),
                      set.bloom().layer_slot(i)});
  }

  // 4. Write, commit, re-base.
  comm::heartbeat();
  io::CheckpointWriteStats stats;
  const std::filesystem::path file = io::write_checkpoint(
      comm_, config_.state_dir, h, layers, set,
      {.keep = config_.keep_generations,
       .data_path = config_.checkpoint_data_path,
       .before_commit = fence_,
       .compaction = {config_.compaction_fanout, config_.max_runs, segment_ends},
       .forms = band_forms_,
       .input_order_rows = h.input_order_rows ? &order_rows : nullptr,
       .input_order_retracted = h.input_order_retracted_rows ? &retracted_rows : nullptr},
      &stats);
  warn_prune_error(stats.prune_error);
  comm::heartbeat();
  const auto written = std::chrono::steady_clock::now();
  // Re-basing maps the new run so that the next rounds' lookups find the
  // delta there; after a segment's last checkpoint no round follows (the
  // set's counts are the same either way), so the open costs nothing.
  if (!segment_ends) io::rebase_on_checkpoint(comm_, file, set);
  const auto end = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(end - start).count();
  const auto seconds_between = [](auto from, auto to) {
    return std::chrono::duration<double>(to - from).count();
  };
  const double phases[] = {seconds_between(start, outputs_done), stats.merge_seconds,
                           stats.io_seconds, stats.commit_seconds, seconds_between(written, end)};
  const std::vector<std::uint64_t> bytes =
      comm_.allreduce_sum(std::vector<std::uint64_t>{stats.bytes_written, stats.compaction_bytes});
  std::vector<double> slowest(std::begin(phases), std::end(phases));
  slowest.push_back(secs);
  for (double& v : slowest) v = comm_.allreduce_max(v);  // a few doubles per checkpoint
  metrics_.history.push_back({generation_, slowest.back(), bytes[0], bytes[1], stats.tier2_keys,
                              stats.run_keys, stats.runs, stats.merged_runs, slowest[0], slowest[1],
                              slowest[2], slowest[3], slowest[4]});
  metrics_.seconds_total += metrics_.history.back().seconds;
  metrics_.bytes_written += bytes[0];
  metrics_.compaction_bytes += bytes[1];
  ++generation_;
  ++written_;
  seconds_ += secs;
}

void Checkpointer::note_joined(std::size_t input, std::uint64_t output_length) {
  base_.inputs.at(input).done = true;
  base_.inputs[input].output_length = output_length;
}

void Checkpointer::set_end_pass(std::vector<CutOutput> cuts, bool renames_pending) {
  end_pass_ = std::move(cuts);
  renames_pending_ = renames_pending;
}

void Checkpointer::wait_for_pruning() const {
  if (comm_.rank() == 0) warn_prune_error(io::wait_for_background_prune());
}

}  // namespace bloomshard::app
