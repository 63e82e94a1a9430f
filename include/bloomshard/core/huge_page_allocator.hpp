// A standard allocator for large arrays read at random (the Bloom layers'
// words): cache-line aligned always, and from 4 MiB on 2 MiB aligned and
// advised to use transparent huge pages (Linux madvise; THP "madvise" mode
// is the Debian default, so the advice must come before the first touch,
// which the vector's zero fill is). A hint: without THP support nothing
// changes but the alignment.
#pragma once

#include <cstddef>
#include <limits>
#include <new>

namespace bloomshard::core {

/// `bytes` of storage, 64-byte aligned; huge-page advised and 2 MiB aligned
/// from 4 MiB on. Throws std::bad_alloc.
[[nodiscard]] void* allocate_on_huge_pages(std::size_t bytes);
/// Frees what allocate_on_huge_pages(bytes) returned.
void free_on_huge_pages(void* p, std::size_t bytes) noexcept;

/// Standard allocator over allocate_on_huge_pages.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  explicit HugePageAllocator(const HugePageAllocator<U>& /*unused*/) noexcept {}
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
      throw std::bad_array_new_length();
    }
    return static_cast<T*>(allocate_on_huge_pages(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { free_on_huge_pages(p, n * sizeof(T)); }
  template <class U>
  friend bool operator==(const HugePageAllocator& /*a*/,
                         const HugePageAllocator<U>& /*b*/) noexcept {
    return true;
  }
};

}  // namespace bloomshard::core
