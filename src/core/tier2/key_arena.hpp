// The tier-2 delta's keys, internal to src/core: one append-only byte arena
// of records, in insertion order, back to back,
//     [fingerprint: 8 bytes][local slice: varint][length: varint][key bytes]
// addressed by byte offset (stable while the arena grows: offsets, not
// pointers, are what the delta index holds). A record carries everything
// the delta knows about its key, so
//   - a lookup that the index sends here reads one record (one or two cache
//     lines for keys under ~50 bytes) and compares fingerprint, slice and bytes;
//   - growing the index and bucketing the delta by slice for a checkpoint
//     are one sequential walk of the arena (next()), not a random read per key.
// Costs 10-12 bytes per key over the key bytes (fingerprint, a 1-3 byte
// slice, a 1-byte length under 128 bytes). Limits: < 1 TiB of records
// (the index's 40-bit offsets), else std::length_error. Reads are safe
// while nothing appends; an append may move the arena (not the offsets).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/memory/huge_page_mapping.hpp"

namespace bloomshard::core::detail {

/// The offsets a delta index can hold: [0, kMaxArenaBytes).
inline constexpr std::uint64_t kMaxArenaBytes = std::uint64_t{1} << 40;

/// One decoded record.
struct KeyRecord {
  std::uint64_t fingerprint = 0;
  std::uint32_t local_slice = 0;
  std::string_view key;
  std::uint64_t next = 0;  ///< offset of the record after this one
};

class KeyArena {
 public:
  /// Appends a record and returns its offset.
  std::uint64_t append(std::uint64_t fingerprint, std::uint32_t local_slice, std::string_view key) {
    const std::size_t need =
        kFingerprintBytes + varint_size(local_slice) + varint_size(key.size()) + key.size();
    if (used_ + need > mapping_.size()) grow(need);
    const std::uint64_t at = used_;
    char* p = mapping_.data() + at;
    std::memcpy(p, &fingerprint, kFingerprintBytes);
    p = put_varint(p + kFingerprintBytes, local_slice);
    p = put_varint(p, key.size());
    if (!key.empty()) std::memcpy(p, key.data(), key.size());
    used_ += need;
    // The lines ahead of the end are fetched before the appends reach them
    // (fresh lines are write misses; ~8% of the micro benchmark measured).
    __builtin_prefetch(mapping_.data() + used_ + kAppendAhead, 1);
    return at;
  }

  /// The record at `offset` (an offset append() returned).
  [[nodiscard]] KeyRecord record(std::uint64_t offset) const noexcept {
    KeyRecord r;
    const char* p = mapping_.data() + offset;
    std::memcpy(&r.fingerprint, p, kFingerprintBytes);
    p += kFingerprintBytes;
    std::uint64_t v = 0;
    p = get_varint(p, v);
    r.local_slice = static_cast<std::uint32_t>(v);
    p = get_varint(p, v);
    r.key = {p, static_cast<std::size_t>(v)};
    r.next = static_cast<std::uint64_t>(p - mapping_.data()) + v;
    return r;
  }
  [[nodiscard]] std::uint64_t fingerprint(std::uint64_t offset) const noexcept {
    std::uint64_t fp = 0;
    std::memcpy(&fp, mapping_.data() + offset, kFingerprintBytes);
    return fp;
  }
  [[nodiscard]] std::string_view key(std::uint64_t offset) const noexcept {
    return record(offset).key;
  }
  /// True if the record at `offset` holds exactly this key.
  [[nodiscard]] bool holds(std::uint64_t offset, std::uint64_t fingerprint,
                           std::uint32_t local_slice, std::string_view key) const noexcept {
    const KeyRecord r = record(offset);
    return r.fingerprint == fingerprint && r.local_slice == local_slice && r.key == key;
  }

  /// Hints the CPU to fetch a record whose key is `key_size` bytes: its
  /// first line and, for a record that spans lines, the line of its end.
  void prefetch(std::uint64_t offset, std::size_t key_size) const noexcept {
    const char* p = mapping_.data() + offset;
    __builtin_prefetch(p);
    const char* last = p + kFingerprintBytes + 4 + key_size;  // 4: the two varints, typically
    if ((reinterpret_cast<std::uintptr_t>(last) ^ reinterpret_cast<std::uintptr_t>(p)) >= 64) {
      __builtin_prefetch(last);
    }
  }

  /// Bytes of records held (what the arena's next interval reuses).
  [[nodiscard]] std::uint64_t used() const noexcept { return used_; }
  /// Bytes mapped (resident once touched).
  [[nodiscard]] std::uint64_t mapped() const noexcept { return mapping_.size(); }
  /// Forgets every record, keeping the memory for the next ones.
  void clear() noexcept { used_ = 0; }
  /// Forgets every record and unmaps the memory.
  void release() noexcept {
    used_ = 0;
    mapping_.release();
  }

 private:
  static constexpr std::size_t kFingerprintBytes = 8;
  static constexpr std::size_t kAppendAhead = 1024;

  static std::size_t varint_size(std::uint64_t v) noexcept {
    std::size_t n = 1;
    while (v >= 0x80U) {
      v >>= 7;
      ++n;
    }
    return n;
  }
  static char* put_varint(char* p, std::uint64_t v) noexcept {
    while (v >= 0x80U) {
      *p++ = static_cast<char>((v & 0x7FU) | 0x80U);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    return p;
  }
  static const char* get_varint(const char* p, std::uint64_t& v) noexcept {
    auto b = static_cast<unsigned char>(*p++);
    v = b & 0x7FU;
    for (unsigned shift = 7; b >= 0x80U; shift += 7) {
      b = static_cast<unsigned char>(*p++);
      v |= std::uint64_t{b & 0x7FU} << shift;
    }
    return p;
  }

  void grow(std::size_t need);  // key_arena.cpp

  HugePageMapping mapping_;
  std::uint64_t used_ = 0;
};

}  // namespace bloomshard::core::detail
