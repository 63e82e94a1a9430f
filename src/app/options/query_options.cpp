#include "app/options/query_options.hpp"

#include <boost/program_options.hpp>
#include <sstream>
#include <string_view>

#include "app/cli/exit_codes.hpp"
#include "app/options/exact_options.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;
namespace {

// The options as typed, until they are checked.
struct QueryFlags {
  std::string emit = "hits";
  FeedFlags feed;
  OutputFlags output;
  KeyFlags key;  // registered for the pool only: query's key flags check the state's
  std::vector<std::string> key_fields;
  std::string normalize;
  std::uint64_t hash_seed = 0;
};

// The order `query --help` lists the options in.
constexpr std::string_view kQueryOptionOrder[] = {
    "help",           "state",
    "input",          "output",
    "emit",           "key-field",
    "normalize",      "hash-seed",
    "batch-bytes",    "max-key-bytes",
    "max-line-bytes", "max-reject-fraction",
    "on-input-error", "max-skipped-inputs",
    "metrics",        "overwrite",
    "gzip-level",     "zstd-level",
};

po::options_description describe_query(QueryConfig& q, QueryFlags& flags) {
  po::options_description own;
  // clang-format off
  own.add_options()
    ("help,h", "show this help")
    ("state", po::value(&q.state_dir)->required(),
     "a dedup --state dir (read only: never written, never locked)")
    ("emit", po::value(&flags.emit)->default_value(flags.emit),
     "hits: write the records whose key the state holds | misses: those it does not hold")
    ("key-field", po::value(&flags.key_fields)->composing(),
     "must equal the state's key field(s), repeatable (they are taken from the state)")
    ("normalize", po::value(&flags.normalize),
     "must equal the state's normalization (it is taken from the state)")
    ("hash-seed", po::value(&flags.hash_seed), "must equal the state's hash seed");
  // clang-format on
  po::options_description groups;
  add_feed_options(groups, q.feed, flags.feed, OptionsFor::kQuery);
  add_output_options(groups, q.feed, flags.output, OptionsFor::kQuery);
  add_key_options(groups, q.feed, flags.key, OptionsFor::kQuery);
  po::options_description desc("query options");
  add_in_order(desc, {&own, &groups}, kQueryOptionOrder);
  return desc;
}

// The scheme flags given (each unset when not) and the feed's typed flags;
// throws std::invalid_argument for a bad value.
void apply_query_flags(const po::variables_map& vm, const QueryFlags& flags, QueryConfig& q) {
  if (vm.count("key-field")) q.scheme_flags.key_fields = flags.key_fields;
  if (vm.count("normalize")) q.scheme_flags.normalize = flags.normalize;
  if (vm.count("hash-seed")) q.scheme_flags.hash_seed = flags.hash_seed;
  apply_feed_flags(flags.feed, q.feed);
}

// Sets --emit, then checks the groups; the first problem, or empty.
std::string validate_query(const std::string& emit, QueryConfig& q) {
  if (emit == "hits") {
    q.emit = QueryEmit::kHits;
  } else if (emit == "misses") {
    q.emit = QueryEmit::kMisses;
  } else {
    return "--emit must be hits or misses, not '" + emit + "'";
  }
  const QueryFeed& feed = q.feed;
  std::string problem = feed_problem(feed);
  if (problem.empty()) problem = key_problem(feed);
  if (problem.empty()) problem = line_limit_problem(feed, feed);
  if (problem.empty()) problem = input_problem(feed);
  return problem;
}

}  // namespace

ParsedQuery parse_query_options(const std::vector<std::string>& args) {
  ParsedQuery out;
  QueryFlags flags;
  const po::options_description desc = describe_query(out.config, flags);
  try {
    po::variables_map vm;
    po::store(parse_exact_command_line(args, desc), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "usage: bloomshard query --state DIR --input PATH... --output DIR [options]\n\n"
           << desc;
      return stop_with<QueryConfig>(kExitOk, text.str());
    }
    po::notify(vm);
    apply_query_flags(vm, flags, out.config);
  } catch (const std::exception& e) {
    return stop_with<QueryConfig>(kExitUsage, std::string("bad option: ") + e.what());
  }
  if (std::string problem = validate_query(flags.emit, out.config); !problem.empty()) {
    out.exit_code = kExitUsage;
    out.message = std::move(problem);
  }
  return out;
}

}  // namespace bloomshard::app
