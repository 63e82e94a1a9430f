#include "core/memory/huge_page_mapping.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

namespace bloomshard::core::detail {
namespace {

constexpr std::size_t kSmallPage = 4096;

std::size_t round_up(std::size_t bytes, std::size_t unit) {
  return (bytes + unit - 1) / unit * unit;
}

// Mappings of 2 MiB and more are whole huge pages, 2 MiB aligned, so that
// every page can be a huge one (an unaligned start would leave the ends on
// small pages, and mremap could not move whole huge pages).
std::size_t mapping_size(std::size_t bytes) {
  return bytes >= HugePageMapping::kHugePageBytes ? round_up(bytes, HugePageMapping::kHugePageBytes)
                                                  : round_up(bytes, kSmallPage);
}

void advise_huge(char* p, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  if (bytes >= HugePageMapping::kHugePageBytes) (void)::madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// A fresh anonymous mapping of `bytes` (a mapping_size()), 2 MiB aligned
// when it is huge-page sized: over-map by 2 MiB and trim both ends.
char* map_fresh(std::size_t bytes) {
  const std::size_t align =
      bytes >= HugePageMapping::kHugePageBytes ? HugePageMapping::kHugePageBytes : kSmallPage;
  const std::size_t over = bytes + align - kSmallPage;
  void* raw = ::mmap(nullptr, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto addr = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t begin = (addr + align - 1) & ~(std::uintptr_t{align} - 1);
  if (begin > addr) ::munmap(raw, begin - addr);
  const std::uintptr_t end = begin + bytes;
  if (addr + over > end) ::munmap(reinterpret_cast<void*>(end), addr + over - end);
  auto* p = reinterpret_cast<char*>(begin);
  advise_huge(p, bytes);
  return p;
}

}  // namespace

HugePageMapping::HugePageMapping(HugePageMapping&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

HugePageMapping& HugePageMapping::operator=(HugePageMapping&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

void HugePageMapping::grow_to(std::size_t bytes) {
  if (bytes <= size_) return;
  const std::size_t size = mapping_size(bytes);
  if (data_ == nullptr) {
    data_ = map_fresh(size);
    size_ = size;
    return;
  }
#if defined(__linux__) && defined(MREMAP_FIXED)
  // Move the pages into a fresh aligned range (page tables, not bytes):
  // reserve it, then let mremap replace it.
  char* target = map_fresh(size);
  void* moved = ::mremap(data_, size_, size, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  if (moved == MAP_FAILED) {
    ::munmap(target, size);
    throw std::bad_alloc();
  }
  data_ = static_cast<char*>(moved);
  advise_huge(data_, size);  // the moved range keeps its advice; the new tail gets it here
#else
  char* target = map_fresh(size);
  std::memcpy(target, data_, size_);
  ::munmap(data_, size_);
  data_ = target;
#endif
  size_ = size;
}

void HugePageMapping::prefault(std::size_t bytes) noexcept {
  if (bytes > size_) bytes = size_;
  if (bytes == 0) return;
#ifdef MADV_POPULATE_WRITE
  if (::madvise(data_, round_up(bytes, kSmallPage), MADV_POPULATE_WRITE) == 0) return;
#endif
  // Older kernels: touch one byte per page (rewriting what it holds).
  for (std::size_t i = 0; i < bytes; i += kSmallPage) {
    volatile char* p = data_ + i;
    *p = *p;
  }
}

void HugePageMapping::zero(std::size_t bytes) noexcept {
  if (bytes > size_) bytes = size_;
  if (bytes != 0) std::memset(data_, 0, bytes);
}

void HugePageMapping::release() noexcept {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace bloomshard::core::detail
