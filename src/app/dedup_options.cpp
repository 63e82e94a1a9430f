#include "bloomshard/app/dedup_options.hpp"

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bloomshard/app/exit_codes.hpp"
#include "bloomshard/app/version.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;
namespace {

struct RawOptions {
  std::string normalize = "none";
  std::string checkpoint_io = "auto";
  std::string config_file;
  std::uint64_t capacity = 0;
  std::string on_input_error = "skip";
};

po::options_description describe(DedupConfig& c, RawOptions& raw) {
  po::options_description job(
      "dedup options (all except --config may also come from the job file)");
  // clang-format off
  job.add_options()
    ("input", po::value(&c.inputs)->composing()->multitoken(),
     "input files or directories (walked recursively; names starting with '_' or '.' are "
     "skipped); repeatable")
    ("output", po::value(&c.output_dir), "output directory; mirrors the inputs' relative paths")
    ("key-field", po::value(&c.key_field)->default_value(c.key_field),
     "JSONL key field, dotted path for nested fields (plain-line files use the whole line)")
    ("capacity", po::value(&raw.capacity),
     "expected distinct keys (first layer); the filter grows by layers past it. "
     "Default: estimated from the input bytes")
    ("fpr", po::value(&c.fpr)->default_value(c.fpr), "compound Bloom false-positive target")
    ("slices", po::value(&c.slices)->default_value(c.slices),
     "virtual slices P (fixed for the filter's life; >= ranks)")
    ("normalize", po::value(&raw.normalize)->default_value(raw.normalize),
     "key normalization: none | nfc | nfc-casefold (v2, canonical caseless matching) | "
     "nfc-casefold/v1 (legacy); a state keeps the version it was saved with (docs/keys.md)")
    ("batch-bytes", po::value(&c.batch_bytes)->default_value(c.batch_bytes),
     "input bytes each rank reads per round (bounds round memory)")
    ("max-key-bytes", po::value(&c.max_key_bytes)->default_value(c.max_key_bytes),
     "longer keys are rejected")
    ("max-line-bytes", po::value(&c.max_line_bytes)->default_value(c.max_line_bytes),
     "longer lines are rejected")
    ("max-reject-fraction",
     po::value(&c.max_reject_fraction)->default_value(c.max_reject_fraction),
     "fail the job (exit 3) when rejected/records exceeds this")
    ("metrics", po::value(&c.metrics_path), "write the run's metrics as JSON here (rank 0)")
    ("progress", po::value(&c.progress_seconds)->default_value(c.progress_seconds),
     "seconds between progress lines on stderr (0: none)")
    ("overwrite", po::bool_switch(&c.overwrite),
     "replace the outputs of an earlier run in --output")
    ("hash-seed", po::value(&c.hash_seed)->default_value(c.hash_seed),
     "XXH3 seed (0: the built-in default); fixed for the filter's life")
    ("state", po::value(&c.state_dir),
     "checkpoint dir: the filter, input cursors and output lengths are saved there and a "
     "restarted job resumes from its LATEST generation (on any rank count)")
    ("checkpoint-every", po::value(&c.checkpoint_every)->default_value(c.checkpoint_every),
     "seconds between checkpoints (fractions allowed; 0: only on rounds, signals, the end)")
    ("checkpoint-rounds", po::value(&c.checkpoint_rounds)->default_value(c.checkpoint_rounds),
     "rounds between checkpoints (0: off)")
    ("max-delta-bytes", po::value(&c.max_delta_bytes)->default_value(c.max_delta_bytes),
     "tier-2 key bytes held in memory per rank since the last checkpoint; more forces one")
    ("keep-generations", po::value(&c.keep_generations)->default_value(c.keep_generations),
     "checkpoint generations kept in --state (>= 1)")
    ("checkpoint-io", po::value(&raw.checkpoint_io)->default_value(raw.checkpoint_io),
     "how checkpoint data reach the file: direct (O_DIRECT, bypasses the page cache) | "
     "mpiio (collective MPI-IO) | auto (direct when the file system allows it)")
    // Broken and changed inputs (docs/reliability.md).
    ("on-input-error", po::value(&raw.on_input_error)->default_value(raw.on_input_error),
     "an input that cannot be read on (truncated/corrupt .gz/.zst, unreadable): skip (keep "
     "the records before the damage, record the rest as skipped, go on) | fail (exit 1, "
     "checkpointed first with --state)")
    ("max-skipped-inputs",
     po::value(&c.max_skipped_inputs)->default_value(c.max_skipped_inputs),
     "with skip: more broken inputs than this in one run stops the job (exit 3, checkpointed; "
     "the input over the limit is not skipped)")
    ("revalidate-inputs", po::bool_switch(&c.revalidate_inputs),
     "on resume, accept a started input whose size or mtime changed (touch, rsync without -t, "
     "HSM restore, a damaged file replaced) if the records read from it so far are the same "
     "bytes (digest check; costs one read of that prefix on rank 0)");
  po::options_description generic("general");
  generic.add_options()
    ("help,h", "show this help")
    ("version", "show the version")
    ("config", po::value(&raw.config_file), "INI job file with the options above (see jobs/)");
  // clang-format on
  po::options_description all;
  all.add(generic).add(job);
  return all;
}

std::string validate(const DedupConfig& c) {
  if (c.inputs.empty()) return "no --input given";
  if (c.output_dir.empty()) return "no --output given";
  if (!(c.fpr > 0.0 && c.fpr <= 0.5)) return "--fpr must be in (0, 0.5]";
  if (c.slices < 1 || c.slices > core::kMaxSlices) {
    return "--slices must be in [1, " + std::to_string(core::kMaxSlices) + "]";
  }
  if (c.capacity && *c.capacity == 0) return "--capacity must be >= 1";
  if (c.batch_bytes < 4096) return "--batch-bytes must be >= 4096";
  if (c.batch_bytes > (1ULL << 30)) return "--batch-bytes must be <= 1 GiB (MPI counts are int)";
  if (c.max_key_bytes < 1 || c.max_key_bytes > (16ULL << 20)) {
    return "--max-key-bytes must be in [1, 16 MiB]";
  }
  if (c.max_line_bytes < c.max_key_bytes) return "--max-line-bytes must be >= --max-key-bytes";
  if (!(c.max_reject_fraction >= 0.0 && c.max_reject_fraction <= 1.0)) {
    return "--max-reject-fraction must be in [0, 1]";
  }
  if (c.progress_seconds < 0) return "--progress must be >= 0";
  if (c.checkpoint_every < 0) return "--checkpoint-every must be >= 0";
  if (c.keep_generations < 1) return "--keep-generations must be >= 1";
  if (c.max_delta_bytes < (1ULL << 20)) return "--max-delta-bytes must be >= 1 MiB";
  if (c.state_dir.empty() && (c.checkpoint_every > 0 || c.checkpoint_rounds > 0)) {
    return "--checkpoint-every/--checkpoint-rounds need --state";
  }
  for (const auto& in : c.inputs) {
    if (!std::filesystem::exists(in)) return "input '" + in + "' does not exist";
  }
  return {};
}

}  // namespace

