// The input feed group: which inputs a job reads, how much per round, the
// reading limits, and what a broken or big input does. Shared by dedup and
// query (InputFeed reads it).
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "app/options/key_options.hpp"
#include "app/options/option_table.hpp"

namespace bloomshard::app {

/// What a broken input (truncated or corrupt compressed data, an unreadable
/// file) does to the job: end it (checkpointed first, with --state), or
/// skip the rest of that input and go on (docs/reliability.md).
enum class OnInputError : std::uint8_t { kFail = 0, kSkip = 1 };

/// Which copy of a duplicate a run keeps (docs/inputs.md "Which copy of a
/// duplicate is kept"): the first copy in input order (the same bytes at any
/// rank count and after any stop; the default where it applies), or
/// whichever reached its owner first (faster; the kept key set and
/// exactly-once hold, the bytes depend on the rank count). Without
/// --kept-copy a new run keeps the first copy where it applies and the
/// arrival order elsewhere, and a resume keeps its state's rule
/// (dedup_options.hpp resolve_default_kept_copy, DedupJob's start).
enum class KeptCopy : std::uint8_t { kArrival = 0, kFirstInInputOrder = 1 };

struct FeedOptions {
  std::vector<std::string> inputs;
  std::uint64_t batch_bytes = 0;  ///< input bytes read per rank per round;
                                  ///< 0: core::default_batch_bytes(ranks)
  std::uint64_t max_line_bytes = 16ULL << 20;
  double max_reject_fraction = 0.01;
  OnInputError on_input_error = OnInputError::kSkip;  ///< skip: a multi-day run goes on
  std::uint64_t max_skipped_inputs = 10;              ///< more broken inputs than this: exit 3
  bool revalidate_inputs = false;  ///< accept a changed started input whose consumed prefix
                                   ///< is unchanged (read again to check it, on rank 0)
  /// Big single files (app/split/split_inputs.hpp): at a first start, cut
  /// uncompressed inputs larger than split_min_bytes into line-aligned
  /// ranges read by several ranks (filter mode only).
  bool split_inputs = true;
  std::uint64_t split_min_bytes = 64ULL << 20;
  KeptCopy kept_copy = KeptCopy::kArrival;  ///< dedup only
};

/// The feed options as typed, before they are checked.
struct FeedFlags {
  std::string on_input_error = "skip";
  std::string split_inputs = "auto";
  std::string kept_copy = "first";
};

/// Registers --input, --batch-bytes, --max-line-bytes,
/// --max-reject-fraction, --on-input-error, --max-skipped-inputs,
/// --split-inputs, --split-min-bytes, --revalidate-inputs and (dedup only)
/// --kept-copy into `pool`. For query, --input is required.
void add_feed_options(boost::program_options::options_description& pool, FeedOptions& feed,
                      FeedFlags& flags, OptionsFor command);

/// Turns the typed flags into `feed`; throws std::invalid_argument naming
/// the option and the value.
void apply_feed_flags(const FeedFlags& flags, FeedOptions& feed);

/// The first value missing or out of range (the option named), or empty.
/// Whether the inputs exist is input_problem's, checked last (it touches
/// the file system).
[[nodiscard]] std::string feed_problem(const FeedOptions& feed);

/// "--max-line-bytes must be >= --max-key-bytes" when a line could not
/// hold the longest key, or empty.
[[nodiscard]] std::string line_limit_problem(const FeedOptions& feed, const KeyOptions& keys);

/// The first input that does not exist, or empty.
[[nodiscard]] std::string input_problem(const FeedOptions& feed);

}  // namespace bloomshard::app
