// Large zeroed arrays on transparent huge pages, internal to src/core. The
// Bloom layers and the tier-2 delta index are probed at random; on 4 KiB
// pages nearly every probe of a 10-60 MB array also misses the TLB (the page
// walk showed as the prefetch instruction itself in profiles). The kernel here
// runs THP in "madvise" mode, so the hint must be given before the first
// touch: reserve, advise, then fill. Arrays under 2 MiB are left alone.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bloomshard::core::detail {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

/// Replaces `v` with `n` copies of `value`, its storage advised for huge
/// pages (MADV_HUGEPAGE on the 2 MiB-aligned part; a hint the kernel may
/// ignore). The old storage is freed first, so peak memory is the new array.
template <class T>
void assign_on_huge_pages(std::vector<T>& v, std::size_t n, const T& value) {
  std::vector<T>().swap(v);
  v.reserve(n);
#ifdef MADV_HUGEPAGE
  const std::size_t bytes = n * sizeof(T);
  if (bytes >= 2 * kHugePageBytes) {
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    const std::uintptr_t last = (begin + bytes) & ~(kHugePageBytes - 1);
    if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
#endif
  v.assign(n, value);
}

}  // namespace bloomshard::core::detail
