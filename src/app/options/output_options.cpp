#include "app/options/output_options.hpp"

#include <stdexcept>
#include <string>

namespace bloomshard::app {
namespace po = boost::program_options;

void add_output_options(po::options_description& pool, OutputOptions& o, OutputFlags& flags,
                        OptionsFor command) {
  auto* output = po::value(&o.output_dir);
  if (command == OptionsFor::kQuery) output->required();
  // clang-format off
  pool.add_options()
    ("output", output, "output directory; mirrors the inputs' relative paths")
    ("mode", po::value(&flags.mode)->default_value(flags.mode),
     "filter (write the kept records) | annotate (write per input an attribute file at the "
     "mirrored path, same compression: one JSON line per input line, rejects included; "
     "docs/commands.md)")
    ("annotate-format", po::value(&flags.annotate_format)->default_value(flags.annotate_format),
     "with --mode annotate: bloomshard ({\"key\", \"duplicate\", \"reject\"}) | dolma "
     "({\"id\", \"attributes\": {\"bloomshard_duplicate\": [[0, chars, 1.0]] or []}}, "
     "for `dolma mix`)")
    ("metrics", po::value(&o.metrics_path),
     help_for(command, "write the run's metrics as JSON here (rank 0)",
              "write the query's metrics as JSON here (rank 0)"))
    ("progress", po::value(&o.progress_seconds)->default_value(o.progress_seconds),
     "seconds between progress lines on stderr (0: none)")
    ("progress-style", po::value(&flags.progress_style)->default_value(flags.progress_style),
     "auto | bar | lines: auto draws a live bar when stderr reaches a terminal (also through "
     "mpirun), else prints lines every --progress seconds")
    ("overwrite", po::bool_switch(&o.overwrite),
     help_for(command, "replace the outputs of an earlier run in --output",
              "replace the outputs of an earlier run or query in --output"))
    ("gzip-level", po::value(&o.gzip_level)->default_value(o.gzip_level),
     "compression level of .gz outputs, 1-12 (libdeflate; 0: 6, about zlib -6's size at 3x "
     "its speed; docs/performance.md has the size/speed table)")
    ("zstd-level", po::value(&o.zstd_level)->default_value(o.zstd_level),
     "compression level of .zst outputs, 1-22 (0: 3)");
  if (command == OptionsFor::kDedup) {
    pool.add_options()
      ("defer-compression",
       po::value(&flags.defer_compression)->default_value(flags.defer_compression),
       "auto | off: under --kept-copy first on 2+ ranks (inputs not read in lockstep), auto "
       "writes .gz/.zst outputs uncompressed (stored blocks of their codec) and compresses "
       "each once at the end pass, which rewrites most of them anyway; they take their plain "
       "size on disk until then. off: compressed as written (less disk, more CPU; "
       "docs/inputs.md)");
  }
  // clang-format on
}

void apply_output_flags(const OutputFlags& flags, OutputOptions& o) {
  const auto style = parse_progress_style(flags.progress_style);
  if (!style) {
    throw std::invalid_argument("--progress-style must be auto, bar or lines, not '" +
                                flags.progress_style + "'");
  }
  o.progress_style = *style;
  const auto mode = parse_run_mode(flags.mode);
  if (!mode) {
    throw std::invalid_argument("--mode must be filter or annotate, not '" + flags.mode + "'");
  }
  const auto format = parse_annotate_format(flags.annotate_format);
  if (!format) {
    throw std::invalid_argument("--annotate-format must be bloomshard or dolma, not '" +
                                flags.annotate_format + "'");
  }
  o.annotate = {*mode, *format};
  if (flags.defer_compression != "auto" && flags.defer_compression != "off") {
    throw std::invalid_argument("--defer-compression must be auto or off, not '" +
                                flags.defer_compression + "'");
  }
  o.defer_compression = flags.defer_compression == "auto";
}

std::string output_problem(const OutputOptions& o) {
  if (o.output_dir.empty()) return "no --output given";
  if (o.progress_seconds < 0) return "--progress must be >= 0";
  if (o.gzip_level < 0 || o.gzip_level > 12) {
    return "--gzip-level must be 1-12 (or 0: the default), not " + std::to_string(o.gzip_level);
  }
  if (o.zstd_level < 0 || o.zstd_level > 22) {
    return "--zstd-level must be 1-22 (or 0: the default), not " + std::to_string(o.zstd_level);
  }
  return {};
}

}  // namespace bloomshard::app
