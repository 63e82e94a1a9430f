// LATEST is replaced by write-temp, fsync, rename, fsync-dir: after a crash
// it names either the old or the new generation, never a torn number.
#include "bloomshard/io/checkpoint_generations.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>

#include "bloomshard/io/checkpoint_error.hpp"

namespace bloomshard::io {
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
std::optional<std::uint64_t> generation_of(std::string_view name, std::string_view suffix) {
  if (name.size() <= kPrefix.size() + suffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(suffix)) {
    return std::nullopt;
  }
  return parse_decimal(name.substr(kPrefix.size(), name.size() - kPrefix.size() - suffix.size()));
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

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
    if (auto g = generation_of(it->path().filename().string(), kSuffix)) out.push_back(*g);
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

void fsync_path(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw CheckpointError("cannot open " + path.string() + " to fsync: " + errno_text());
  const int rc = ::fsync(fd);
  const std::string err = rc != 0 ? errno_text() : std::string();
  ::close(fd);
  if (rc != 0) throw CheckpointError("fsync of " + path.string() + " failed: " + err);
}

void write_latest(const std::filesystem::path& state_dir, std::uint64_t g) {
  const std::filesystem::path tmp = state_dir / "LATEST.tmp";
  const std::string text = std::to_string(g) + "\n";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError("cannot create " + tmp.string() + ": " + errno_text());
  const ssize_t n = ::write(fd, text.data(), text.size());
  const bool ok = n == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const std::string err = ok ? std::string() : errno_text();
  ::close(fd);
  if (!ok) throw CheckpointError("cannot write " + tmp.string() + ": " + err);
  std::error_code ec;
  std::filesystem::rename(tmp, state_dir / "LATEST", ec);
  if (ec) throw CheckpointError("cannot rename " + tmp.string() + " to LATEST: " + ec.message());
  fsync_path(state_dir);
}

std::vector<std::uint64_t> prune_generations(const std::filesystem::path& state_dir,
                                             std::uint64_t newest, int keep) {
  if (keep < 1) throw std::invalid_argument("prune_generations: keep must be >= 1");
  std::vector<std::uint64_t> deleted;
  int kept = 0;
  for (std::uint64_t g : list_generations(state_dir)) {
    if (g > newest) continue;
    if (kept < keep) {
      ++kept;
      continue;
    }
    std::error_code ec;
    std::filesystem::remove(generation_path(state_dir, g), ec);
    if (ec)
      throw CheckpointError("cannot delete old generation " + std::to_string(g) + ": " +
                            ec.message());
    deleted.push_back(g);
  }
  // Leftovers of writes that failed or were killed before their rename.
  std::vector<std::filesystem::path> stale;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(state_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto g = generation_of(it->path().filename().string(), kTmpSuffix);
    if (g && *g < newest) stale.push_back(it->path());
  }
  for (const auto& p : stale) std::filesystem::remove(p, ec);  // best effort
  return deleted;
}

std::vector<std::filesystem::path> remove_stale_temporaries(
    const std::filesystem::path& state_dir) {
  std::vector<std::filesystem::path> stale;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(state_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.ends_with(".tmp")) continue;
    // Only files (or links) are ours: no attempt makes a directory by these
    // names, so one that sits there is left for the write to name.
    const std::filesystem::file_status st = it->symlink_status(ec);
    if (ec || std::filesystem::is_directory(st)) {
      ec.clear();
      continue;
    }
    if (generation_of(name, kTmpSuffix) || run_id_of(it->path()) || name == "LATEST.tmp" ||
        name == ".reserve.tmp") {
      stale.push_back(it->path());
    }
  }
  for (const auto& p : stale) {
    std::filesystem::remove(p, ec);
    if (ec)
      throw CheckpointError("cannot delete the stale temporary " + p.string() + ": " +
                            ec.message());
  }
  return stale;
}

namespace {

class BackgroundPrune {
 public:
  BackgroundPrune() = default;
  BackgroundPrune(const BackgroundPrune&) = delete;
  BackgroundPrune& operator=(const BackgroundPrune&) = delete;
  ~BackgroundPrune() { (void)wait(); }

  void start(const std::filesystem::path& state_dir, std::uint64_t newest, int keep,
             std::vector<std::filesystem::path> also_delete) {
    std::lock_guard lock(mutex_);
    if (pending_.valid()) pending_.wait();
    pending_ = std::async(
        std::launch::async,
        [state_dir, newest, keep, also = std::move(also_delete)]() -> std::string {
          try {
            (void)prune_generations(state_dir, newest, keep);
            for (const auto& p : also) {
              std::error_code ec;
              std::filesystem::remove(p, ec);
              if (ec)
                throw CheckpointError("cannot delete run file " + p.string() + ": " + ec.message());
            }
            return {};
          } catch (const std::exception& e) {
            return "old checkpoint generations in " + state_dir.string() +
                   " not deleted: " + e.what();
          }
        });
  }

  std::string wait() {
    std::lock_guard lock(mutex_);
    return pending_.valid() ? pending_.get() : std::string();
  }

 private:
  std::mutex mutex_;
  std::future<std::string> pending_;
};

BackgroundPrune& background_prune() {
  static BackgroundPrune prune;
  return prune;
}

}  // namespace

void prune_generations_in_background(const std::filesystem::path& state_dir, std::uint64_t newest,
                                     int keep, std::vector<std::filesystem::path> also_delete) {
  background_prune().start(state_dir, newest, keep, std::move(also_delete));
}

std::string wait_for_background_prune() { return background_prune().wait(); }

}  // namespace bloomshard::io
