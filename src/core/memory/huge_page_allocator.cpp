#include "bloomshard/core/huge_page_allocator.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace bloomshard::core {
namespace {

constexpr std::size_t kLineBytes = 64;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeThreshold = std::size_t{4} << 20;

}  // namespace

void* allocate_on_huge_pages(std::size_t bytes) {
  if (bytes < kHugeThreshold) {
    return ::operator new (bytes, std::align_val_t{kLineBytes});
  }
  void* p = ::operator new (bytes, std::align_val_t{kHugePage});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: without THP support the call fails and nothing changes.
  (void)::madvise(p, bytes - bytes % kHugePage, MADV_HUGEPAGE);
#endif
  return p;
}

void free_on_huge_pages(void* p, std::size_t bytes) noexcept {
  ::operator delete (p, std::align_val_t{bytes < kHugeThreshold ? kLineBytes : kHugePage});
}

}  // namespace bloomshard::core
