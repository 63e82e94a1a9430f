// LATEST is replaced by write-temp, fsync, rename, fsync-dir: after a crash
// it names either the old or the new generation, never a torn number.
#include "io/checkpoint/checkpoint_generations.hpp"

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

#include "io/checkpoint/checkpoint_error.hpp"
#include "io/durable/durable_file.hpp"

namespace bloomshard::io {
namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

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
    const auto g = store::generation_of(it->path().filename().string(), true);
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
    if (store::generation_of(name, true) || run_id_of(it->path()) || name == "LATEST.tmp" ||
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
