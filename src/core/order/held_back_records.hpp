// Kept records held back from their outputs until the watermark passes them
// (the one order of all inputs, docs/inputs.md "Which copy of a duplicate is
// kept"). A kept record whose place in the order lies at or after the
// watermark may still be retracted by an earlier copy that some rank has not
// read yet; held in memory, a retracted record is simply never written, so
// its output needs no pass at the run's end. Records are held in the order
// they were read (this rank's tasks are read in the one order, so their
// positions only grow) and released in that order, so every output gets its
// records in input order. Beyond the budget the oldest held records are
// written anyway; a retraction of one of those is left to the end pass
// (app/round/retracted_copies.hpp). The bytes live in one mapping advised
// for huge pages that is reused, never freed, while the job runs: a held
// record costs one copy and no page fault after the first rounds (a vector
// that grew and shrank with the held bytes faulted ~4x more pages than the
// whole job without holding, measured at 3M records). Pure, no MPI.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/order/file_order.hpp"

namespace bloomshard::core {

/// What happened to a retracted copy on this rank.
enum class RetractedHere : std::uint8_t {
  kNotHere,   ///< this rank neither holds nor wrote it beyond the watermark
  kDropped,   ///< it was held: dropped, never written
  kInOutput,  ///< it was written over the budget: the end pass leaves it out
};

class HeldBackRecords {
 public:
  /// Writes the records of one output (a task's slot), adjacent in order.
  using Sink = std::function<void(std::uint32_t slot, std::span<const std::string_view> pieces)>;

  /// Holds at most about `budget_bytes` of record bytes (one record more).
  explicit HeldBackRecords(std::uint64_t budget_bytes);
  ~HeldBackRecords();
  HeldBackRecords(HeldBackRecords&&) noexcept;
  HeldBackRecords& operator=(HeldBackRecords&&) noexcept;

  /// Holds a copy of `bytes`, a kept record of output `slot` with
  /// order tag `tag` (0: untagged, never retracted; it waits only for the
  /// records held before it). Tags must come in ascending order_position()
  /// (else std::invalid_argument); a record of 4 GiB or more throws
  /// std::length_error.
  void hold(std::uint32_t slot, OrderTag tag, std::string_view bytes);

  /// A retraction of the kept copy `tag`: drops it if held (returns its
  /// bytes' size in `dropped_bytes`), or says it was written over the
  /// budget. Cost: a binary search.
  RetractedHere retract(OrderTag tag, std::uint64_t& dropped_bytes);

  /// Passes to `sink`, in order, every held record before `watermark` (an
  /// order_position: no retraction can reach them any more), then the
  /// oldest ones while more than the budget is held; those are remembered
  /// until the watermark passes them (retract() answers kInOutput).
  void release(std::uint64_t watermark, const Sink& sink);

  /// The slot of the oldest held record (its output, and every later one,
  /// must stay open), or nullopt when nothing is held.
  [[nodiscard]] std::optional<std::uint32_t> first_slot() const noexcept;
  /// Bytes held now, and the most held at once.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::uint64_t peak_bytes() const noexcept { return peak_bytes_; }
  /// Records written over the budget so far (each may need the end pass).
  [[nodiscard]] std::uint64_t written_over_budget() const noexcept { return over_budget_; }

 private:
  struct Held {              // 24 bytes: a held record costs its bytes and this
    std::uint64_t position;  // order_position(tag), or the one before for tag 0
    std::uint32_t length;    // its bytes follow the previous record's in buffer_
    std::uint32_t slot;
    bool untagged;  // tag 0: never retracted
    bool dropped;
  };
  void release_front(std::size_t count, const Sink& sink);
  char* reserve_bytes(std::size_t n);  // room for n more bytes at the end

  std::uint64_t budget_;
  std::uint64_t last_position_ = 0;  // of the record held last
  std::vector<Held> held_;           // from held_head_ on: held, in order
  std::size_t held_head_ = 0;
  struct Buffer;
  std::unique_ptr<Buffer> buffer_;  // held records' bytes in [buffer_head_, buffer_end_)
  std::size_t buffer_head_ = 0;
  std::size_t buffer_end_ = 0;
  std::uint64_t bytes_ = 0;  // of the held records not dropped
  std::uint64_t peak_bytes_ = 0;
  std::uint64_t over_budget_ = 0;
  std::deque<std::uint64_t> written_beyond_;  // positions over the budget, not final; ascending
  std::vector<std::string_view> pieces_;      // release_front()'s
};

}  // namespace bloomshard::core
