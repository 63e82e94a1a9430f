#include "io/durable/durable_entries.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "io/errors.hpp"

namespace bloomshard::io {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what, int err) {
  throw OutputError(path.string(), what + ": " + std::strerror(err));
}

void fsync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(dir, "cannot open directory to fsync", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail(dir, "fsync of directory failed", err);
}

fs::path parent_of(const fs::path& path) {
  const fs::path parent = fs::absolute(path).lexically_normal().parent_path();
  return parent.empty() ? fs::path("/") : parent;
}

}  // namespace

void create_directories_durably(const fs::path& dir) {
  // Missing directories, innermost first: the walk stops at the first one
  // that exists (its entry is not ours to sync).
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path d = fs::absolute(dir).lexically_normal(); !d.empty() && !fs::exists(d, ec);
       d = d.parent_path()) {
    missing.push_back(d);
    if (d == d.root_path()) break;
  }
  if (missing.empty()) return;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(dir.string(), "cannot create directory: " + ec.message());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) fsync_directory(parent_of(*it));
}

void sync_parent_directory(const fs::path& path) { fsync_directory(parent_of(path)); }

void replace_file_durably(const fs::path& path, std::string_view text) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(tmp, "cannot create", errno);
  const auto give_up = [&](const std::string& what, int err) {
    ::close(fd);
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fail(tmp, what, err);
  };
  for (std::string_view rest = text; !rest.empty();) {
    const ssize_t put = ::write(fd, rest.data(), rest.size());
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) give_up("write failed", put < 0 ? errno : EIO);
    rest.remove_prefix(static_cast<std::size_t>(put));
  }
  if (::fsync(fd) != 0) give_up("fsync failed", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fail(tmp, "close failed", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fail(path, "cannot rename " + tmp.filename().string() + " over it", err);
  }
  sync_parent_directory(path);
}

}  // namespace bloomshard::io
