#include "bloomshard/app/dedup_options.hpp"

#include <boost/program_options.hpp>
#include <filesystem>
#include <sstream>

#include "bloomshard/app/exact_options.hpp"
#include "bloomshard/app/exit_codes.hpp"
#include "bloomshard/app/paragraph_options.hpp"
#include "bloomshard/app/version.hpp"
#include "bloomshard/app/window_slots.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/io/hdf5_parallel.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;
namespace {

struct RawOptions {
  std::vector<std::string> key_fields;
  std::string normalize = "none";
  std::string text_normalize = "none";
  std::string key_digest = "none";
  std::string missing_field = "reject";
  std::string checkpoint_io = "auto";
  std::string progress_style = "auto";
  std::string exchange = "auto";
  std::string config_file;
  std::uint64_t capacity = 0;
  std::string fencing = "auto";
  std::string on_input_error = "skip";
  std::string split_inputs = "auto";
  std::string mode = "filter";
  std::string annotate_format = "bloomshard";
  ParagraphFlags paragraph;  // --unit paragraph (paragraph_options.hpp)
  std::uint32_t window = 0;  // issue 13 windows: app/window_slots.hpp
  std::uint64_t slot_records = 0;
  std::string slot_every;
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
    ("mode", po::value(&raw.mode)->default_value(raw.mode),
     "filter (write the kept records) | annotate (write per input an attribute file at the "
     "mirrored path, same compression: one JSON line per input line, rejects included; "
     "docs/commands.md)")
    ("annotate-format", po::value(&raw.annotate_format)->default_value(raw.annotate_format),
     "with --mode annotate: bloomshard ({\"key\", \"duplicate\", \"reject\"}) | dolma "
     "({\"id\", \"attributes\": {\"bloomshard_duplicate\": [[0, chars, 1.0]] or []}}, "
     "for `dolma mix`)")
    ("key-field", po::value(&raw.key_fields)->composing(),
     "JSONL key field, dotted path for nested fields (default id; plain-line files use the "
     "whole line); repeatable: the key is the tuple of the fields, length-prefixed "
     "(docs/keys.md)")
    ("missing-field", po::value(&raw.missing_field)->default_value(raw.missing_field),
     "a record without a key field: reject (to the reject file) | empty (the field's value "
     "is the empty string)")
    ("text-normalize", po::value(&raw.text_normalize)->default_value(raw.text_normalize),
     "content-key text rules, before --normalize: none | ws (trim, collapse Unicode "
     "White_Space runs to one space) | ws-lower (ws, then nfc-casefold); docs/keys.md")
    ("key-digest", po::value(&raw.key_digest)->default_value(raw.key_digest),
     "none | xxh3-128 | sha256: the key becomes the 16- or 32-byte digest of the normalized "
     "field(s), so tier 2 stores a fixed size per key and no field is too long")
    ("capacity", po::value(&raw.capacity),
     "expected distinct keys (first layer); the filter grows by layers past it. "
     "Default: estimated from the input bytes")
    ("fpr", po::value(&c.fpr)->default_value(c.fpr), "compound Bloom false-positive target")
    ("slices", po::value(&c.slices)->default_value(c.slices),
     "virtual slices P, fixed for the filter's life, >= ranks (0: a power of two >= 4096, "
     "128 x ranks and capacity/65536)")
    ("normalize", po::value(&raw.normalize)->default_value(raw.normalize),
     "key normalization: none | nfc | nfc-casefold (v2, canonical caseless matching) | "
     "nfc-casefold/v1 (legacy); a state keeps the version it was saved with (docs/keys.md)")
    ("batch-bytes", po::value(&c.batch_bytes)->default_value(c.batch_bytes),
     "input bytes each rank reads per round (bounds round memory; 0: 4 MiB up to 64 ranks, "
     "8 MiB above)")
    ("max-key-bytes", po::value(&c.max_key_bytes)->default_value(c.max_key_bytes),
     "longer keys are rejected (not with --key-digest: a digest key has a fixed size)")
    ("max-line-bytes", po::value(&c.max_line_bytes)->default_value(c.max_line_bytes),
     "longer lines are rejected")
    ("max-exchange-bytes",
     po::value(&c.max_exchange_bytes)->default_value(c.max_exchange_bytes),
     "payload bytes a rank sends or receives in one exchange; a larger round (hot keys, many "
     "ranks) is split into sub-rounds (4096 .. 512 MiB)")
    ("exchange", po::value(&raw.exchange)->default_value(raw.exchange),
     "all-to-all over all ranks (flat), or in two steps, inside each node then across nodes "
     "(node: L-1 + N-1 messages per rank instead of R-1); auto: node from 1024 ranks on")
    ("max-reject-fraction",
     po::value(&c.max_reject_fraction)->default_value(c.max_reject_fraction),
     "fail the job (exit 3) when rejected/records exceeds this")
    ("metrics", po::value(&c.metrics_path), "write the run's metrics as JSON here (rank 0)")
    ("progress", po::value(&c.progress_seconds)->default_value(c.progress_seconds),
     "seconds between progress lines on stderr (0: none)")
    ("progress-style", po::value(&raw.progress_style)->default_value(raw.progress_style),
     "auto | bar | lines: auto draws a live bar when stderr reaches a terminal (also through "
     "mpirun), else prints lines every --progress seconds")
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
     "tier-2 delta memory per rank since the last checkpoint (key bytes + ~22 B/key of "
     "index and record headers); more forces one")
    ("keep-generations", po::value(&c.keep_generations)->default_value(c.keep_generations),
     "checkpoint generations kept in --state (>= 1)")
    ("checkpoint-io", po::value(&raw.checkpoint_io)->default_value(raw.checkpoint_io),
     "how checkpoint data reach the file: direct (O_DIRECT, bypasses the page cache) | "
     "mpiio (collective MPI-IO) | auto (direct when the file system allows it)")
    // Checkpoint store (issue 10).
    ("compaction-fanout", po::value(&c.compaction_fanout)->default_value(c.compaction_fanout),
     "tier-2 runs of one level a checkpoint merges into one run of the next (>= 2); "
     "more: fewer rewrites, more runs per lookup")
    ("max-runs", po::value(&c.max_runs)->default_value(c.max_runs),
     "tier-2 runs a checkpoint generation may reference (>= 2); a Bloom positive "
     "searches each")
    // Rolling windows (issue 13, docs/commands.md "Windows").
    ("window", po::value(&raw.window),
     "keep only the last N slots of history (1..32; needs --state): a key is a duplicate when "
     "it occurred in the current slot or the N before it; a slot is one run on the state, "
     "unless --slot-records or --slot-every")
    ("slot-records", po::value(&raw.slot_records), "with --window: a new slot every M records")
    ("slot-every", po::value(&raw.slot_every),
     "with --window: a new slot every DURATION of job wall time (e.g. 90s, 30m, 24h)")
    ("mpiio-hints", po::value(&c.mpiio_hints),
     "MPI-IO hints for checkpoint files, key=value[,key=value...] (e.g. Lustre "
     "striping_factor=8,striping_unit=4194304, cb_nodes=4); default: $BLOOMSHARD_MPIIO_HINTS")
    // Faults: one writer per run, no hang (docs/reliability.md).
    ("lock-wait", po::value(&c.lock_wait)->default_value(c.lock_wait),
     "seconds to wait for an earlier attempt of this run (orphaned ranks included) to end "
     "before refusing with exit 5")
    ("stall-timeout", po::value(&c.stall_timeout)->default_value(c.stall_timeout),
     "seconds without progress (a stuck file system, a silent peer) after which a rank "
     "reports and ends the job (0: off)")
    ("fencing", po::value(&raw.fencing)->default_value(raw.fencing),
     "how the run's lock file fences earlier attempts: auto (fcntl locks, else a lease "
     "file) | fcntl | lease")
    // Broken and changed inputs (docs/reliability.md).
    ("on-input-error", po::value(&raw.on_input_error)->default_value(raw.on_input_error),
     "an input that cannot be read on (truncated/corrupt .gz/.zst, unreadable): skip (keep "
     "the records before the damage, record the rest as skipped, go on) | fail (exit 1, "
     "checkpointed first with --state)")
    // Big single files (issue 12, docs/inputs.md).
    ("split-inputs", po::value(&raw.split_inputs)->default_value(raw.split_inputs),
     "auto: at a run's first start, cut each uncompressed input larger than --split-min-bytes "
     "into line-aligned byte ranges that several ranks read (filter mode; outputs stay "
     "identical) | off: every input is read whole by one rank")
    ("split-min-bytes", po::value(&c.split_min_bytes)->default_value(c.split_min_bytes),
     "smallest input that is split, and smallest range (>= 4096)")
    ("max-skipped-inputs",
     po::value(&c.max_skipped_inputs)->default_value(c.max_skipped_inputs),
     "with skip: more broken inputs than this in one run stops the job (exit 3, checkpointed; "
     "the input over the limit is not skipped)")
    ("revalidate-inputs", po::bool_switch(&c.revalidate_inputs),
     "on resume (or a finished run started again), accept a started or finished input that "
     "changed (touch, rsync without -t, HSM restore, a damaged file replaced, records appended) "
     "if the records read from it so far are the same bytes (digest check; costs one read of "
     "that prefix on rank 0); what follows them is read, a finished input's appended records "
     "too");
  po::options_description generic("general");
  generic.add_options()
    ("help,h", "show this help")
    ("version", "show the version")
    ("config", po::value(&raw.config_file), "INI job file with the dedup options below, one `name = value` a line (see jobs/)");
  // clang-format on
  add_paragraph_options(job, raw.paragraph);
  po::options_description all;
  all.add(generic).add(job);
  return all;
}

