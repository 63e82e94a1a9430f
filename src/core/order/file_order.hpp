// First copy in file order across the ranges of a split input.
//
// A big uncompressed input read as line-aligned byte ranges by several
// ranks is decided in arrival order, so a later copy of a key (in range 3)
// can reach its owner before an earlier one (in range 1). A one-reader run
// keeps the earliest copy in the file. To keep the same copy, every key of
// a split input travels with an order tag (the input and the byte offset of
// its record), and the owner remembers, for each key whose kept copy came
// from a range k > 0, that copy's tag. When a copy of the same input with a
// smaller offset arrives later and tier 2 calls it a duplicate, the owner
// keeps it instead (its verdict becomes kNew) and *retracts* the copy kept
// before: that record was written to a range's output part already, and
// the join of the input leaves it out (app/split/range_join.hpp). Range 0 is read
// in order, so no copy in it is ever retracted and its keys are not
// remembered. Copies from different inputs keep the arrival order, as
// between whole files (OrderScope::kWithinInput).
//
// OrderScope::kAcrossInputs is the one order of docs/inputs.md for every
// input: a tag names (input index in the walked, sorted order, position),
// tags compare as those pairs, any kept copy may be retracted by an earlier
// copy of any input, and the memory is bounded by a watermark: once every
// record before tag W was decided (every rank agrees), no copy before W can
// arrive any more, so kept copies before W are final and forgotten
// (forget_before). Pure, no MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::core {

/// An order tag: 0 for a key that is not from a split input; else
///   bit 63      the record lies in range k > 0 (it may be retracted)
///   bits 42-62  input index + 1 (1 .. 2^21 - 1)
///   bits 0-41   absolute byte offset of the record's first byte (< 4 TiB)
using OrderTag = std::uint64_t;

inline constexpr unsigned kOrderOffsetBits = 42;
inline constexpr unsigned kOrderInputBits = 21;
inline constexpr std::uint64_t kOrderMaxOffset = (std::uint64_t{1} << kOrderOffsetBits) - 1;
/// Largest input index a tag can name.
inline constexpr std::uint64_t kOrderMaxInput = (std::uint64_t{1} << kOrderInputBits) - 2;
inline constexpr std::uint64_t kOrderLaterRangeBit = std::uint64_t{1} << 63;

/// The part of a tag common to every record of one range, or nullopt when
/// the input is beyond the tag's limits (input > kOrderMaxInput or file
/// size > kOrderMaxOffset + 1): such an input keeps the arrival order.
[[nodiscard]] std::optional<OrderTag> order_tag_base(std::uint64_t input_index,
                                                     std::uint64_t file_size, bool later_range);
[[nodiscard]] constexpr std::uint64_t order_offset(OrderTag t) noexcept {
  return t & kOrderMaxOffset;
}
/// The tag as a place in the one order of all inputs: (input, offset)
/// compare as this number does; the later-range mark plays no part.
[[nodiscard]] constexpr std::uint64_t order_position(OrderTag t) noexcept {
  return t & ~kOrderLaterRangeBit;
}
/// Input index of a nonzero tag.
[[nodiscard]] constexpr std::uint64_t order_input(OrderTag t) noexcept {
  return ((t >> kOrderOffsetBits) & ((std::uint64_t{1} << kOrderInputBits) - 1)) - 1;
}
[[nodiscard]] constexpr bool order_later_range(OrderTag t) noexcept {
  return (t & kOrderLaterRangeBit) != 0;
}

/// A kept copy retracted for an earlier copy in another input; also the
/// form in which FileOrder::remembered() lists the kept copies it holds.
struct CrossInputRetraction {
  OrderTag tag;  ///< the retracted (or remembered) copy's
  KeyHash hash;  ///< its key's
  friend bool operator==(const CrossInputRetraction&, const CrossInputRetraction&) = default;
};

/// An owner's across-inputs FileOrder is reserved for its share of the
/// input bytes at this many bytes a record (a guess between short URL lines
/// and long documents; growing later is slower, never wrong) ...
inline constexpr std::uint64_t kInputOrderReserveBytesPerKey = 128;
/// ... and for at most this many keys (a 12 MiB table): the watermark keeps
/// the table to the kept keys of the inputs read ahead of it.
inline constexpr std::uint64_t kInputOrderMaxReserveKeys = std::uint64_t{1} << 18;

