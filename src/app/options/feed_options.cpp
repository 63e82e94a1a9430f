#include "app/options/feed_options.hpp"

#include <filesystem>
#include <stdexcept>

namespace bloomshard::app {
namespace po = boost::program_options;

void add_feed_options(po::options_description& pool, FeedOptions& f, FeedFlags& flags,
                      OptionsFor command) {
  const bool query = command == OptionsFor::kQuery;
  auto* inputs = po::value(&f.inputs)->composing()->multitoken();
  if (query) inputs->required();
  // clang-format off
  pool.add_options()
    ("input", inputs,
     help_for(command,
              "input files or directories (walked recursively; names starting with '_' or '.' "
              "are skipped); repeatable",
              "input files or directories (walked like dedup's); repeatable"))
    ("batch-bytes", po::value(&f.batch_bytes)->default_value(f.batch_bytes),
     help_for(command,
              "input bytes each rank reads per round (bounds round memory; 0: 4 MiB up to 64 "
              "ranks, 8 MiB above)",
              "input bytes each rank reads per round (0: 4 MiB up to 64 ranks, 8 MiB above)"))
    ("max-line-bytes", po::value(&f.max_line_bytes)->default_value(f.max_line_bytes),
     "longer lines are rejected")
    ("max-reject-fraction",
     po::value(&f.max_reject_fraction)->default_value(f.max_reject_fraction),
     help_for(command, "fail the job (exit 3) when rejected/records exceeds this",
              "exit 3 when rejected/records exceeds this"))
    ("on-input-error", po::value(&flags.on_input_error)->default_value(flags.on_input_error),
     help_for(command,
              "an input that cannot be read on (truncated/corrupt .gz/.zst, unreadable): skip "
              "(keep the records before the damage, record the rest as skipped, go on) | fail "
              "(exit 1, checkpointed first with --state)",
              "an input that cannot be read on: skip (keep what came before) | fail (exit 1)"))
    ("split-inputs", po::value(&flags.split_inputs)->default_value(flags.split_inputs),
     "auto: at a run's first start, cut each uncompressed input larger than --split-min-bytes "
     "into line-aligned byte ranges that several ranks read (filter mode; outputs stay "
     "identical) | off: every input is read whole by one rank")
    ("split-min-bytes", po::value(&f.split_min_bytes)->default_value(f.split_min_bytes),
     "smallest input that is split, and smallest range (>= 4096)")
    ("max-skipped-inputs",
     po::value(&f.max_skipped_inputs)->default_value(f.max_skipped_inputs),
     help_for(command,
              "with skip: more broken inputs than this in one run stops the job (exit 3, "
              "checkpointed; the input over the limit is not skipped)",
              "with skip: more broken inputs than this fails the query (exit 3)"))
    ("revalidate-inputs", po::bool_switch(&f.revalidate_inputs),
     "on resume (or a finished run started again), accept a started or finished input that "
     "changed (touch, rsync without -t, HSM restore, a damaged file replaced, records appended) "
     "if the records read from it so far are the same bytes (digest check; costs one read of "
     "that prefix on rank 0); what follows them is read, a finished input's appended records "
     "too");
  if (!query) {
    pool.add_options()
      ("kept-copy", po::value(&flags.kept_copy)->default_value(flags.kept_copy),
       "which copy of a duplicate is kept: first (the first copy in input order: the same "
       "output bytes at any rank count and after any stop and resume) | arrival (the first to "
       "reach its owner: faster, the kept copy may change with the rank count). Not given: "
       "first where it applies (whole records; paragraphs of whole inputs; with --window only "
       "the default slot rule, one slot a run), else arrival; a resume keeps its state's rule");
  }
  // clang-format on
}

void apply_feed_flags(const FeedFlags& flags, FeedOptions& f) {
  if (flags.on_input_error == "skip") {
    f.on_input_error = OnInputError::kSkip;
  } else if (flags.on_input_error == "fail") {
    f.on_input_error = OnInputError::kFail;
  } else {
    throw std::invalid_argument("--on-input-error must be fail or skip, not '" +
                                flags.on_input_error + "'");
  }
  if (flags.split_inputs == "auto" || flags.split_inputs == "off") {
    f.split_inputs = flags.split_inputs == "auto";
  } else {
    throw std::invalid_argument("--split-inputs must be auto or off, not '" + flags.split_inputs +
                                "'");
  }
  if (flags.kept_copy == "arrival" || flags.kept_copy == "first") {
    f.kept_copy = flags.kept_copy == "first" ? KeptCopy::kFirstInInputOrder : KeptCopy::kArrival;
  } else {
    throw std::invalid_argument("--kept-copy must be arrival or first, not '" + flags.kept_copy +
                                "'");
  }
}

std::string feed_problem(const FeedOptions& f) {
  if (f.inputs.empty()) return "no --input given";
  if (f.batch_bytes != 0 && f.batch_bytes < 4096) return "--batch-bytes must be 0 or >= 4096";
  if (f.batch_bytes > (1ULL << 30)) return "--batch-bytes must be <= 1 GiB (MPI counts are int)";
  if (f.split_min_bytes < 4096) return "--split-min-bytes must be >= 4096";
  if (!(f.max_reject_fraction >= 0.0 && f.max_reject_fraction <= 1.0)) {
    return "--max-reject-fraction must be in [0, 1]";
  }
  return {};
}

std::string line_limit_problem(const FeedOptions& f, const KeyOptions& k) {
  if (f.max_line_bytes < k.max_key_bytes) return "--max-line-bytes must be >= --max-key-bytes";
  return {};
}

std::string input_problem(const FeedOptions& f) {
  for (const auto& in : f.inputs) {
    if (!std::filesystem::exists(in)) return "input '" + in + "' does not exist";
  }
  return {};
}

}  // namespace bloomshard::app
