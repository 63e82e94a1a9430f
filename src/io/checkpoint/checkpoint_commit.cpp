// See checkpoint_commit.hpp.
#include "io/checkpoint/checkpoint_commit.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "io/checkpoint/checkpoint_generations.hpp"

namespace bloomshard::io {

// This rank's bytes of `file` durable (fdatasync through a descriptor of our
// own: MPI-IO and HDF5 closed theirs). Returns the error text.
std::string sync_own_bytes(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open " + file.string() + " to sync it: " + std::strerror(errno);
  const int rc = ::fdatasync(fd);
  const std::string err = rc != 0 ? std::strerror(errno) : std::string();
  ::close(fd);
  if (rc != 0) return "fdatasync of " + file.string() + ": " + err;
  return {};
}

// Rank 0: checks that the state dir's file system has room for this
// checkpoint's two files by reserving it (posix_fallocate of a scratch file,
// deleted again at once). Why: an ENOSPC inside HDF5's collective metadata
// flush at H5Fclose leaves the ranks in different collectives (rank 0 in
// MPI_File_close, the others in the metadata sync point: a hang, reproduced
// on a full 12 MiB ext4), so the store refuses before HDF5 starts. Limit: a
// file system that another process fills between the reservation and the
// write can still fail inside HDF5; the stall watchdog covers that. Returns
// the error text.
std::string reserve_space(const std::filesystem::path& dir, std::uint64_t bytes) {
  const std::filesystem::path scratch = dir / ".reserve.tmp";
  const int fd = ::open(scratch.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create " + scratch.string() + ": " + std::strerror(errno);
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  ::close(fd);
  std::error_code ec;
  std::filesystem::remove(scratch, ec);
  if (rc == EOPNOTSUPP || rc == EINVAL) return {};  // no fallocate here: write and see
  if (rc != 0) {
    return std::string(std::strerror(rc)) + ": the checkpoint needs about " +
           std::to_string(bytes >> 20) + " MiB in " + dir.string();
  }
  return {};
}

// Rank 0: run files that no generation left after pruning to `keep` will
// reference. Reads the run lists of those generations (headers only); when
// one cannot be read, nothing is deleted (a later commit tries again).
std::vector<std::filesystem::path> unreferenced_runs(const std::filesystem::path& state_dir,
                                                     std::uint64_t committed, int keep,
                                                     std::span<const CheckpointRunRef> mine) {
  std::vector<std::uint64_t> referenced;
  for (const CheckpointRunRef& r : mine) referenced.push_back(r.id);
  int kept = 0;
  for (const std::uint64_t g : list_generations(state_dir)) {
    if (g == committed) {
      ++kept;
      continue;
    }
    if (g < committed && kept >= keep) continue;  // pruned with this commit
    if (g < committed) ++kept;
    try {
      for (const CheckpointRunRef& r :
           read_checkpoint_summary(generation_path(state_dir, g)).runs) {
        referenced.push_back(r.id);
      }
    } catch (const std::exception&) {
      return {};  // unknown references: keep every run
    }
  }
  std::vector<std::filesystem::path> out;
  for (const std::filesystem::path& p : list_run_files(state_dir)) {
    const std::optional<std::uint64_t> id = run_id_of(p);
    const bool tmp = p.extension() == ".tmp";
    if (tmp || std::find(referenced.begin(), referenced.end(), *id) == referenced.end()) {
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace bloomshard::io
