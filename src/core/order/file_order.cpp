#include "core/order/file_order.hpp"

#include <stdexcept>
#include <utility>

#include "core/memory/huge_page_mapping.hpp"

namespace bloomshard::core {

std::optional<OrderTag> order_tag_base(std::uint64_t input_index, std::uint64_t file_size,
                                       bool later_range) {
  if (input_index > kOrderMaxInput || file_size > kOrderMaxOffset + 1) return std::nullopt;
  return ((input_index + 1) << kOrderOffsetBits) | (later_range ? kOrderLaterRangeBit : 0);
}

namespace {

// Keys probed ahead of the one being settled: their slots' lines are
// prefetched, since a table of millions of keys is out of cache.
constexpr std::size_t kPrefetchKeys = 16;
constexpr std::size_t kMinSlots = std::size_t{1} << 12;

}  // namespace

struct FileOrder::Table {
  detail::HugePageMapping memory;
};

FileOrder::FileOrder() : table_(std::make_unique<Table>()) {}
FileOrder::~FileOrder() = default;

std::size_t FileOrder::home_of(const KeyHash& h) const noexcept {
  // The low hash bits pick the owner's slice and Bloom block; mix in the
  // high half so that one owner's keys spread over the whole table.
  return static_cast<std::size_t>((h.lo ^ (h.hi * 0x9E3779B97F4A7C15ULL)) >> 7) & (slot_count_ - 1);
}

FileOrder::Slot& FileOrder::slot_for(const KeyHash& h) {
  const std::size_t mask = slot_count_ - 1;
  for (std::size_t i = home_of(h);; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.tag == 0 || (s.hi == h.hi && s.lo == h.lo)) return s;
  }
}

void FileOrder::rehash(std::size_t slots) {
  auto fresh = std::make_unique<Table>();
  fresh->memory.grow_to(slots * sizeof(Slot));  // reads as zero: every slot empty
  const Slot* const old = slots_;
  const std::size_t old_count = slot_count_;
  slots_ = reinterpret_cast<Slot*>(fresh->memory.data());
  slot_count_ = slots;
  for (std::size_t i = 0; i < old_count; ++i) {
    if (old[i].tag != 0) slot_for({old[i].hi, old[i].lo}) = old[i];
  }
  table_ = std::move(fresh);  // unmaps the old table
}

void FileOrder::reserve(std::size_t keys) {
  std::size_t slots = kMinSlots;
  while (slots / 4 * 3 < keys) slots *= 2;
  if (slots > slot_count_) rehash(slots);
}

void FileOrder::settle(std::span<const KeyRef> keys, std::span<const OrderTag> tags,
                       std::span<Verdict> verdicts, std::vector<OrderTag>& retracted) {
  if (tags.size() != keys.size() || verdicts.size() != keys.size()) {
    throw std::invalid_argument("FileOrder::settle: keys, tags and verdicts differ in size");
  }
  if (slot_count_ == 0) rehash(kMinSlots);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i + kPrefetchKeys < keys.size() && tags[i + kPrefetchKeys] != 0) {
      __builtin_prefetch(&slots_[home_of(keys[i + kPrefetchKeys].hash)]);
    }
    const OrderTag t = tags[i];
    if (t == 0) continue;
    if (is_kept(verdicts[i])) {
      if (!order_later_range(t)) continue;  // range 0: never retracted
      if (4 * (used_ + 1) > 3 * slot_count_) rehash(slot_count_ * 2);
      Slot& s = slot_for(keys[i].hash);
      if (s.tag == 0) ++used_;
      s = {keys[i].hash.hi, keys[i].hash.lo, t};
      continue;
    }
    if (used_ == 0) continue;
    Slot& s = slot_for(keys[i].hash);
    if (s.tag == 0 || order_input(s.tag) != order_input(t) ||
        order_offset(t) >= order_offset(s.tag)) {
      continue;  // kept first elsewhere, or earlier in this input: a duplicate
    }
    // This copy lies earlier in the file than the one kept: it wins.
    verdicts[i] = Verdict::kNew;
    if (order_later_range(s.tag)) retracted.push_back(s.tag);
    s.tag = t;  // a range-0 copy stays as a tag that nothing precedes
  }
}

}  // namespace bloomshard::core
