// fsync of one file or directory (io/durable/durable_file.hpp).
#include "io/durable/durable_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "io/checkpoint/checkpoint_error.hpp"

namespace bloomshard::io {

void fsync_path(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw CheckpointError("cannot open " + path.string() + " to fsync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const std::string err = rc != 0 ? std::strerror(errno) : std::string();
  ::close(fd);
  if (rc != 0) throw CheckpointError("fsync of " + path.string() + " failed: " + err);
}

}  // namespace bloomshard::io
