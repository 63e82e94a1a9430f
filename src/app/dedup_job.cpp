#include "bloomshard/app/dedup_job.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include "bloomshard/app/dedup_options.hpp"
#include "bloomshard/app/exit_codes.hpp"
#include "bloomshard/app/input_feed.hpp"
#include "bloomshard/app/input_manifest.hpp"
#include "bloomshard/app/job_metrics.hpp"
#include "bloomshard/app/output_guard.hpp"
#include "bloomshard/app/progress.hpp"
#include "bloomshard/app/round_batch.hpp"
#include "bloomshard/comm/environment.hpp"
#include "bloomshard/comm/router.hpp"
#include "bloomshard/core/two_tier.hpp"
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

// Rank 0 finds the inputs and prepares the output dir; every rank gets the
// input list or the error. First byte of the broadcast: exit code (0 = go).
std::string setup_on_rank0(const DedupConfig& c) {
  std::vector<fs::path> args(c.inputs.begin(), c.inputs.end());
  std::vector<io::InputFile> files;
  try {
    files = io::discover_inputs(args);
  } catch (const std::exception& e) {
    return std::string(1, static_cast<char>(kExitUsage)) + e.what();
  }
  if (files.empty()) return std::string(1, static_cast<char>(kExitUsage)) + "no input files found";
  const OutputCheck check = prepare_output_dir(c.output_dir, args, files, c.overwrite);
  if (!check.error.empty()) return std::string(1, static_cast<char>(check.exit_code)) + check.error;
  return std::string(1, '\0') + encode_inputs(files);
}

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
    const std::vector<io::InputFile> files = decode_inputs(std::string_view(setup).substr(1));
    if (config_.slices < world_.usize()) {
      if (world_.rank() == 0) {
        std::cerr << "bloomshard dedup: --slices " << config_.slices << " is less than the "
                  << world_.size() << " ranks; every rank must own a slice\n";
      }
      return kExitUsage;
    }

    std::uint64_t total_bytes = 0;
    for (const auto& f : files) total_bytes += f.size;
    const std::vector<int> owners = io::assign_files_to_ranks(files, world_.size());
    std::vector<io::InputFile> mine;
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (owners[i] == world_.rank()) mine.push_back(files[i]);
    }

    core::ScalableBloomParams params;
    params.initial_capacity = config_.capacity.value_or(estimate_capacity(files));
    params.fpr_target = config_.fpr;
    params.num_slices = config_.slices;
    core::TwoTierSet set(params,
                         core::slices_of_rank(world_.urank(), world_.usize(), config_.slices));
    set.bloom().set_auto_grow(false);  // layers open collectively, below

    InputFeed feed(config_, std::move(mine),
                   fs::path(config_.output_dir) / kRejectsDirName /
                       ("rank-" + std::to_string(world_.rank()) + ".jsonl"));
    comm::KeyRouter router(world_, config_.slices);
    ProgressReporter progress(world_.rank() == 0 ? config_.progress_seconds : 0, std::cerr);

    RoundBatch batch;
    comm::RoutedBatch routed;
    std::vector<core::Verdict> owner_verdicts;
    std::vector<core::Verdict> my_verdicts;
    PhaseSeconds phases;
    std::uint64_t rounds = 0;
    std::string input_error;
    bool failed_anywhere = false;

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

      // One reduction per round: termination, errors, layer growth, progress.
      t = Clock::now();
      const FeedCounters& c = feed.counters();
      const std::vector<std::uint64_t> g = world_.allreduce_sum(
          std::vector<std::uint64_t>{feed.exhausted() ? 0U : 1U, input_error.empty() ? 0U : 1U,
                                     set.bloom().newest_layer_inserted(), c.records, c.dropped,
                                     c.rejected, c.input_bytes_done});
      phases.route += seconds_since(t);
      if (set.bloom().layer_full(g[2])) set.bloom().add_layer();
      progress.maybe_report({g[3], g[4], g[5], g[6], total_bytes});
      if (g[1] != 0) {
        failed_anywhere = true;
        break;
      }
      if (g[0] == 0) break;
    }
    feed.finish();

    if (failed_anywhere) {
      if (!input_error.empty()) {
        std::cerr << "bloomshard dedup: rank " << world_.rank() << ": input error: " << input_error
                  << '\n';
      }
      world_.barrier();  // let the failing rank's message out before the exit
      return kExitFailure;
    }

    JobSummary summary =
        reduce_metrics(world_, feed, set, router.stats(), phases, rounds, seconds_since(start));
    summary.input_files = files.size();
    summary.input_bytes = total_bytes;
    const double reject_fraction =
        summary.feed.records
            ? static_cast<double>(summary.feed.rejected) / static_cast<double>(summary.feed.records)
            : 0.0;
    if (world_.rank() == 0) {
      if (!config_.metrics_path.empty()) {
        std::ofstream(config_.metrics_path, std::ios::trunc) << metrics_json(summary);
      }
      std::cout << summary_text(summary) << std::flush;
      if (reject_fraction > config_.max_reject_fraction) {
        std::cerr << "bloomshard dedup: " << summary.feed.rejected << " of " << summary.feed.records
                  << " records rejected (" << 100.0 * reject_fraction
                  << "%), more than --max-reject-fraction " << 100.0 * config_.max_reject_fraction
                  << "%; see " << (fs::path(config_.output_dir) / kRejectsDirName).string() << '\n';
      }
    }
    return reject_fraction > config_.max_reject_fraction ? kExitTooManyRejects : kExitOk;
  }

 private:
  comm::Communicator world_;
  DedupConfig config_;
};

}  // namespace

int run_dedup(const std::vector<std::string>& args) {
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
