// Names and listing of a state directory's files (store/state_dir.hpp).
#include "bloomshard/store/state_dir.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace bloomshard::store {
namespace {

constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".h5";
constexpr std::string_view kTmpSuffix = ".h5.tmp";

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// Generation number of a file name "ckpt-<g><suffix>", if it has that form.
std::optional<std::uint64_t> generation_with_suffix(std::string_view name,
                                                    std::string_view suffix) {
  if (name.size() <= kPrefix.size() + suffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(suffix)) {
    return std::nullopt;
  }
  return parse_decimal(name.substr(kPrefix.size(), name.size() - kPrefix.size() - suffix.size()));
}

}  // namespace

std::optional<std::uint64_t> generation_of(std::string_view file_name, bool temporary) {
  return generation_with_suffix(file_name, temporary ? kTmpSuffix : kSuffix);
}

std::filesystem::path generation_path(const std::filesystem::path& state_dir, std::uint64_t g) {
  return state_dir / (std::string(kPrefix) + std::to_string(g) + std::string(kSuffix));
}

std::filesystem::path run_path(const std::filesystem::path& state_dir, std::uint64_t id) {
  char tag[16];
  std::snprintf(tag, sizeof tag, "%08x", static_cast<unsigned>(id & 0xFFFFFFFFU));
  return state_dir / ("run-" + std::to_string(id >> 32) + "-" + tag + ".h5");
}

std::optional<std::uint64_t> run_id_of(const std::filesystem::path& file) {
  std::string name = file.filename().string();
  if (name.ends_with(".tmp")) name.resize(name.size() - 4);
  if (!name.starts_with("run-") || !name.ends_with(".h5")) return std::nullopt;
  name = name.substr(4, name.size() - 7);
  const std::size_t dash = name.find('-');
  if (dash == std::string::npos || name.size() - dash - 1 != 8) return std::nullopt;
  const auto g = parse_decimal(name.substr(0, dash));
  std::uint32_t tag = 0;
  const std::string hex = name.substr(dash + 1);
  const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), tag, 16);
  if (!g || *g >= (std::uint64_t{1} << 32) || ec != std::errc() || ptr != hex.data() + hex.size()) {
    return std::nullopt;
  }
  return (*g << 32) | tag;
}

std::vector<std::filesystem::path> list_run_files(const std::filesystem::path& state_dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(state_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (run_id_of(it->path())) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::uint64_t> read_latest(const std::filesystem::path& state_dir) {
  std::ifstream in(state_dir / "LATEST", std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 64) return std::nullopt;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return parse_decimal(text);
}

std::vector<std::uint64_t> list_generations(const std::filesystem::path& state_dir) {
  std::vector<std::uint64_t> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(state_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    if (auto g = generation_of(it->path().filename().string(), false)) out.push_back(*g);
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::vector<std::uint64_t> resume_candidates(const std::filesystem::path& state_dir) {
  std::vector<std::uint64_t> all = list_generations(state_dir);
  std::vector<std::uint64_t> out;
  if (auto latest = read_latest(state_dir);
      latest && std::find(all.begin(), all.end(), *latest) != all.end()) {
    out.push_back(*latest);
  }
  for (std::uint64_t g : all) {
    if (out.empty() || g != out.front()) out.push_back(g);
  }
  return out;
}

}  // namespace bloomshard::store
