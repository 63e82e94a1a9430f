#include "app/options/dedup_options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <sstream>
#include <string_view>

#include "app/cli/exit_codes.hpp"
#include "app/cli/version.hpp"
#include "app/options/exact_options.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;
namespace {

// The options as typed, per group, until they are checked.
struct DedupFlags {
  FeedFlags feed;
  OutputFlags output;
  KeyFlags key;
  ExchangeFlags exchange;
  CheckpointFlags checkpoint;
  FaultFlags faults;
  WindowFlags window;
  std::string config_file;
};

// The order `dedup --help` lists the options in (and the order of a
// "did you mean" suggestion's candidates).
constexpr std::string_view kDedupOptionOrder[] = {
    "input",
    "output",
    "mode",
    "annotate-format",
    "key-field",
    "missing-field",
    "text-normalize",
    "key-digest",
    "capacity",
    "fpr",
    "slices",
    "normalize",
    "batch-bytes",
    "max-key-bytes",
    "max-line-bytes",
    "max-exchange-bytes",
    "exchange",
    "max-reject-fraction",
    "metrics",
    "progress",
    "progress-style",
    "overwrite",
    "gzip-level",
    "zstd-level",
    "defer-compression",
    "hash-seed",
    "state",
    "checkpoint-every",
    "checkpoint-rounds",
    "max-delta-bytes",
    "keep-generations",
    "checkpoint-io",
    "compaction-fanout",
    "max-runs",
    "window",
    "slot-records",
    "slot-every",
    "mpiio-hints",
    "lock-wait",
    "stall-timeout",
    "fencing",
    "on-input-error",
    "split-inputs",
    "split-min-bytes",
    "max-skipped-inputs",
    "revalidate-inputs",
    "kept-copy",
    "unit",
    "paragraph-split",
    "min-paragraph-bytes",
    "drop-if-removed-fraction",
    "shingle",
    "bands",
    "rows",
    "confirm-jaccard",
};

po::options_description describe_dedup(DedupConfig& c, DedupFlags& flags) {
  po::options_description pool;
  add_feed_options(pool, c, flags.feed, OptionsFor::kDedup);
  add_output_options(pool, c, flags.output, OptionsFor::kDedup);
  add_key_options(pool, c, flags.key, OptionsFor::kDedup);
  add_filter_options(pool, c);
  add_exchange_options(pool, c, flags.exchange);
  add_checkpoint_options(pool, c, flags.checkpoint);
  add_fault_options(pool, c, flags.faults);
  add_window_options(pool, flags.window);
  po::options_description job(
      "dedup options (all except --config may also come from the job file)");
  add_in_order(job, {&pool}, kDedupOptionOrder);
  po::options_description generic("general");
  // clang-format off
  generic.add_options()
    ("help,h", "show this help")
    ("version", "show the version")
    ("config", po::value(&flags.config_file), "INI job file with the dedup options below, one `name = value` a line (see jobs/)");
  // clang-format on
  po::options_description all;
  all.add(generic).add(job);
  return all;
}

// Throws std::invalid_argument naming the option of the first bad value.
void apply_dedup_flags(const DedupFlags& flags, DedupConfig& c) {
  apply_key_flags(flags.key, c);
  if (c.key.unit != core::KeyUnit::kMinHash) {
    if (std::string p = minhash_flags_without_unit(flags.key.minhash); !p.empty()) {
      throw std::invalid_argument(p);
    }
  }
  apply_checkpoint_flags(flags.checkpoint, c);
  apply_output_flags(flags.output, c);
  apply_exchange_flags(flags.exchange, c);
  apply_fault_flags(flags.faults, c);
  apply_feed_flags(flags.feed, c);
  apply_window_flags(flags.window, c);
  // Paragraphs keep the first copy in runs of whole inputs: a run that
  // did not choose --split-inputs reads them whole (the same bytes, less
  // parallel reading of one big plain file).
  if (c.key.unit == core::KeyUnit::kParagraph && c.kept_copy == KeptCopy::kFirstInInputOrder &&
      std::ranges::find(c.explicit_options, "split-inputs") == c.explicit_options.end()) {
    c.split_inputs = false;
  }
  // Not chosen: the first copy where it applies, the arrival order elsewhere
  // (a resume replaces this by its state's rule once the state is read).
  if (!kept_copy_chosen(c) && !input_order_limit(c).empty()) c.kept_copy = KeptCopy::kArrival;
}

// --kept-copy first --unit paragraph (docs/keys.md "Which record keeps a
// paragraph"): the end pass re-cuts the records that kept a retracted
// paragraph (in annotate mode: adds it to the record's spans), in runs of
// whole inputs, with or without --state. Not yet: a split input (its join
// removes whole lines, not paragraphs).
std::string kept_paragraph_problem(const DedupConfig& c) {
  if (c.key.unit != core::KeyUnit::kParagraph) return {};
  if (c.split_inputs)
    return "--kept-copy first --unit paragraph needs --split-inputs off (a paragraph kept in a "
           "later range of a split input cannot be retracted yet)";
  return {};
}

std::string window_problem(const DedupConfig& c) {
  if (c.state_dir.empty() && c.window.window != 0) return "--window needs --state";
  return {};
}

}  // namespace