ParsedDedup parse_dedup_options(const std::vector<std::string>& args) {
  ParsedDedup out;
  RawOptions raw;
  const po::options_description all = describe(out.config, raw);
  try {
    po::variables_map vm;
    // Command line first: a value stored first wins over the job file's.
    po::store(po::command_line_parser(args).options(all).run(), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "usage: bloomshard dedup --input PATH... --output DIR [options]\n\n" << all;
      out.exit_code = kExitOk;
      out.message = text.str();
      return out;
    }
    if (vm.count("version")) {
      out.exit_code = kExitOk;
      out.message = version_text();
      return out;
    }
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      std::ifstream file(path);
      if (!file) {
        out.exit_code = kExitUsage;
        out.message = "cannot open job file '" + path + "'";
        return out;
      }
      po::parsed_options from_file = po::parse_config_file(file, all);
      if (vm.count("input")) {  // --input is composing; the command line's list wins whole
        std::erase_if(from_file.options,
                      [](const po::option& o) { return o.string_key == "input"; });
      }
      po::store(from_file, vm);
    }
    po::notify(vm);
    out.config.normalize = core::parse_policy(raw.normalize);
    out.config.normalize_pinned = raw.normalize.find('/') != std::string::npos;
    const auto data_path = io::parse_checkpoint_data_path(raw.checkpoint_io);
    if (!data_path) {
      throw std::invalid_argument("--checkpoint-io must be auto, direct or mpiio, not '" +
                                  raw.checkpoint_io + "'");
    }
    out.config.checkpoint_data_path = *data_path;
    if (raw.on_input_error == "skip") {
      out.config.on_input_error = OnInputError::kSkip;
    } else if (raw.on_input_error == "fail") {
      out.config.on_input_error = OnInputError::kFail;
    } else {
      throw std::invalid_argument("--on-input-error must be fail or skip, not '" +
                                  raw.on_input_error + "'");
    }
    if (vm.count("capacity")) out.config.capacity = raw.capacity;
    if (out.config.hash_seed == 0) out.config.hash_seed = core::kDefaultHashSeed;
  } catch (const std::exception& e) {
    out.exit_code = kExitUsage;
    out.message = std::string("bad option: ") + e.what();
    return out;
  }
  if (std::string problem = validate(out.config); !problem.empty()) {
    out.exit_code = kExitUsage;
    out.message = problem;
  }
  return out;
}

}  // namespace bloomshard::app
