// One round's worth of this rank's records: the kept-or-not candidates with
// their keys, copied into one arena so they outlive the reader's buffer
// until the verdicts come back. Bounded by --batch-bytes (plus one record).
// A record has one key (--unit record) or any number, zero included
// (--unit paragraph: one per keyed paragraph); keys() lists them record
// after record, so verdicts come back in that order. A long line is not
// copied: add_owned() keeps the reader buffer it was read into.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "bloomshard/core/two_tier.hpp"
#include "bloomshard/io/record_reader.hpp"

namespace bloomshard::app {

class RoundBatch {
 public:
  /// Forgets the previous round, keeping capacity.
  void clear() noexcept;

  /// Adds a record (line bytes + terminator, written to `file_slot`'s
  /// output when kept) and its normalized key.
  void add(std::uint32_t file_slot, std::string_view line, std::string_view terminator,
           const core::KeyHash& hash, std::string_view key);

  /// add() for a record whose line (and terminator, right after it) lives in
  /// `owner`, a buffer taken from the reader: kept until clear() instead of
  /// copied. Counts in bytes() as a copy would.
  void add_owned(io::LineBuffer owner, std::uint32_t file_slot, std::string_view line,
                 std::string_view terminator, const core::KeyHash& hash, std::string_view key);

  /// Adds a record with no key yet; add_key() gives it its keys.
  void add_record(std::uint32_t file_slot, std::string_view line, std::string_view terminator);

  /// Adds a key (copied) to the record added last.
  void add_key(const core::KeyHash& hash, std::string_view key);

  /// Index of record i's first key in keys(), and how many it has.
  [[nodiscard]] std::size_t first_key(std::size_t i) const noexcept {
    return records_[i].first_key;
  }
  [[nodiscard]] std::size_t key_count(std::size_t i) const noexcept {
    return records_[i].key_count;
  }

  /// Builds the key views (call once after the last add(); views are valid
  /// until the next add() or clear()).
  [[nodiscard]] std::span<const core::KeyRef> keys();

  [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return arena_.size() + owned_bytes_; }
  [[nodiscard]] std::uint32_t file_slot(std::size_t i) const noexcept {
    return records_[i].file_slot;
  }
  /// Line bytes with their terminator, exactly as read.
  [[nodiscard]] std::string_view record_bytes(std::size_t i) const noexcept;

 private:
  struct Entry {
    std::uint32_t file_slot;
    std::uint64_t record_offset;  // line + terminator, in the arena or from `owned`
    std::uint64_t record_length;
    const char* owned;      // the record's owned buffer, or nullptr: the arena
    std::size_t first_key;  // into keys_of_
    std::size_t key_count;
  };
  struct KeyEntry {
    std::uint32_t key_length;
    std::uint64_t key_offset;
    core::KeyHash hash;
    const char* owned;  // key_offset is from this owned buffer, or nullptr: the arena
  };
  std::vector<char> arena_;
  std::vector<Entry> records_;
  std::vector<KeyEntry> keys_of_;
  std::vector<core::KeyRef> keys_;
  std::vector<io::LineBuffer> owners_;  // add_owned's buffers
  std::uint64_t owned_bytes_ = 0;       // their records' bytes
};

}  // namespace bloomshard::app
