// Tier-2 delta storage, internal to src/core: 64 KiB blocks carved from
// 2 MiB huge-page slabs, and the byte arena of [varint length][key bytes]
// records the delta index points into. Not thread-safe for writes; reads
// (get/record) are safe while nothing appends.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace bloomshard::core::detail {

inline constexpr std::size_t kChunkBytes = std::size_t{1} << 16;
inline constexpr std::size_t kBigRecord = kChunkBytes / 16;
inline constexpr std::uint64_t kMaxChunks = std::uint64_t{1} << 24;

inline std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80U) {
    v >>= 7;
    ++n;
  }
  return n;
}

// 64 KiB blocks (arena chunks, entry pages) carved from 2 MiB slabs that ask
// the kernel for transparent huge pages (madvise; a hint, ignored where THP
// is off). The merge reads arena records in fingerprint order, i.e. at
// random: with 4 KiB pages nearly every such read missed the TLB, which was
// about 3/4 of the merge time at 5M keys (0.38 s); a 2 MiB page covers 32
// blocks. Costs up to one slab (2 MiB) of slack per shard.
class Slabs {
 public:
  static constexpr std::size_t kSlabBytes = std::size_t{2} << 20;

  Slabs() = default;
  Slabs(Slabs&& o) noexcept
      : slabs_(std::exchange(o.slabs_, {})), used_(std::exchange(o.used_, kSlabBytes)) {}
  Slabs& operator=(Slabs&& o) noexcept {
    if (this != &o) {
      release();
      slabs_ = std::exchange(o.slabs_, {});
      used_ = std::exchange(o.used_, kSlabBytes);
    }
    return *this;
  }
  Slabs(const Slabs&) = delete;
  Slabs& operator=(const Slabs&) = delete;
  ~Slabs() { release(); }

  // A block of kChunkBytes, not zeroed.
  char* take() {
    if (used_ + kChunkBytes > kSlabBytes) {
      slabs_.push_back(map_slab());
      used_ = 0;
    }
    char* p = slabs_.back() + used_;
    used_ += kChunkBytes;
    return p;
  }
  [[nodiscard]] std::uint64_t bytes() const noexcept {
    return slabs_.size() * kSlabBytes + slabs_.capacity() * sizeof(slabs_[0]);
  }

 private:
  // 2 MiB aligned, so that the whole slab can be one huge page.
  static char* map_slab() {
    void* raw =
        ::mmap(nullptr, 2 * kSlabBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto addr = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (addr + kSlabBytes - 1) & ~(std::uintptr_t{kSlabBytes} - 1);
    if (aligned > addr) ::munmap(raw, aligned - addr);
    const std::uintptr_t tail = aligned + kSlabBytes;
    if (addr + 2 * kSlabBytes > tail)
      ::munmap(reinterpret_cast<void*>(tail), addr + 2 * kSlabBytes - tail);
    auto* slab = reinterpret_cast<char*>(aligned);
#ifdef MADV_HUGEPAGE
    (void)::madvise(slab, kSlabBytes, MADV_HUGEPAGE);
#endif
    return slab;
  }
  void release() noexcept {
    for (char* p : slabs_) ::munmap(p, kSlabBytes);
    slabs_.clear();
  }

  std::vector<char*> slabs_;
  std::size_t used_ = kSlabBytes;
};

class ByteArena {
 public:
  // Returns (chunk, offset) of the new record.
  std::pair<std::uint64_t, std::uint64_t> append(std::string_view key) {
    const std::size_t rec = varint_size(key.size()) + key.size();
    char* dst = nullptr;
    std::uint64_t chunk = 0;
    std::uint64_t offset = 0;
    if (rec > kBigRecord) {
      chunk = new_big_chunk(rec);
      dst = chunks_.back();
    } else {
      if (!has_current_ || used_ + rec > kChunkBytes) {
        current_ = add_chunk(slabs_.take());
        has_current_ = true;
        used_ = 0;
      }
      chunk = current_;
      offset = used_;
      dst = chunks_[current_] + used_;
      used_ += rec;
    }
    std::uint64_t v = key.size();
    while (v >= 0x80U) {
      *dst++ = static_cast<char>((v & 0x7FU) | 0x80U);
      v >>= 7;
    }
    *dst++ = static_cast<char>(v);
    if (!key.empty()) std::memcpy(dst, key.data(), key.size());
    return {chunk, offset};
  }

  [[nodiscard]] const char* record(std::uint64_t chunk, std::uint64_t offset) const noexcept {
    return chunks_[chunk] + offset;
  }

  [[nodiscard]] std::string_view get(std::uint64_t chunk, std::uint64_t offset) const noexcept {
    const char* p = record(chunk, offset);
    std::uint64_t len = 0;
    unsigned shift = 0;
    for (;;) {
      const auto b = static_cast<unsigned char>(*p++);
      len |= std::uint64_t{b & 0x7FU} << shift;
      if (b < 0x80U) break;
      shift += 7;
    }
    return {p, static_cast<std::size_t>(len)};
  }

  // Entry pages share the slabs (one pool fills the huge pages better).
  [[nodiscard]] char* take_block() { return slabs_.take(); }

  [[nodiscard]] std::uint64_t bytes() const noexcept {
    return slabs_.bytes() + big_allocated_ + chunks_.capacity() * sizeof(chunks_[0]) +
           big_.capacity() * sizeof(big_[0]);
  }

 private:
  std::uint64_t add_chunk(char* p) {
    if (chunks_.size() >= kMaxChunks) {
      throw std::length_error("exact shard delta: more than 2^24 arena chunks; checkpoint sooner");
    }
    chunks_.push_back(p);
    return chunks_.size() - 1;
  }
  std::uint64_t new_big_chunk(std::size_t size) {
    if (chunks_.size() >= kMaxChunks) (void)add_chunk(nullptr);  // throws
    big_.push_back(std::make_unique_for_overwrite<char[]>(size));
    big_allocated_ += size;
    return add_chunk(big_.back().get());
  }

  Slabs slabs_;
  std::vector<char*> chunks_;                 // into slabs_ or big_
  std::vector<std::unique_ptr<char[]>> big_;  // records over kBigRecord, one each
  std::uint64_t big_allocated_ = 0;
  std::uint64_t current_ = 0;
  std::size_t used_ = 0;
  bool has_current_ = false;
};

}  // namespace bloomshard::core::detail
