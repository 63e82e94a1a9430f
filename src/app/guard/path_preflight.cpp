#include "app/guard/path_preflight.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

namespace bloomshard::app {
namespace fs = std::filesystem;
namespace {

// Absolute and normal, without a trailing separator ("out/" names "out").
fs::path normal_absolute(const fs::path& p) {
  fs::path a = fs::absolute(p).lexically_normal();
  if (!a.has_filename() && a.has_parent_path() && a != a.root_path()) a = a.parent_path();
  return a;
}

// True if `inner` is `outer` or lies below it (both made absolute and
// normal; symlinks resolved where they exist).
bool is_within(const fs::path& inner, const fs::path& outer) {
  const fs::path a = fs::weakly_canonical(inner);
  const fs::path b = fs::weakly_canonical(outer);
  auto ai = a.begin();
  for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai) {
    if (bi->empty()) continue;  // trailing separator
    if (ai == a.end() || *ai != *bi) return false;
  }
  return true;
}

enum class Found : unsigned char { kMissing, kDirectory, kOther };

Found find(const fs::path& p) {
  std::error_code ec;
  const fs::file_status s = fs::status(p, ec);  // follows symlinks; ENOTDIR reads as missing
  if (ec || !fs::exists(s)) return Found::kMissing;
  return fs::is_directory(s) ? Found::kDirectory : Found::kOther;
}

// Why this process cannot create entries in directory `dir`, or "".
// access(2) reports EROFS for a read-only mount even to root, for whom
// permission bits alone never refuse.
std::string not_writable(const fs::path& dir) {
  if (::access(dir.c_str(), W_OK | X_OK) == 0) return {};
  const int e = errno;
  if (e == EROFS) return "'" + dir.string() + "' is on a read-only file system";
  if (e == EACCES || e == EPERM)
    return "'" + dir.string() + "' is not writable (permission denied)";
  return "'" + dir.string() + "' cannot be written: " + std::strerror(e);
}

std::string problem(const WritePath& w, const std::string& why) {
  return w.option + " '" + w.path.string() + "': " + why;
}

}  // namespace

std::string check_write_paths(std::span<const WritePath> paths) {
  std::vector<fs::path> created;  // directories the job makes itself
  for (const WritePath& w : paths) {
    if (w.kind == WritePath::Kind::kDirectory) created.push_back(normal_absolute(w.path));
  }
  for (const WritePath& w : paths) {
    const fs::path target = normal_absolute(w.path);
    const Found found = find(target);
    if (w.kind == WritePath::Kind::kDirectory) {
      if (found == Found::kOther) return problem(w, "it exists and is not a directory");
      // The directory itself, or the nearest ancestor the job would create it in.
      fs::path dir = target;
      while (find(dir) == Found::kMissing && dir.has_parent_path() && dir != dir.root_path()) {
        dir = dir.parent_path();
      }
      if (find(dir) == Found::kOther) {
        return problem(w, "'" + dir.string() + "' is not a directory");
      }
      if (std::string why = not_writable(dir); !why.empty()) return problem(w, why);
      continue;
    }
    if (found == Found::kDirectory) return problem(w, "it is a directory, not a file");
    const fs::path dir = target.parent_path();
    const bool made_by_job = std::find(created.begin(), created.end(), dir) != created.end();
    if (made_by_job) continue;  // that entry's own check covers it
    switch (find(dir)) {
      case Found::kMissing:
        return problem(w, "its directory '" + dir.string() + "' does not exist");
      case Found::kOther:
        return problem(w, "'" + dir.string() + "' is not a directory");
      case Found::kDirectory:
        break;
    }
    // Written as FILE.tmp and renamed: the directory must take new entries.
    if (std::string why = not_writable(dir); !why.empty()) return problem(w, why);
  }
  return {};
}

std::string overlap_with_inputs(const std::string& option, const fs::path& written,
                                std::span<const fs::path> inputs) {
  for (const fs::path& in : inputs) {
    if (is_within(in, written) || is_within(written, in)) {
      return "input '" + in.string() + "' and " + option + " '" + written.string() +
             "' overlap: a run would read its own outputs or write into its inputs";
    }
  }
  return {};
}

}  // namespace bloomshard::app
