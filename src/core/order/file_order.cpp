#include "core/order/file_order.hpp"

#include <algorithm>
#include <numeric>
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

void order_by_tag(std::span<const OrderTag> tags, std::vector<std::uint32_t>& order) {
  order.resize(tags.size());
  std::iota(order.begin(), order.end(), 0U);
  const auto key = [&](std::uint32_t i) {
    return tags[i] == 0 ? ~std::uint64_t{0} : order_position(tags[i]);
  };
  const auto before = [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); };
  if (std::is_sorted(order.begin(), order.end(), before)) return;
  std::stable_sort(order.begin(), order.end(), before);
}

FileOrder::FileOrder(OrderScope scope) : table_(std::make_unique<Table>()), scope_(scope) {}
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
  used_ = 0;
  for (std::size_t i = 0; i < old_count; ++i) {
    // Across inputs, entries before the watermark are final: not carried.
    if (old[i].tag == 0 || order_position(old[i].tag) < watermark_) continue;
    slot_for({old[i].hi, old[i].lo}) = old[i];
    ++used_;
  }
  table_ = std::move(fresh);  // unmaps the old table
}

void FileOrder::forget_before(std::uint64_t watermark) {
  if (scope_ != OrderScope::kAcrossInputs || watermark <= watermark_) return;
  watermark_ = watermark;
  if (used_ == 0) return;
  // In place: the survivors (kept copies at or after the watermark) are
  // copied out, the table is zeroed and they go back in. A fresh table of
  // the same size (rehash) would hold both tables for a moment: twice the
  // table at the peak (measured: 48 MiB more per rank at a 48 MiB table).
  survivors_.clear();
  for (std::size_t i = 0; i < slot_count_; ++i) {
    if (slots_[i].tag != 0 && order_position(slots_[i].tag) >= watermark_) {
      survivors_.push_back(slots_[i]);
    }
  }
  table_->memory.zero(slot_count_ * sizeof(Slot));
  for (const Slot& s : survivors_) slot_for({s.hi, s.lo}) = s;
  used_ = survivors_.size();
  survivors_.clear();
}

bool FileOrder::precedes_kept(OrderTag candidate, OrderTag kept) const noexcept {
  if (scope_ == OrderScope::kAcrossInputs) {
    return order_position(candidate) < order_position(kept);
  }
  return order_input(candidate) == order_input(kept) &&
         order_offset(candidate) < order_offset(kept);
}

void FileOrder::remember(const KeyHash& h, OrderTag t) {
  if (4 * (used_ + 1) > 3 * slot_count_) rehash(slot_count_ * 2);
  Slot& s = slot_for(h);
  if (s.tag == 0) ++used_;
  s = {h.hi, h.lo, t};
}

namespace {
// Slots FileOrder::reserve() gives `keys` keys.
std::uint64_t slots_for_keys(std::uint64_t keys) {
  std::uint64_t slots = kMinSlots;
  while (slots / 4 * 3 < keys) slots *= 2;
  return slots;
}
}  // namespace

std::uint64_t order_table_peak_bytes(std::uint64_t reserved, std::uint64_t keys) {
  constexpr std::uint64_t kSlotBytes = 3 * sizeof(std::uint64_t);  // FileOrder::Slot
  const std::uint64_t reserved_slots = slots_for_keys(reserved);
  const std::uint64_t slots = slots_for_keys(std::max(reserved, keys));
  return slots > reserved_slots ? slots * kSlotBytes + slots / 2 * kSlotBytes : slots * kSlotBytes;
}

void FileOrder::reserve(std::size_t keys) {
  static_assert(sizeof(Slot) == 3 * sizeof(std::uint64_t), "order_table_peak_bytes() counts 24");
  std::size_t slots = kMinSlots;
  while (slots / 4 * 3 < keys) slots *= 2;
  if (slots > slot_count_) rehash(slots);
}

std::vector<CrossInputRetraction> FileOrder::remembered() const {
  std::vector<CrossInputRetraction> out;
  if (scope_ != OrderScope::kAcrossInputs) return out;
  out.reserve(used_);
  for (std::size_t i = 0; i < slot_count_; ++i) {
    if (slots_[i].tag != 0) out.push_back({slots_[i].tag, {slots_[i].hi, slots_[i].lo}});
  }
  return out;
}

void FileOrder::restore(const CrossInputRetraction& entry) {
  if (scope_ != OrderScope::kAcrossInputs || entry.tag == 0) {
    throw std::invalid_argument("FileOrder::restore: only nonzero tags across inputs");
  }
  if (slot_count_ == 0) rehash(kMinSlots);
  if (!is_final(entry.tag)) remember(entry.hash, entry.tag);
}

bool FileOrder::is_final(OrderTag t) const noexcept {
  if (scope_ != OrderScope::kAcrossInputs) return !order_later_range(t);
  // Every input before the watermark's is read, and the earlier records of
  // the watermark's own input (whole, or its range 0: one rank reads them
  // in order) were decided before this copy, so a copy there is final at
  // once; so is any copy before the watermark. Not so when the inputs are
  // read by many ranks (the lockstep layout): there only the watermark counts.
  const bool in_watermark_input = !inputs_read_by_many_ && watermark_ != 0 &&
                                  !order_later_range(t) &&
                                  order_input(t) == order_input(watermark_);
  return order_position(t) < watermark_ || in_watermark_input;
}

void FileOrder::settle(std::span<const KeyRef> keys, std::span<const OrderTag> tags,
                       std::span<Verdict> verdicts, std::vector<OrderTag>& retracted,
                       std::vector<CrossInputRetraction>* other_inputs) {
  if (tags.size() != keys.size() || verdicts.size() != keys.size()) {
    throw std::invalid_argument("FileOrder::settle: keys, tags and verdicts differ in size");
  }
  if (scope_ == OrderScope::kAcrossInputs && other_inputs == nullptr) {
    throw std::invalid_argument("FileOrder::settle: across inputs needs other_inputs");
  }
  if (slot_count_ == 0) rehash(kMinSlots);
  const bool across = scope_ == OrderScope::kAcrossInputs;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    // Prefetch only for keys that will touch the table: a final kept copy
    // (most of them across inputs) and a duplicate while nothing is
    // remembered never do.
    const std::size_t ahead = i + kPrefetchKeys;
    if (ahead < keys.size() && tags[ahead] != 0 &&
        (is_kept(verdicts[ahead]) ? !is_final(tags[ahead]) : used_ != 0)) {
      __builtin_prefetch(&slots_[home_of(keys[ahead].hash)]);
    }
    const OrderTag t = tags[i];
    if (t == 0) continue;
    if (is_kept(verdicts[i])) {
      if (!is_final(t)) remember(keys[i].hash, t);
      continue;
    }
    if (used_ == 0) continue;
    Slot& s = slot_for(keys[i].hash);
    if (s.tag == 0 || !precedes_kept(t, s.tag)) {
      continue;  // kept first elsewhere, or earlier in this input: a duplicate
    }
    // This copy lies earlier in the order than the one kept: it wins.
    verdicts[i] = Verdict::kNew;
    if (across && (inputs_read_by_many_ || order_input(s.tag) != order_input(t))) {
      other_inputs->push_back({s.tag, keys[i].hash});
    } else if (order_later_range(s.tag)) {
      retracted.push_back(s.tag);
    }
    s.tag = t;  // within one input, a range-0 copy stays as a tag that nothing precedes
  }
}

}  // namespace bloomshard::core
