#include "app/run/job_start.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "app/feed/input_windows.hpp"
#include "app/guard/output_guard.hpp"
#include "app/run/input_order_manifest.hpp"
#include "app/run/job_setup.hpp"
#include "app/split/lockstep_layout.hpp"
#include "app/split/split_inputs.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "comm/heartbeat.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// A resume continues the loaded manifest's inputs, rejects and counters;
// an incremental run keeps today's inputs and starts its counters at 0.
void adopt_resumed_manifest(const comm::Communicator& world, const DedupConfig& config,
                            const std::string& manifest_json,
                            const std::vector<io::InputFile>& files, RunManifest& into) {
  RunManifest m = manifest_from_json(manifest_json);
  // Rank 0 checked every change when it planned the start.
  const RevalidateFn trusted = [](const InputProgress&, const io::InputFile&) {
    return std::string();
  };
  const RevalidateFn* revalidated = config.revalidate_inputs ? &trusted : nullptr;
  // An input replaced under its saved size and mtime (a skipped input
  // repaired in place) shows only in its window digest. Rank 0 reads the
  // windows, as its start decision did, and the other ranks follow its
  // answer without reading files; without --revalidate-inputs the decision
  // refused any such input. One mark per input of `m`, in its order.
  std::string replaced(m.inputs.size(), '0');
  WindowCheckFn windows;
  if (config.revalidate_inputs) {
    if (world.rank() == 0) {
      for (std::size_t i = 0; i < m.inputs.size(); ++i) {
        const InputProgress& p = m.inputs[i];
        const auto now = std::find_if(files.begin(), files.end(), [&](const io::InputFile& f) {
          return f.relative_path == p.file.relative_path;
        });
        if (now != files.end() && now->size == p.file.size && now->mtime_ns == p.file.mtime_ns &&
            !window_difference(p, *now).empty()) {
          replaced[i] = '1';
        }
      }
    }
    replaced = world.broadcast(replaced);
    windows = [&](const InputProgress& p, const io::InputFile&) {
      const auto i = static_cast<std::size_t>(&p - m.inputs.data());
      return replaced.at(i) == '1' ? std::string("its window digest is not the saved one")
                                   : std::string();
    };
  }
  const WindowCheckFn* checked = config.revalidate_inputs ? &windows : nullptr;
  for (const std::string& note : reconcile_inputs(m, files, revalidated, checked).notes) {
    if (world.rank() == 0) std::cerr << "bloomshard dedup: " << note << '\n';
  }
  into.inputs = std::move(m.inputs);
  into.rejects = std::move(m.rejects);
  into.counters = std::move(m.counters);
  into.run_id = std::move(m.run_id);
  into.run_ordinal = m.run_ordinal;
  into.input_order = std::move(m.input_order);  // --kept-copy first: the owners' saved memory
}

// Collective, at a resume of a --kept-copy first state whose kept copies
// are rows of the generation `file` (input_order version 2 or 3): this
// rank's `rows` (its owned slices', checked against their checksums by the
// load) become the manifest's `kept`, each checked against the manifest's
// inputs and watermark, and all of them against the count the manifest
// recorded; in version 3 its `retracted` rows become the manifest's
// `retracted` the same way (each tag a record read at the cut). Throws on
// every rank, naming the file and the row, if any rank finds one wrong.
void adopt_input_order_rows(const comm::Communicator& world, const fs::path& file,
                            const io::CheckpointHeader& h, std::vector<store::InputOrderRow> rows,
                            std::vector<store::InputOrderRow> retracted, RunManifest& m) {
  if (!m.input_order || !kept_as_rows(m.input_order->version)) return;
  InputOrderProgress& order = *m.input_order;
  const bool retractions = retracted_as_rows(order.version);
  std::string err = input_order_mark_problem(h, m);
  const std::uint32_t p = h.params.num_slices;
  order.kept.clear();
  order.kept.reserve(rows.size());
  for (std::size_t j = 0; j < rows.size() && err.empty(); ++j) {
    const core::CrossInputRetraction c{rows[j].tag, rows[j].hash};
    err = kept_row_problem(c, m, order.watermark, core::slice_of(c.hash, p), file.string());
    order.kept.push_back(c);
  }
  if (retractions) {
    order.retracted.clear();
    order.retracted.reserve(retracted.size());
    for (std::size_t j = 0; j < retracted.size() && err.empty(); ++j) {
      const core::CrossInputRetraction c{retracted[j].tag, retracted[j].hash};
      err = retracted_row_problem(c, m, core::slice_of(c.hash, p), file.string());
      order.retracted.push_back(c);
    }
  }
  // The first failing rank's text, on every rank (the one rank 0 prints).
  const std::uint64_t first = ~world.allreduce_max(err.empty() ? 0 : ~std::uint64_t{world.urank()});
  if (first < world.usize())
    throw std::runtime_error(world.broadcast(err, static_cast<int>(first)));
  const std::vector<std::uint64_t> total =
      world.allreduce_sum(std::vector<std::uint64_t>{rows.size(), retracted.size()});
  if (total[0] != order.kept_rows) {
    throw std::runtime_error(file.string() + ": dataset " + store::kInputOrderRows + " holds " +
                             std::to_string(total[0]) + " rows, the manifest's input_order " +
                             std::to_string(order.kept_rows));
  }
  if (retractions && total[1] != order.retracted_rows) {
    throw std::runtime_error(file.string() + ": dataset " + store::kInputOrderRetractedRows +
                             " holds " + std::to_string(total[1]) +
                             " rows, the manifest's input_order " +
                             std::to_string(order.retracted_rows));
  }
}

