// One round's worth of this rank's records: the kept-or-not candidates with
// their keys, held until the verdicts come back and the kept ones are
// written. Bounded by --batch-bytes (plus one record), counted as if every
// record and every key not inside its line were copied.
// A record has one key (--unit record) or any number, zero included
// (--unit paragraph: one per keyed paragraph); keys() lists them record
// after record, so verdicts come back in that order.
//
// Zero copy: the reader's buffers can be kept (keep()) and
// records added with add_kept() then stay where the reader put them; only
// keys that are not a piece of their line (JSON values, normalized or
// digested keys) are copied, into an arena of 1 MiB chunks whose addresses
// never move, so key views are final when added. Records added with add()
// or add_record() are copied into that arena; add_kept() and
// add_kept_record() leave them in the kept buffers.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "bloomshard/core/two_tier.hpp"
#include "core/order/file_order.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {

class RoundBatch {
 public:
  /// Forgets the previous round and lets go of the kept buffers, keeping
  /// the arena's standard chunks.
  void clear() noexcept;

  /// Keeps `buffer` (RecordReader::share_buffer()) until clear(). Keeping
  /// the buffer kept last again costs a pointer compare.
  void keep(io::BufferRef buffer);
  /// The buffers given to keep() since clear().
  [[nodiscard]] std::span<const io::BufferRef> kept_buffers() const noexcept { return kept_; }

  /// Adds a record (line bytes + terminator, copied; written to
  /// `file_slot`'s output when kept) and its normalized key.
  void add(std::uint32_t file_slot, std::string_view line, std::string_view terminator,
           const core::KeyHash& hash, std::string_view key);

  /// How a key that is a piece of its line counts toward bytes(): not at
  /// all, or as the copy it would be otherwise. A JSON value is charged:
  /// the extractor hands some as views into the line and others as parsed
  /// copies, and that must not move where a round ends (which decides which
  /// copy of a key wins across ranks).
  enum class InLineKey : std::uint8_t { kFree, kCharged };

  /// add() for a record whose line, with its terminator bytes right after
  /// it, lies in a buffer given to keep(): not copied.
  void add_kept(std::uint32_t file_slot, std::string_view line, std::string_view terminator,
                const core::KeyHash& hash, std::string_view key,
                InLineKey in_line = InLineKey::kFree) {
    push_record(file_slot, line.data(), line.size() + terminator.size());
    push_key(hash, key, line, line.data(), in_line);
  }

  /// Adds a record (copied) with no key yet; add_key() gives it its keys.
  void add_record(std::uint32_t file_slot, std::string_view line, std::string_view terminator);

  /// add_record() for a record whose line, with its terminator bytes right
  /// after it, lies in a buffer given to keep(): not copied (a sketched
  /// record of --unit minhash: a few KB that would be copied for nothing).
  void add_kept_record(std::uint32_t file_slot, std::string_view line,
                       std::string_view terminator) {
    push_record(file_slot, line.data(), line.size() + terminator.size());
  }

  /// Adds a key (copied) to the record added last.
  void add_key(const core::KeyHash& hash, std::string_view key);

  /// Index of record i's first key in keys(), and how many it has.
  [[nodiscard]] std::size_t first_key(std::size_t i) const noexcept {
    return records_[i].first_key;
  }
  [[nodiscard]] std::size_t key_count(std::size_t i) const noexcept {
    return records_[i].key_count;
  }

  /// Every record's keys, record after record (valid until clear()).
  [[nodiscard]] std::span<const core::KeyRef> keys() const noexcept { return keys_; }

  /// Gives the key added last its order tag (core/order/file_order.hpp). A feed
  /// that tags keys tags every key it adds (0 when not from a split input),
  /// so that tags() runs parallel to keys().
  void tag_last_key(core::OrderTag tag) { tags_.push_back(tag); }
  /// The keys' order tags: empty, or one per key.
  [[nodiscard]] std::span<const core::OrderTag> tags() const noexcept { return tags_; }

  [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
  /// Bytes the batch counts against --batch-bytes: every record's line and
  /// terminator, and every key that is not a piece of its line.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::uint32_t file_slot(std::size_t i) const noexcept {
    return records_[i].file_slot;
  }
  /// Line bytes with their terminator, exactly as read (valid until clear()).
  [[nodiscard]] std::string_view record_bytes(std::size_t i) const noexcept {
    return {records_[i].bytes, records_[i].length};
  }

 private:
  struct Entry {
    const char* bytes;  // line + terminator, in a kept buffer or the arena
    std::uint64_t length;
    std::uint32_t file_slot;
    std::uint32_t key_count;
    std::size_t first_key;  // into keys_
  };
  // Bump allocator over chunks that never move.
  class Arena {
   public:
    char* copy(std::string_view bytes) {
      if (static_cast<std::size_t>(end_ - next_) < bytes.size())
        return copy_to_new_chunk(bytes, {});
      char* at = next_;
      if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
      next_ += bytes.size();
      return at;
    }
    char* copy(std::string_view bytes, std::string_view more);
    void clear() noexcept;

   private:
    char* copy_to_new_chunk(std::string_view bytes, std::string_view more);
    struct Chunk {
      std::unique_ptr<char[]> data;
      std::size_t size;
    };
    std::vector<Chunk> chunks_;
    std::size_t current_ = 0;  // chunk being filled (== chunks_.size(): none yet)
    char* next_ = nullptr;     // its first free byte
    char* end_ = nullptr;      // its end
  };

  void push_record(std::uint32_t file_slot, const char* bytes, std::size_t length) {
    records_.push_back({bytes, length, file_slot, 0, keys_.size()});
    bytes_ += length;
  }
  // A key that is a piece of its line (plain lines, unnormalized) is not
  // copied: its view moves with the line to where the line is stored.
  // Addresses compare as integers: the two views may belong to different
  // buffers, where pointer comparison is unspecified.
  void push_key(const core::KeyHash& hash, std::string_view key, std::string_view line,
                const char* stored_line, InLineKey in_line = InLineKey::kFree) {
    const auto l = reinterpret_cast<std::uintptr_t>(line.data());
    const auto k = reinterpret_cast<std::uintptr_t>(key.data());
    std::string_view stored;
    if (k >= l && k + key.size() <= l + line.size()) {
      stored = std::string_view(stored_line + (k - l), key.size());
      if (in_line == InLineKey::kCharged) bytes_ += key.size();
    } else {
      stored = std::string_view(arena_.copy(key), key.size());
      bytes_ += key.size();
    }
    keys_.push_back({hash, stored});
    ++records_.back().key_count;
  }

  Arena arena_;
  std::vector<Entry> records_;
  std::vector<core::KeyRef> keys_;
  std::vector<core::OrderTag> tags_;  // tag_last_key()'s, parallel to keys_
  std::vector<io::BufferRef> kept_;   // keep()'s buffers
  std::uint64_t bytes_ = 0;
};

}  // namespace bloomshard::app
