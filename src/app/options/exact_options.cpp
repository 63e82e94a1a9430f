#include "app/options/exact_options.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace bloomshard::app {
namespace po = boost::program_options;
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates,
                         std::string_view prefix) {
  if (name.empty()) return {};
  std::vector<std::string> prefixed;
  std::vector<std::string> near;
  std::size_t best = name.size() <= 4 ? 1 : 2;
  for (const std::string& candidate : candidates) {
    if (candidate.empty()) continue;
    if (candidate.starts_with(name)) prefixed.push_back(candidate);
    const std::size_t d = edit_distance(name, candidate);
    if (d < best) {
      best = d;
      near.clear();
    }
    if (d == best) near.push_back(candidate);
  }
  const std::vector<std::string>& pick = prefixed.empty() ? near : prefixed;
  if (pick.empty() || pick.size() > 3) return {};
  std::string text = " (did you mean ";
  for (std::size_t i = 0; i < pick.size(); ++i) {
    if (i > 0) text += i + 1 == pick.size() ? " or " : ", ";
    text += std::string(prefix) + pick[i];
  }
  return text + "?)";
}

std::string option_suggestion(std::string_view name, const po::options_description& desc) {
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  if (const auto eq = name.find('='); eq != std::string_view::npos) name = name.substr(0, eq);
  std::vector<std::string> names;
  for (const auto& option : desc.options()) names.push_back(option->long_name());
  return did_you_mean(name, names, "--");
}

po::parsed_options parse_exact_command_line(const std::vector<std::string>& args,
                                            const po::options_description& desc) {
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  po::parsed_options parsed(&desc);
  try {
    parsed = po::command_line_parser(args).options(desc).style(style).run();
  } catch (const po::unknown_option& e) {
    const std::string token = e.get_option_name();
    throw OptionUsageError("unrecognised option '" + token + "'" + option_suggestion(token, desc));
  }
  // Without a positional description Boost keeps a bare word as an option
  // with no name, and store() drops it: refuse it here instead.
  for (const po::option& o : parsed.options) {
    if (o.string_key.empty()) {
      const std::string token = o.original_tokens.empty() ? std::string() : o.original_tokens[0];
      throw OptionUsageError("unexpected argument '" + token +
                             "': every value follows its option (--name VALUE)");
    }
  }
  return parsed;
}

po::parsed_options parse_job_file(const std::string& path, const po::options_description& desc,
                                  const std::vector<std::string>& not_in_file) {
  std::ifstream file(path);
  if (!file) throw OptionUsageError("cannot open job file '" + path + "'");
  std::ostringstream whole;
  whole << file.rdbuf();
  const std::string text = whole.str();
  // Boost's INI reader names neither the file nor the line of an unknown
  // key; check every key here first, with the same syntax rules (a '#'
  // starts a comment, [section] prefixes the keys below it).
  std::istringstream lines(text);
  std::string line;
  std::string section;
  for (std::size_t number = 1; std::getline(lines, line); ++number) {
    std::string_view s = line;
    if (const auto hash = s.find('#'); hash != std::string_view::npos) s = s.substr(0, hash);
    s = trim(s);
    if (s.empty()) continue;
    const std::string where = "job file '" + path + "' line " + std::to_string(number) + ": ";
    if (s.front() == '[' && s.back() == ']') {
      section = std::string(trim(s.substr(1, s.size() - 2)));
      if (!section.empty()) section += '.';
      continue;
    }
    const auto eq = s.find('=');
    if (eq == std::string_view::npos) {
      throw OptionUsageError(where + "'" + std::string(s) + "' is not 'name = value'");
    }
    const std::string key = section + std::string(trim(s.substr(0, eq)));
    if (std::find(not_in_file.begin(), not_in_file.end(), key) != not_in_file.end()) {
      throw OptionUsageError(where + "'" + key + "' is a command-line option only");
    }
    if (desc.find_nothrow(key, false) == nullptr) {
      throw OptionUsageError(where + "unknown option '" + key + "'" + option_suggestion(key, desc));
    }
  }
  std::istringstream again(text);
  return po::parse_config_file(again, desc);
}

}  // namespace bloomshard::app