// Collective: generation `g` of the plan's run loaded into `s`; false when
// its header names another run (rank 0 said so). Throws what the load throws.
bool load_generation(const comm::Communicator& world, const DedupConfig& config,
                     const StartPlan& plan, const std::vector<io::InputFile>& files,
                     core::SliceRange owned, std::uint64_t g, Start& s) {
  const fs::path path = io::generation_path(config.state_dir, g);
  const bool confirms = config.key.confirm_jaccard > 0.0;
  io::LoadedCheckpoint loaded = io::load_checkpoint(world, path, owned, true, confirms);
  const std::string foreign =
      foreign_generation(plan, g, loaded.summary.header.run_id, loaded.summary.header.finished);
  if (!foreign.empty()) {
    if (world.rank() == 0) std::cerr << "bloomshard dedup: " << foreign << '\n';
    return false;
  }
  s.set = std::move(loaded.set);
  s.forms = std::move(loaded.forms);
  s.resumed_from = g;
  s.window_progress = loaded.summary.header.window_slot_progress;
  if (plan.kind == StartKind::kResume) {
    adopt_resumed_manifest(world, config, loaded.summary.header.manifest_json, files, s.manifest);
    adopt_input_order_rows(world, path, loaded.summary.header, std::move(loaded.input_order_rows),
                           std::move(loaded.input_order_retracted), s.manifest);
  } else {  // an incremental run: the next run of the state
    s.manifest.run_ordinal =
        manifest_from_json(loaded.summary.header.manifest_json).run_ordinal + 1;
  }
  if (world.rank() == 0) {
    std::cerr << "bloomshard dedup: "
              << (plan.kind == StartKind::kResume ? "resuming" : "incremental run on")
              << " checkpoint generation " << g << " (" << path.string() << ")\n";
  }
  return true;
}

}  // namespace

std::optional<Start> load_start(const comm::Communicator& world, const DedupConfig& config,
                                const StartPlan& plan, const std::vector<io::InputFile>& files,
                                core::SliceRange owned, std::uint32_t slices) {
  Start s;
  s.manifest.run_id = plan.run_id;
  s.manifest.output_dir = fs::absolute(config.output_dir).lexically_normal().string();
  s.manifest.mode = run_mode_label(config.annotate);  // pinned for resume (run_state.cpp)
  for (const auto& f : files) s.manifest.inputs.push_back({f, {}, false, 0, {}, {}, {}});
  if (plan.kind != StartKind::kResume) split_at_first_start(world, config, s.manifest);
  if (plan.kind == StartKind::kFresh) {
    core::ScalableBloomParams params;
    params.initial_capacity = initial_capacity(config, files);
    params.fpr_target = config.fpr;
    params.num_slices = slices;
    s.set = std::make_unique<core::TwoTierSet>(params, owned);
    return s;
  }
  // --- fallback only within the same run: one line per skipped generation.
  for (const std::uint64_t g : plan.candidates) {
    comm::heartbeat();
    try {
      if (load_generation(world, config, plan, files, owned, g, s)) return s;
    } catch (const std::exception& e) {
      if (world.rank() == 0) {
        std::cerr << "bloomshard dedup: warning: checkpoint generation " << g
                  << " cannot be used: " << one_line(e.what())
                  << "; falling back to an older one\n";
      }
    }
  }
  if (world.rank() == 0) {
    std::cerr << "bloomshard dedup: no checkpoint generation in '" << config.state_dir
              << "' verifies; the run cannot resume. Inspect it with `bloomshard verify "
                 "--state DIR`, or rebuild by running again with an empty --state\n";
  }
  return std::nullopt;
}

namespace {

// Rank 0: the ranges of `m` as "input begin end" lines, or "!" and why not.
std::string split_on_rank0(const DedupConfig& config, int ranks, RunManifest& m) {
  std::string text;
  try {
    split_large_inputs(m, ranks, config.split_min_bytes);
    for (std::size_t i = 0; i < m.inputs.size(); ++i) {
      for (const RangeProgress& r : m.inputs[i].ranges) {
        text +=
            std::to_string(i) + ' ' + std::to_string(r.begin) + ' ' + std::to_string(r.end) + '\n';
      }
    }
  } catch (const std::exception& e) {
    text = std::string("!") + e.what();
  }
  return text;
}

void report_split(const DedupConfig& config, const RunManifest& m) {
  std::size_t split = 0;
  std::size_t ranges = 0;
  for (const InputProgress& p : m.inputs) {
    split += p.ranges.empty() ? 0U : 1U;
    ranges += p.ranges.size();
  }
  if (split > 0) {
    std::cerr << "bloomshard dedup: split " << split << " input(s) into " << ranges
              << " line-aligned ranges (--split-min-bytes " << config.split_min_bytes << ")\n";
  }
}

}  // namespace

void split_at_first_start(const comm::Communicator& world, const DedupConfig& config,
                          RunManifest& m) {
  if (!config.split_inputs || config.annotate.mode != RunMode::kFilter) return;
  // Blocks, not ranges, spread such a run's inputs over the ranks.
  if (lockstep_layout_applies(config, m)) return;
  std::string text = world.rank() == 0 ? split_on_rank0(config, world.size(), m) : "";
  text = world.broadcast(text);
  if (text.starts_with('!')) throw std::runtime_error("cannot split inputs: " + text.substr(1));
  if (world.rank() == 0) {
    report_split(config, m);
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

void prepare_resumed_outputs(const comm::Communicator& world, const DedupConfig& config,
                             const RunManifest& m) {
  if (world.rank() == 0) {
    const fs::path rejects = fs::path(config.output_dir) / kRejectsDirName;
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
      const fs::path out = io::output_path_for(config.output_dir, p.file.relative_path);
      if (p.done && fs::exists(out)) fs::resize_file(out, p.output_length);
    }
  }
  world.barrier();
}

}  // namespace bloomshard::app