/// Bytes of a version-1 manifest's input_order a remembered kept copy took
/// in a checkpoint: its tag and key hash as three decimal numbers (19, 20
/// and 20 digits at most) and their commas (the reserve of that writer).
inline constexpr double kInputOrderManifestBytesPerKey = 62;
/// Bytes a remembered kept copy takes in a checkpoint since version 2: one
/// row of /input_order/rows (tag, hi, lo); a plan's figure.
inline constexpr double kInputOrderRowBytesPerKey = 24;
/// Bytes a retraction waiting for the end pass takes at the end pass, over
/// all ranks, a plan's figure: on its owner, the list (tag, hi, lo) and the
/// same entries in the send buffers of the exchange to the cutting rank
/// (48 bytes); on the cutting rank, the received entries and the same
/// grouped by input (offset, hi, lo; 48 bytes), alive together. Spread over
/// the ranks (owners by key hash, cutting ranks by input): a rank holds
/// about 1/P of them.
inline constexpr double kEndPassBytesPerRetraction = 96;

/// Peak bytes of one owner's across-inputs FileOrder (the table of
/// `--kept-copy first`) that is reserved for `reserved` keys and comes to
/// remember at most `keys` keys: the table that holds them (24 bytes a slot,
/// at most 3/4 full, a power of two of at least 4096 slots) and, when it
/// had to grow past the reserve, the half-size table it was rehashed from,
/// mapped beside it for a moment (1.5x). Pure arithmetic, for plans.
[[nodiscard]] std::uint64_t order_table_peak_bytes(std::uint64_t reserved, std::uint64_t keys);

/// Which copies an owner's FileOrder orders: the ranges of one split input
/// (a copy of another input keeps the arrival order), or every input.
enum class OrderScope { kWithinInput, kAcrossInputs };

/// Writes into `order` the indexes 0..tags.size()-1 sorted by the tags'
/// order_position(), ties (and untagged keys, tag 0, which come last) in
/// their given order. An owner that decides a sub-round in this order keeps
/// the earliest of the copies arriving together, so they need no
/// retraction. Cost: one sort of 4-byte indexes (n log n), none when the
/// tags are already ascending.
void order_by_tag(std::span<const OrderTag> tags, std::vector<std::uint32_t>& order);

/// The owner's memory of kept copies from ranges k > 0: an open-addressing
/// table (linear probing) from the key's 128-bit hash to the kept copy's tag
/// (24 bytes a slot, at most 3/4 full: 32-64 bytes per key). Two different keys with the same
/// 128-bit hash would share an entry; at 2^-128 per pair that is not guarded against. Not saved in
/// checkpoints within one input: a resume rebuilds it from the committed parts
/// (app/split/file_order_rebuild.hpp). Across inputs it is saved (remembered(), restore()).
class FileOrder {
 public:
  /// After TwoTierSet::decide_batch(keys, verdicts): for each key with a
  /// nonzero tags[i], in order, a kept copy from a range k > 0 is
  /// remembered; a duplicate that lies earlier in the same input than the
  /// remembered kept copy becomes kNew, and the remembered tag is appended
  /// to `retracted`. Throws std::invalid_argument unless the three spans
  /// have the same size. Cost: one table probe per tagged key.
  /// Across inputs: every kept copy at or after the watermark is
  /// remembered, except one in the watermark's own input outside a later
  /// range (every earlier copy of it was decided already: one rank reads
  /// that input, or its range 0, in order), and a duplicate anywhere before
  /// the remembered copy in the one order wins; tags below the watermark
  /// are taken as final. A
  /// retracted copy of the winner's own input (a split input's later range)
  /// goes to `retracted` as above; one of another input goes, with its key
  /// hash, to `other_inputs` (required across inputs: else
  /// std::invalid_argument), since within one output file a key has at
  /// most one such copy and the hash finds its line.
  void settle(std::span<const KeyRef> keys, std::span<const OrderTag> tags,
              std::span<Verdict> verdicts, std::vector<OrderTag>& retracted,
              std::vector<CrossInputRetraction>* other_inputs = nullptr);

