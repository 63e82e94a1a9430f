// The output group: where a job writes (the mirrored output dir, kept
// records or annotations), whether it may replace an earlier run's
// outputs, and what it reports (metrics file, progress lines). Shared by
// dedup and query.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "app/feed/annotate_mode.hpp"
#include "app/options/option_table.hpp"
#include "app/report/progress.hpp"

namespace bloomshard::app {

struct OutputOptions {
  std::string output_dir;
  /// --mode and --annotate-format: kept records or attribute files.
  AnnotateConfig annotate;
  bool overwrite = false;
  std::string metrics_path;
  double progress_seconds = 0;  ///< 0: no progress lines
  ProgressStyle progress_style = ProgressStyle::kAuto;
  /// Compression levels of the mirrored outputs (each output has its
  /// input's compression); 0: the codec's default (io::kDefaultGzipLevel,
  /// io::kDefaultZstdLevel). One option per codec, so that each range is
  /// checked with the options, before any work.
  int gzip_level = 0;  ///< 1-12 (libdeflate)
  int zstd_level = 0;  ///< 1-22
  /// --defer-compression auto: where the end pass of the input order
  /// compresses its outputs again (2+ ranks, the tasks layout), the rounds
  /// write .gz/.zst outputs stored and it compresses each once
  /// (InputFeed::defer_compression); off: the rounds compress them (less
  /// disk until the end pass, more CPU). dedup only.
  bool defer_compression = true;
};

/// The output options as typed, before they are checked.
struct OutputFlags {
  std::string mode = "filter";
  std::string annotate_format = "bloomshard";
  std::string progress_style = "auto";
  std::string defer_compression = "auto";
};

/// Registers --output, --mode, --annotate-format, --metrics, --progress,
/// --progress-style, --overwrite, --gzip-level and --zstd-level into `pool`, and for dedup
/// --defer-compression. For query, --output is required.
void add_output_options(boost::program_options::options_description& pool, OutputOptions& output,
                        OutputFlags& flags, OptionsFor command);

/// Turns the typed flags into `output`; throws std::invalid_argument naming
/// the option and the value.
void apply_output_flags(const OutputFlags& flags, OutputOptions& output);

/// The first value missing or out of range (option named), or empty.
[[nodiscard]] std::string output_problem(const OutputOptions& output);

}  // namespace bloomshard::app
