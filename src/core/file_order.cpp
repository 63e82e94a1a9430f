#include "bloomshard/core/file_order.hpp"

#include <stdexcept>

namespace bloomshard::core {

std::optional<OrderTag> order_tag_base(std::uint64_t input_index, std::uint64_t file_size,
                                       bool later_range) {
  if (input_index > kOrderMaxInput || file_size > kOrderMaxOffset + 1) return std::nullopt;
  return ((input_index + 1) << kOrderOffsetBits) | (later_range ? kOrderLaterRangeBit : 0);
}

FileOrder::Slot& FileOrder::slot_for(const KeyHash& h) {
  // The low hash bits pick the owner's slice and Bloom block; mix in the
  // high half so that one owner's keys spread over the whole table.
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = static_cast<std::size_t>((h.lo ^ (h.hi * 0x9E3779B97F4A7C15ULL)) >> 7) & mask;
  for (;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.tag == 0 || (s.hi == h.hi && s.lo == h.lo)) return s;
  }
}

void FileOrder::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? std::size_t{1} << 12 : old.size() * 2, Slot{});
  for (const Slot& s : old) {
    if (s.tag != 0) slot_for({s.hi, s.lo}) = s;
  }
}

void FileOrder::settle(std::span<const KeyRef> keys, std::span<const OrderTag> tags,
                       std::span<Verdict> verdicts, std::vector<OrderTag>& retracted) {
  if (tags.size() != keys.size() || verdicts.size() != keys.size()) {
    throw std::invalid_argument("FileOrder::settle: keys, tags and verdicts differ in size");
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const OrderTag t = tags[i];
    if (t == 0) continue;
    if (is_kept(verdicts[i])) {
      if (!order_later_range(t)) continue;  // range 0: never retracted
      if (2 * (used_ + 1) > slots_.size()) grow();
      Slot& s = slot_for(keys[i].hash);
      if (s.tag == 0) ++used_;
      s = {keys[i].hash.hi, keys[i].hash.lo, t};
      continue;
    }
    if (slots_.empty()) continue;
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