  /// Across inputs: every record before `watermark` (an order_position) has
  /// been decided on every rank, so no earlier copy can retract a kept copy
  /// before it; their entries are dropped (the table is rebuilt in place
  /// with the survivors: no second table). A watermark below the
  /// current one is ignored. Cost: one pass over the table and one memset of
  /// it. Within one input: a no-op.
  void forget_before(std::uint64_t watermark);
  /// Across inputs: every input may be read by several ranks at once (the
  /// lockstep layout's blocks), so no copy in the watermark's own input is
  /// final before the watermark passes it (is_final()), and a retracted
  /// copy of the winner's own input goes to `other_inputs` too (the end
  /// pass places it by its tag's offset). Call before the first settle().
  void set_inputs_read_by_many() noexcept { inputs_read_by_many_ = true; }
  /// The current watermark (0 before any forget_before()).
  [[nodiscard]] std::uint64_t watermark() const noexcept { return watermark_; }
  [[nodiscard]] OrderScope scope() const noexcept { return scope_; }

  /// Sizes the table for `keys` keys up front (growing it later rehashes
  /// every key into fresh memory, which costs more than the probes on a VM
  /// whose first touch of a page is slow). Never shrinks.
  void reserve(std::size_t keys);

  /// Across inputs, for a checkpoint: every remembered kept copy as (its
  /// tag, its key hash), in table order. With the watermark, this is all an
  /// owner knows that tier 2 does not: a resume (on any rank count) that
  /// restore()s each entry at the owner of its hash and sets the watermark
  /// decides every later copy as this table would. Cost: one pass over the
  /// table, 24 bytes an entry.
  [[nodiscard]] std::vector<CrossInputRetraction> remembered() const;
  /// Across inputs, at a resume: remembers the saved kept copy `entry`
  /// (one of remembered(), routed to this owner by its hash) unless the
  /// watermark makes it final. Throws std::invalid_argument for a zero tag
  /// or within one input (that table is rebuilt from the outputs instead).
  void restore(const CrossInputRetraction& entry);

  /// Keys remembered.
  [[nodiscard]] std::size_t size() const noexcept { return used_; }
  /// Bytes of the table.
  [[nodiscard]] std::size_t table_bytes() const noexcept { return slot_count_ * sizeof(Slot); }

  explicit FileOrder(OrderScope scope = OrderScope::kWithinInput);
  ~FileOrder();
  FileOrder(const FileOrder&) = delete;
  FileOrder& operator=(const FileOrder&) = delete;

 private:
  struct Slot {  // all zero: empty
    std::uint64_t hi;
    std::uint64_t lo;
    OrderTag tag;  // 0: empty
  };
  [[nodiscard]] std::size_t home_of(const KeyHash& h) const noexcept;
  Slot& slot_for(const KeyHash& h);  // the key's slot, or the empty one where it goes
  void rehash(std::size_t slots);
  void remember(const KeyHash& h, OrderTag t);
  [[nodiscard]] bool precedes_kept(OrderTag candidate, OrderTag kept) const noexcept;
  // Whether a kept copy with tag `t` can no longer be retracted (one of
  // range 0 within an input; across inputs, one the watermark makes final):
  // such a copy is not remembered.
  [[nodiscard]] bool is_final(OrderTag t) const noexcept;

  // The slots live in a zero-filled anonymous mapping advised for huge
  // pages (core/memory/huge_page_mapping.hpp): no zeroing pass, and 512 times
  // fewer page faults than 4 KiB pages when the table is first touched.
  struct Table;
  std::unique_ptr<Table> table_;
  std::vector<Slot> survivors_;  // forget_before()'s scratch
  Slot* slots_ = nullptr;
  std::size_t slot_count_ = 0;  // a power of two, or 0
  std::size_t used_ = 0;
  OrderScope scope_;
  std::uint64_t watermark_ = 0;       // forget_before()'s, across inputs only
  bool inputs_read_by_many_ = false;  // set_inputs_read_by_many()
};

}  // namespace bloomshard::core