std::string validate(const DedupConfig& c) {
  if (c.inputs.empty()) return "no --input given";
  if (std::string p = core::key_scheme_problem(c.key); !p.empty()) return "--key-field: " + p;
  if (c.output_dir.empty()) return "no --output given";
  if (!(c.fpr > 0.0 && c.fpr <= 0.5)) return "--fpr must be in (0, 0.5]";
  if (c.slices > core::kMaxSlices) {
    return "--slices must be 0 (automatic) or in [1, " + std::to_string(core::kMaxSlices) + "]";
  }
  if (c.capacity && *c.capacity == 0) return "--capacity must be >= 1";
  if (c.batch_bytes != 0 && c.batch_bytes < 4096) return "--batch-bytes must be 0 or >= 4096";
  if (c.batch_bytes > (1ULL << 30)) return "--batch-bytes must be <= 1 GiB (MPI counts are int)";
  if (c.max_key_bytes < 1 || c.max_key_bytes > (16ULL << 20)) {
    return "--max-key-bytes must be in [1, 16 MiB]";
  }
  if (c.max_line_bytes < c.max_key_bytes) return "--max-line-bytes must be >= --max-key-bytes";
  // A sub-round may overshoot the budget by one key per sender (up to
  // R x (20 B + max key bytes): 1.07 GB at 16384 ranks and 64 KiB keys);
  // 512 MiB leaves room for that below MPI's 2 GiB int counts.
  if (c.split_min_bytes < 4096) return "--split-min-bytes must be >= 4096";
  if (c.max_exchange_bytes < 4096 || c.max_exchange_bytes > (512ULL << 20)) {
    return "--max-exchange-bytes must be in [4096, 536870912]";
  }
  if (!(c.max_reject_fraction >= 0.0 && c.max_reject_fraction <= 1.0)) {
    return "--max-reject-fraction must be in [0, 1]";
  }
  if (c.progress_seconds < 0) return "--progress must be >= 0";
  if (c.checkpoint_every < 0) return "--checkpoint-every must be >= 0";
  if (c.keep_generations < 1) return "--keep-generations must be >= 1";
  if (c.compaction_fanout < 2) return "--compaction-fanout must be >= 2";
  if (c.max_runs < 2) return "--max-runs must be >= 2";
  try {
    (void)io::parse_mpiio_hints(c.mpiio_hints);
  } catch (const std::exception& e) {
    return std::string("--mpiio-hints: ") + e.what();
  }
  if (c.max_delta_bytes < (1ULL << 20)) return "--max-delta-bytes must be >= 1 MiB";
  if (!(c.lock_wait >= 0 && c.lock_wait <= 86400)) return "--lock-wait must be in [0, 86400]";
  if (!(c.stall_timeout == 0 || (c.stall_timeout >= 1 && c.stall_timeout <= 86400))) {
    return "--stall-timeout must be 0 (off) or in [1, 86400]";
  }
  if (c.state_dir.empty() && (c.checkpoint_every > 0 || c.checkpoint_rounds > 0)) {
    return "--checkpoint-every/--checkpoint-rounds need --state";
  }
  if (c.state_dir.empty() && c.window.window != 0) return "--window needs --state";
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
    po::store(parse_exact_command_line(args, all), vm);
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
      po::parsed_options from_file =
          parse_job_file(vm["config"].as<std::string>(), all, {"config", "help", "version"});
      // --input and --key-field are composing; the command line's list wins whole.
      for (const char* name : {"input", "key-field"}) {
        if (vm.count(name)) {
          std::erase_if(from_file.options,
                        [name](const po::option& o) { return o.string_key == name; });
        }
      }
      po::store(from_file, vm);
    }
    po::notify(vm);
    for (const auto& [name, value] : vm) {
      if (!value.defaulted()) out.config.explicit_options.push_back(name);
    }
    core::KeyScheme& key = out.config.key;
    if (!raw.key_fields.empty()) key.fields = raw.key_fields;
    key.normalize = core::parse_policy(raw.normalize);
    // Named after the option, so the message says which one to fix.
    const auto named = [](const char* option, auto parse) {
      try {
        return parse();
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string(option) + ": " + e.what());
      }
    };
    key.text =
        named("--text-normalize", [&] { return core::parse_text_normalize(raw.text_normalize); });
    key.digest = named("--key-digest", [&] { return core::parse_key_digest(raw.key_digest); });
    if (raw.missing_field == "reject") {
      key.missing = core::MissingField::kReject;
    } else if (raw.missing_field == "empty") {
      key.missing = core::MissingField::kEmpty;
    } else {
      throw std::invalid_argument("--missing-field must be reject or empty, not '" +
                                  raw.missing_field + "'");
    }
    apply_paragraph_flags(raw.paragraph, key);
    out.config.normalize_pinned = raw.normalize.find('/') != std::string::npos;
    const auto data_path = io::parse_checkpoint_data_path(raw.checkpoint_io);
    if (!data_path) {
      throw std::invalid_argument("--checkpoint-io must be auto, direct or mpiio, not '" +
                                  raw.checkpoint_io + "'");
    }
    out.config.checkpoint_data_path = *data_path;
    const auto style = parse_progress_style(raw.progress_style);
    if (!style) {
      throw std::invalid_argument("--progress-style must be auto, bar or lines, not '" +
                                  raw.progress_style + "'");
    }
    out.config.progress_style = *style;
    const auto exchange = comm::parse_exchange_mode(raw.exchange);
    if (!exchange) {
      throw std::invalid_argument("--exchange must be flat, node or auto, not '" + raw.exchange +
                                  "'");
    }
    out.config.exchange = *exchange;
    const auto fencing = parse_fencing_mode(raw.fencing);
    if (!fencing) {
      throw std::invalid_argument("--fencing must be auto, fcntl or lease, not '" + raw.fencing +
                                  "'");
    }
    out.config.fencing = *fencing;
    if (raw.on_input_error == "skip") {
      out.config.on_input_error = OnInputError::kSkip;
    } else if (raw.on_input_error == "fail") {
      out.config.on_input_error = OnInputError::kFail;
    } else {
      throw std::invalid_argument("--on-input-error must be fail or skip, not '" +
                                  raw.on_input_error + "'");
    }
    if (raw.split_inputs == "auto" || raw.split_inputs == "off") {
      out.config.split_inputs = raw.split_inputs == "auto";
    } else {
      throw std::invalid_argument("--split-inputs must be auto or off, not '" + raw.split_inputs +
                                  "'");
    }
    const auto mode = parse_run_mode(raw.mode);
    const auto annotate_format = parse_annotate_format(raw.annotate_format);
    if (!mode)
      throw std::invalid_argument("--mode must be filter or annotate, not '" + raw.mode + "'");
    if (!annotate_format) {
      throw std::invalid_argument("--annotate-format must be bloomshard or dolma, not '" +
                                  raw.annotate_format + "'");
    }
    out.config.annotate = {*mode, *annotate_format};
    if (vm.count("capacity")) out.config.capacity = raw.capacity;
    out.config.window = parse_window_options(raw.window, raw.slot_records, raw.slot_every);
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
