#include "app/state/state_overrides.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace bloomshard::app {
namespace {

std::string number_text(double v) {
  char text[32] = "";
  // The shortest text that reads back as v (0.001, not 0.0010000000000000000208).
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v) break;
  }
  return text;
}

std::string note(const char* option, const std::string& saved, const std::string& asked) {
  return std::string("the state's --") + option + " " + saved + " is used; this job asked for " +
         asked;
}

}  // namespace

std::vector<std::string> state_override_notes(const DedupConfig& config,
                                              const core::ScalableBloomParams& saved) {
  const auto given = [&config](const char* option) {
    return std::find(config.explicit_options.begin(), config.explicit_options.end(), option) !=
           config.explicit_options.end();
  };
  std::vector<std::string> notes;
  if (given("fpr") && config.fpr != saved.fpr_target) {
    notes.push_back(note("fpr", number_text(saved.fpr_target), number_text(config.fpr)));
  }
  if (given("capacity") && config.capacity && *config.capacity != saved.initial_capacity) {
    notes.push_back(
        note("capacity", std::to_string(saved.initial_capacity), std::to_string(*config.capacity)));
  }
  if (given("slices") && config.slices != 0 && config.slices != saved.num_slices) {
    notes.push_back(
        note("slices", std::to_string(saved.num_slices), std::to_string(config.slices)));
  }
  return notes;
}

}  // namespace bloomshard::app