// Slots of --slot-records/--slot-every end at round ends, which move with
// the rank count and --batch-bytes (and the clock): which copies share a
// slot, and so which one is first in it, would move with them
// (docs/commands.md "Windows"); one slot a run holds still. Paragraphs hold
// in runs of whole inputs (docs/keys.md "Which record keeps a paragraph"):
// a split input's join removes whole lines, not paragraphs.
std::string input_order_limit(const DedupConfig& c) {
  if (c.window.window != 0 && c.window.rule != core::SlotRule::kPerRun) {
    const char* option =
        c.window.rule == core::SlotRule::kRecords ? "--slot-records" : "--slot-every";
    return std::string("--kept-copy first cannot apply with ") + option +
           ": its slots end at round ends, which move with the rank count and --batch-bytes" +
           (c.window.rule == core::SlotRule::kWallSeconds ? " and the clock" : "") +
           ", so the copies in a slot would too; use --window alone (one slot a run)";
  }
  if (std::string problem = kept_paragraph_problem(c); !problem.empty()) return problem;
  if (c.key.unit != core::KeyUnit::kRecord && c.key.unit != core::KeyUnit::kParagraph)
    return "--kept-copy first applies to --unit record or paragraph only";
  return {};
}

bool kept_copy_chosen(const DedupConfig& c) {
  return std::ranges::find(c.explicit_options, "kept-copy") != c.explicit_options.end();
}

namespace {

// --kept-copy first where input_order_limit() lets it apply; asked for
// elsewhere it is refused (it would silently keep the arrival order).
std::string kept_copy_problem(const DedupConfig& c) {
  if (c.kept_copy != KeptCopy::kFirstInInputOrder) return {};
  return input_order_limit(c);
}

// The first problem, group by group; whether the inputs exist comes last
// (it touches the file system).
std::string validate_dedup(const DedupConfig& c) {
  using Check = std::string (*)(const DedupConfig&);
  constexpr Check kChecks[] = {
      [](const DedupConfig& d) { return feed_problem(d); },
      [](const DedupConfig& d) { return key_problem(d); },
      [](const DedupConfig& d) { return output_problem(d); },
      [](const DedupConfig& d) { return filter_problem(d); },
      [](const DedupConfig& d) { return line_limit_problem(d, d); },
      [](const DedupConfig& d) { return exchange_problem(d); },
      [](const DedupConfig& d) { return checkpoint_problem(d); },
      [](const DedupConfig& d) { return fault_problem(d); },
      window_problem,
      kept_copy_problem,
      [](const DedupConfig& d) { return input_problem(d); },
  };
  for (const Check check : kChecks) {
    if (std::string problem = check(c); !problem.empty()) return problem;
  }
  return {};
}

// Reads the job file's options into `vm` under those of the command line:
// a value stored first wins, and --input and --key-field (composing) take
// the command line's list whole.
void store_job_file(const std::string& path, const po::options_description& all,
                    po::variables_map& vm) {
  po::parsed_options from_file = parse_job_file(path, all, {"config", "help", "version"});
  for (const char* name : {"input", "key-field"}) {
    if (vm.count(name)) {
      std::erase_if(from_file.options,
                    [name](const po::option& o) { return o.string_key == name; });
    }
  }
  po::store(from_file, vm);
}

}  // namespace

ParsedDedup parse_dedup_options(const std::vector<std::string>& args) {
  ParsedDedup out;
  DedupFlags flags;
  const po::options_description all = describe_dedup(out.config, flags);
  try {
    po::variables_map vm;
    po::store(parse_exact_command_line(args, all), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "usage: bloomshard dedup --input PATH... --output DIR [options]\n\n" << all;
      return stop_with<DedupConfig>(kExitOk, text.str());
    }
    if (vm.count("version")) return stop_with<DedupConfig>(kExitOk, version_text());
    if (vm.count("config")) store_job_file(vm["config"].as<std::string>(), all, vm);
    po::notify(vm);
    for (const auto& [name, value] : vm) {
      if (!value.defaulted()) out.config.explicit_options.push_back(name);
    }
    apply_dedup_flags(flags, out.config);
  } catch (const std::exception& e) {
    return stop_with<DedupConfig>(kExitUsage, std::string("bad option: ") + e.what());
  }
  if (std::string problem = validate_dedup(out.config); !problem.empty()) {
    out.exit_code = kExitUsage;
    out.message = std::move(problem);
  }
  return out;
}

}  // namespace bloomshard::app
