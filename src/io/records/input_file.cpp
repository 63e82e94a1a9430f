// Input discovery: classification by extension, recursive walk, relative
// mirror paths, collision check and sorting.
#include "io/records/input_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "io/errors.hpp"

namespace bloomshard::io {
namespace fs = std::filesystem;

std::string_view format_name(Format f) noexcept {
  return f == Format::kJsonLines ? "jsonl" : "plain";
}

std::string_view compression_name(Compression c) noexcept {
  switch (c) {
    case Compression::kGzip:
      return "gz";
    case Compression::kZstd:
      return "zst";
    case Compression::kNone:
      break;
  }
  return "none";
}

Compression parse_compression(std::string_view name) {
  if (name == "none") return Compression::kNone;
  if (name == "gz" || name == "gzip") return Compression::kGzip;
  if (name == "zst" || name == "zstd") return Compression::kZstd;
  throw std::invalid_argument("unknown compression '" + std::string(name) +
                              "' (expected none, gz or zst)");
}

namespace {

bool ends_with_ci(std::string_view s, std::string_view suffix) noexcept {
  if (s.size() < suffix.size()) return false;
  const std::string_view tail = s.substr(s.size() - suffix.size());
  for (std::size_t i = 0; i < tail.size(); ++i) {
    char c = tail[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

struct FileStat {
  bool exists = false;
  bool regular = false;
  bool directory = false;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

// stat() follows symlinks, which is the documented policy for files.
FileStat stat_follow(const fs::path& p) {
  struct stat st {};
  FileStat out;
  if (::stat(p.c_str(), &st) != 0) return out;
  out.exists = true;
  out.regular = S_ISREG(st.st_mode);
  out.directory = S_ISDIR(st.st_mode);
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                 static_cast<std::int64_t>(st.st_mtim.tv_nsec);
  return out;
}

InputFile make_input(const fs::path& abs, std::string relative, const FileStat& st) {
  InputFile f;
  f.absolute_path = abs;
  f.relative_path = std::move(relative);
  f.size = st.size;
  f.mtime_ns = st.mtime_ns;
  const FileKind kind = classify_path(abs.filename().native());
  f.format = kind.format;
  f.compression = kind.compression;
  return f;
}

// Name used as the prefix of an argument's inputs; "." and "dir/" resolve to
// the real directory name.
std::string argument_name(const fs::path& abs) {
  std::string name = abs.filename().generic_string();
  if (name.empty() || name == "." || name == "..") name = "root";
  return name;
}

// Names starting with '_' or '.' are bookkeeping, not data (the Hadoop/Spark
// convention: _SUCCESS, .crc, and our own _rejects/ and run marker), so an
// output dir can be the input of a later run.
bool is_hidden_name(std::string_view name) {
  return !name.empty() && (name.front() == '_' || name.front() == '.');
}

void walk_directory(const fs::path& dir, const std::string& prefix, std::vector<InputFile>& out) {
  std::error_code ec;
  // Directory symlinks are not followed (no cycles); file symlinks are
  // resolved by stat_follow below.
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  if (ec) throw InputError(dir.string(), 0, 0, "cannot list directory: " + ec.message());
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) throw InputError(dir.string(), 0, 0, "cannot list directory: " + ec.message());
    const fs::directory_entry& entry = *it;
    if (is_hidden_name(entry.path().filename().native())) {
      if (entry.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    const FileStat st = stat_follow(entry.path());
    if (!st.exists || !st.regular) continue;  // dangling links, dir links, FIFOs, devices
    std::string rel = entry.path().lexically_relative(dir).generic_string();
    if (!prefix.empty()) rel = prefix + "/" + rel;
    out.push_back(make_input(entry.path(), std::move(rel), st));
  }
}

}  // namespace

FileKind classify_path(std::string_view file_name) noexcept {
  FileKind kind;
  std::string_view stem = file_name;
  if (ends_with_ci(stem, ".gz")) {
    kind.compression = Compression::kGzip;
    stem.remove_suffix(3);
  } else if (ends_with_ci(stem, ".zst")) {
    kind.compression = Compression::kZstd;
    stem.remove_suffix(4);
  }
  if (ends_with_ci(stem, ".jsonl") || ends_with_ci(stem, ".ndjson") ||
      ends_with_ci(stem, ".json")) {
    kind.format = Format::kJsonLines;
  }
  return kind;
}

std::vector<InputFile> discover_inputs(std::span<const fs::path> paths) {
  if (paths.empty()) throw std::invalid_argument("discover_inputs: no input paths given");
  std::vector<InputFile> out;
  for (const fs::path& given : paths) {
    fs::path abs = fs::absolute(given).lexically_normal();
    if (!abs.has_filename() && abs.has_parent_path()) abs = abs.parent_path();  // "dir/"
    const FileStat st = stat_follow(abs);
    if (!st.exists) {
      throw InputError(given.string(), 0, 0,
                       std::string("input path does not exist: ") + std::strerror(errno));
    }
    if (st.regular) {
      out.push_back(make_input(abs, argument_name(abs), st));
    } else if (st.directory) {
      const std::string prefix = paths.size() == 1 ? std::string() : argument_name(abs);
      walk_directory(abs, prefix, out);
    } else {
      throw InputError(given.string(), 0, 0,
                       "input path is neither a regular file nor a directory");
    }
  }
  std::sort(out.begin(), out.end(), [](const InputFile& a, const InputFile& b) {
    return a.relative_path < b.relative_path;
  });
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].relative_path == out[i - 1].relative_path) {
      throw InputError(out[i].absolute_path.string(), 0, 0,
                       "inputs " + out[i - 1].absolute_path.string() + " and " +
                           out[i].absolute_path.string() + " map to the same output path '" +
                           out[i].relative_path + "'");
    }
  }
  return out;
}

}  // namespace bloomshard::io
