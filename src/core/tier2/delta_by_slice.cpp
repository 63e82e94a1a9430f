#include "core/tier2/delta_by_slice.hpp"

#include <algorithm>
#include <bit>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bloomshard::core::detail {
namespace {

// One cache line of entries, the unit build() writes.
constexpr std::size_t kLineBytes = 64;
constexpr std::size_t kLineEntries = kLineBytes / sizeof(DeltaEntry);
static_assert(sizeof(DeltaEntry) == 16 && kLineEntries == 4);

// Copies one line of entries to line-aligned `dst` past the caches where
// the CPU can (SSE2 streaming stores; a plain copy elsewhere).
inline void stream_line(DeltaEntry* dst, const DeltaEntry* src) noexcept {
#if defined(__SSE2__)
  // build() aligns runs to lines from a vector's data; _mm_stream_si128
  // needs that data 16-byte aligned, as operator new gives it here.
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16);
  auto* d = reinterpret_cast<__m128i*>(dst);
  const auto* v = reinterpret_cast<const __m128i*>(src);
  for (std::size_t k = 0; k < kLineEntries; ++k) _mm_stream_si128(d + k, _mm_loadu_si128(v + k));
#else
  std::copy_n(src, kLineEntries, dst);
#endif
}

// Orders the streaming stores before later reads of the array.
inline void stream_fence() noexcept {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace

// A counting sort by slice over one walk of the arena. The scatter is
// write-combined in software: each slice gathers one 64-byte line (4
// entries) in a small cache-resident buffer, and full lines go to
// line-aligned places with non-temporal stores (each slice's run starts on
// a line). A plain scatter of 50M entries to 2048 slices took twice as long
// (a read-for-ownership and often a TLB miss per 16-byte store).
void DeltaBySlice::build(const KeyArena& arena, std::span<const std::uint64_t> slice_counts) {
  const std::size_t num_local = slice_counts.size();
  std::uint64_t total = 0;
  for (const std::uint64_t c : slice_counts) total += c;
  entries_.clear();
  entries_.resize(total + kLineEntries * (num_local + 1));  // line padding and alignment
  const auto address = reinterpret_cast<std::uintptr_t>(entries_.data());
  start_.assign(num_local + 1, 0);
  count_.assign(slice_counts.begin(), slice_counts.end());
  start_[0] = (kLineBytes - address % kLineBytes) % kLineBytes / sizeof(DeltaEntry);
  for (std::size_t s = 0; s < num_local; ++s) {
    const std::uint64_t lines = (slice_counts[s] + kLineEntries - 1) / kLineEntries;
    start_[s + 1] = start_[s] + lines * kLineEntries;
  }
  std::vector<std::uint64_t> fill(start_.begin(), start_.end() - 1);
  std::vector<DeltaEntry> lines(num_local * kLineEntries);
  std::vector<std::uint8_t> held(num_local, 0);
  for (std::uint64_t at = 0; at < arena.used();) {
    const KeyRecord r = arena.record(at);
    const std::uint32_t s = r.local_slice;
    DeltaEntry* line = lines.data() + std::size_t{s} * kLineEntries;
    line[held[s]] = {r.fingerprint, at};
    if (++held[s] == kLineEntries) {
      stream_line(entries_.data() + fill[s], line);
      fill[s] += kLineEntries;
      held[s] = 0;
    }
    at = r.next;
  }
  stream_fence();
  for (std::size_t s = 0; s < num_local; ++s) {
    std::copy_n(lines.data() + s * kLineEntries, held[s], entries_.data() + fill[s]);
  }
}

void DeltaBySlice::release() noexcept {
  std::vector<DeltaEntry>().swap(entries_);
  std::vector<std::uint64_t>().swap(start_);
  std::vector<std::uint64_t>().swap(count_);
}

std::vector<DeltaEntry> sorted_slice(std::span<const DeltaEntry> entries, const KeyArena& arena) {
  const auto less = [&arena](const DeltaEntry& a, const DeltaEntry& b) {
    return a.fingerprint != b.fingerprint ? a.fingerprint < b.fingerprint
                                          : arena.key(a.offset) < arena.key(b.offset);
  };
  const std::size_t n = entries.size();
  if (n < 256) {
    std::vector<DeltaEntry> v(entries.begin(), entries.end());
    std::sort(v.begin(), v.end(), less);
    return v;
  }
  const unsigned bits = std::min(16U, static_cast<unsigned>(std::bit_width(n)) - 1U);
  const unsigned shift = 64U - bits;
  std::vector<std::size_t> start((std::size_t{1} << bits) + 1, 0);
  for (const DeltaEntry& e : entries) ++start[static_cast<std::size_t>(e.fingerprint >> shift) + 1];
  for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<DeltaEntry> out(n);
  {
    std::vector<std::size_t> fill(start.begin(), start.end() - 1);
    for (const DeltaEntry& e : entries)
      out[fill[static_cast<std::size_t>(e.fingerprint >> shift)]++] = e;
  }
  for (std::size_t b = 0; b + 1 < start.size(); ++b) {
    if (start[b + 1] - start[b] > 1) {
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(start[b]),
                out.begin() + static_cast<std::ptrdiff_t>(start[b + 1]), less);
    }
  }
  return out;
}

}  // namespace bloomshard::core::detail
