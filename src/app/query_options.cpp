#include "bloomshard/app/query_options.hpp"

#include <boost/program_options.hpp>
#include <filesystem>
#include <sstream>

#include "bloomshard/app/exact_options.hpp"
#include "bloomshard/app/exit_codes.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;

ParsedQuery parse_query_options(const std::vector<std::string>& args) {
  ParsedQuery out;
  DedupConfig& c = out.config.feed;
  std::string emit = "hits";
  std::string on_input_error = "skip";
  std::vector<std::string> key_fields;
  std::string normalize;
  std::uint64_t hash_seed = 0;
  po::options_description desc("query options");
  // clang-format off
  desc.add_options()
    ("help,h", "show this help")
    ("state", po::value(&out.config.state_dir)->required(),
     "a dedup --state dir (read only: never written, never locked)")
    ("input", po::value(&c.inputs)->composing()->multitoken()->required(),
     "input files or directories (walked like dedup's); repeatable")
    ("output", po::value(&c.output_dir)->required(),
     "output directory; mirrors the inputs' relative paths")
    ("emit", po::value(&emit)->default_value(emit),
     "hits: write the records whose key the state holds | misses: those it does not hold")
    ("key-field", po::value(&key_fields)->composing(),
     "must equal the state's key field(s), repeatable (they are taken from the state)")
    ("normalize", po::value(&normalize),
     "must equal the state's normalization (it is taken from the state)")
    ("hash-seed", po::value(&hash_seed), "must equal the state's hash seed")
    ("batch-bytes", po::value(&c.batch_bytes)->default_value(c.batch_bytes),
     "input bytes each rank reads per round (0: 4 MiB up to 64 ranks, 8 MiB above)")
    ("max-key-bytes", po::value(&c.max_key_bytes)->default_value(c.max_key_bytes),
     "longer keys are rejected")
    ("max-line-bytes", po::value(&c.max_line_bytes)->default_value(c.max_line_bytes),
     "longer lines are rejected")
    ("max-reject-fraction",
     po::value(&c.max_reject_fraction)->default_value(c.max_reject_fraction),
     "exit 3 when rejected/records exceeds this")
    ("on-input-error", po::value(&on_input_error)->default_value(on_input_error),
     "an input that cannot be read on: skip (keep what came before) | fail (exit 1)")
    ("max-skipped-inputs",
     po::value(&c.max_skipped_inputs)->default_value(c.max_skipped_inputs),
     "with skip: more broken inputs than this fails the query (exit 3)")
    ("metrics", po::value(&c.metrics_path), "write the query's metrics as JSON here (rank 0)")
    ("overwrite", po::bool_switch(&c.overwrite),
     "replace the outputs of an earlier run or query in --output");
  // clang-format on
  try {
    po::variables_map vm;
    po::store(parse_exact_command_line(args, desc), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "usage: bloomshard query --state DIR --input PATH... --output DIR [options]\n\n"
           << desc;
      out.exit_code = kExitOk;
      out.message = text.str();
      return out;
    }
    po::notify(vm);
    if (vm.count("key-field")) out.config.scheme_flags.key_fields = key_fields;
    if (vm.count("normalize")) out.config.scheme_flags.normalize = normalize;
    if (vm.count("hash-seed")) out.config.scheme_flags.hash_seed = hash_seed;
  } catch (const std::exception& e) {
    out.exit_code = kExitUsage;
    out.message = std::string("bad option: ") + e.what();
    return out;
  }
  std::string problem;
  if (emit == "hits") {
    out.config.emit = QueryEmit::kHits;
  } else if (emit == "misses") {
    out.config.emit = QueryEmit::kMisses;
  } else {
    problem = "--emit must be hits or misses, not '" + emit + "'";
  }
  if (on_input_error == "skip") {
    c.on_input_error = OnInputError::kSkip;
  } else if (on_input_error == "fail") {
    c.on_input_error = OnInputError::kFail;
  } else {
    problem = "--on-input-error must be fail or skip, not '" + on_input_error + "'";
  }
  if ((c.batch_bytes != 0 && c.batch_bytes < 4096) || c.batch_bytes > (1ULL << 30)) {
    problem = "--batch-bytes must be 0 or in [4096, 1 GiB]";
  }
  if (c.max_key_bytes < 1 || c.max_key_bytes > (16ULL << 20)) {
    problem = "--max-key-bytes must be in [1, 16 MiB]";
  }
  if (c.max_line_bytes < c.max_key_bytes) problem = "--max-line-bytes must be >= --max-key-bytes";
  if (!(c.max_reject_fraction >= 0.0 && c.max_reject_fraction <= 1.0)) {
    problem = "--max-reject-fraction must be in [0, 1]";
  }
  for (const std::string& in : c.inputs) {
    if (!std::filesystem::exists(in)) problem = "input '" + in + "' does not exist";
  }
  if (!problem.empty()) {
    out.exit_code = kExitUsage;
    out.message = problem;
  }
  return out;
}

}  // namespace bloomshard::app
