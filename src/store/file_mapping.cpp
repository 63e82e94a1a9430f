// The read-only mapping of a checkpoint file (store/file_mapping.hpp).
#include "bloomshard/store/file_mapping.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "bloomshard/store/format_error.hpp"

namespace bloomshard::store {

std::shared_ptr<const FileMapping> FileMapping::map(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw CheckpointError("cannot open " + path.string() + " to map it: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    throw CheckpointError("cannot stat " + path.string() + ": " + err);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      throw CheckpointError("cannot mmap " + path.string() + ": " + err);
    }
  }
  ::close(fd);  // the mapping keeps the file open
  return std::shared_ptr<const FileMapping>(new FileMapping(data, size));
}

FileMapping::~FileMapping() {
  if (data_ != nullptr) ::munmap(data_, static_cast<std::size_t>(size_));
}

std::span<const std::byte> FileMapping::range(std::uint64_t offset, std::uint64_t length,
                                              const char* what) const {
  if (length == 0) return {};
  if (offset > size_ || length > size_ - offset) {
    throw CheckpointError(std::string(what) + " lies beyond the end of the file (offset " +
                          std::to_string(offset) + " + " + std::to_string(length) + " > " +
                          std::to_string(size_) + " bytes): the file is truncated");
  }
  return {static_cast<const std::byte*>(data_) + offset, static_cast<std::size_t>(length)};
}

void FileMapping::advise_random() const noexcept {
  if (data_ != nullptr) ::madvise(data_, static_cast<std::size_t>(size_), MADV_RANDOM);
}

void FileMapping::advise_willneed() const noexcept { advise_willneed(0, size_); }

void FileMapping::advise_willneed(std::uint64_t offset, std::uint64_t length) const noexcept {
  if (data_ == nullptr || offset >= size_ || length == 0) return;
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t begin = offset / page * page;  // mmap's base is page aligned
  const std::uint64_t end = std::min(size_, offset + std::min(length, size_ - offset));
  void* start = static_cast<char*>(data_) + begin;
  const auto bytes = static_cast<std::size_t>(end - begin);
  // Populate the page tables too (reads what is not cached): a lookup's
  // first touch of a page is then not a minor fault either. Older kernels:
  // readahead only.
  // Readahead first, in large requests (a populate alone under
  // MADV_RANDOM read 4 KiB at a time: 6 s per 30 MB run here).
  ::madvise(start, bytes, MADV_WILLNEED);
  (void)::madvise(start, bytes, MADV_POPULATE_READ);
}

}  // namespace bloomshard::store
