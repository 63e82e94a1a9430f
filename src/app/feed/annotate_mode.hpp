// `dedup --mode filter|annotate` and `--annotate-format bloomshard|dolma`:
// what a run writes per input. Filter (the default)
// writes the kept records; annotate writes one JSON line per input line
// (annotation_writer.hpp). The mode is part of an unfinished run: its label
// goes into the run manifest ("mode") and into the run identity, so a
// resume with another mode or format is refused (run_state.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bloomshard::app {

enum class RunMode : std::uint8_t { kFilter = 0, kAnnotate = 1 };
enum class AnnotateFormat : std::uint8_t { kBloomshard = 0, kDolma = 1 };

/// The mode options of one run.
struct AnnotateConfig {
  RunMode mode = RunMode::kFilter;
  AnnotateFormat format = AnnotateFormat::kBloomshard;
};

/// "filter" | "bloomshard" | "dolma".
[[nodiscard]] std::optional<RunMode> parse_run_mode(std::string_view text);
[[nodiscard]] std::optional<AnnotateFormat> parse_annotate_format(std::string_view text);

/// The run's mode as stored in the manifest: "filter", "annotate/bloomshard"
/// or "annotate/dolma" (the format only matters in annotate mode).
[[nodiscard]] std::string run_mode_label(const AnnotateConfig& c);

/// The options that give `label`, for messages: "--mode annotate
/// --annotate-format dolma".
[[nodiscard]] std::string run_mode_options(std::string_view label);

}  // namespace bloomshard::app
