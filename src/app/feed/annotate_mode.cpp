#include "app/feed/annotate_mode.hpp"

namespace bloomshard::app {

std::optional<RunMode> parse_run_mode(std::string_view text) {
  if (text == "filter") return RunMode::kFilter;
  if (text == "annotate") return RunMode::kAnnotate;
  return std::nullopt;
}

std::optional<AnnotateFormat> parse_annotate_format(std::string_view text) {
  if (text == "bloomshard") return AnnotateFormat::kBloomshard;
  if (text == "dolma") return AnnotateFormat::kDolma;
  return std::nullopt;
}

std::string run_mode_label(const AnnotateConfig& c) {
  if (c.mode == RunMode::kFilter) return "filter";
  return c.format == AnnotateFormat::kDolma ? "annotate/dolma" : "annotate/bloomshard";
}

std::string run_mode_options(std::string_view label) {
  const std::size_t slash = label.find('/');
  if (slash == std::string_view::npos) return "--mode " + std::string(label);
  return "--mode " + std::string(label.substr(0, slash)) + " --annotate-format " +
         std::string(label.substr(slash + 1));
}

}  // namespace bloomshard::app
