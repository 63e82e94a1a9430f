#include "core/order/held_back_records.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/memory/huge_page_mapping.hpp"

namespace bloomshard::core {

struct HeldBackRecords::Buffer {
  detail::HugePageMapping memory;
};

HeldBackRecords::HeldBackRecords(std::uint64_t budget_bytes)
    : budget_(budget_bytes), buffer_(std::make_unique<Buffer>()) {}
HeldBackRecords::~HeldBackRecords() = default;
HeldBackRecords::HeldBackRecords(HeldBackRecords&&) noexcept = default;
HeldBackRecords& HeldBackRecords::operator=(HeldBackRecords&&) noexcept = default;

char* HeldBackRecords::reserve_bytes(std::size_t n) {
  detail::HugePageMapping& memory = buffer_->memory;
  if (buffer_end_ + n > memory.size() && buffer_head_ > 0) {
    // Move the held bytes to the front: at most once per mapping's worth
    // of released bytes.
    std::memmove(memory.data(), memory.data() + buffer_head_, buffer_end_ - buffer_head_);
    buffer_end_ -= buffer_head_;
    buffer_head_ = 0;
  }
  if (buffer_end_ + n > memory.size()) memory.grow_to(buffer_end_ + n);
  return memory.data() + buffer_end_;
}

void HeldBackRecords::hold(std::uint32_t slot, OrderTag tag, std::string_view bytes) {
  if (bytes.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("HeldBackRecords::hold: a record of 4 GiB or more");
  }
  const std::uint64_t position = tag == 0 ? last_position_ : order_position(tag);
  if (tag != 0 && position < last_position_) {
    throw std::invalid_argument("HeldBackRecords::hold: records out of order");
  }
  last_position_ = position;
  if (!bytes.empty()) std::memcpy(reserve_bytes(bytes.size()), bytes.data(), bytes.size());
  buffer_end_ += bytes.size();
  held_.push_back({position, static_cast<std::uint32_t>(bytes.size()), slot, tag == 0, false});
  bytes_ += bytes.size();
  peak_bytes_ = std::max(peak_bytes_, bytes_);
}

RetractedHere HeldBackRecords::retract(OrderTag tag, std::uint64_t& dropped_bytes) {
  const std::uint64_t position = order_position(tag);
  auto it =
      std::lower_bound(held_.begin() + static_cast<std::ptrdiff_t>(held_head_), held_.end(),
                       position, [](const Held& h, std::uint64_t p) { return h.position < p; });
  for (; it != held_.end() && it->position == position; ++it) {
    if (it->untagged || it->dropped) continue;
    it->dropped = true;
    bytes_ -= it->length;
    dropped_bytes = it->length;
    return RetractedHere::kDropped;
  }
  if (std::binary_search(written_beyond_.begin(), written_beyond_.end(), position)) {
    return RetractedHere::kInOutput;
  }
  return RetractedHere::kNotHere;
}

void HeldBackRecords::release(std::uint64_t watermark, const Sink& sink) {
  std::size_t final_count = 0;
  while (held_head_ + final_count < held_.size() &&
         held_[held_head_ + final_count].position < watermark) {
    ++final_count;
  }
  release_front(final_count, sink);
  while (!written_beyond_.empty() && written_beyond_.front() < watermark) {
    written_beyond_.pop_front();
  }
  // Over the budget: the oldest go out now; a later retraction of one of
  // them is the end pass's.
  std::size_t over = 0;
  std::uint64_t left = bytes_;
  while (left > budget_ && held_head_ + over < held_.size()) {
    const Held& h = held_[held_head_ + over++];
    if (h.dropped) continue;
    left -= h.length;
    ++over_budget_;
    if (!h.untagged) written_beyond_.push_back(h.position);
  }
  release_front(over, sink);
}

void HeldBackRecords::release_front(std::size_t count, const Sink& sink) {
  if (count == 0) return;
  pieces_.clear();
  const char* const base = buffer_->memory.data();
  std::uint32_t slot = held_[held_head_].slot;
  std::size_t at = buffer_head_;
  for (std::size_t j = held_head_; j < held_head_ + count; ++j) {
    const Held& h = held_[j];
    const std::string_view bytes(base + at, h.length);
    at += h.length;
    if (h.dropped) continue;
    bytes_ -= h.length;
    if (h.slot != slot && !pieces_.empty()) {
      sink(slot, pieces_);
      pieces_.clear();
    }
    slot = h.slot;
    if (!pieces_.empty() && pieces_.back().data() + pieces_.back().size() == bytes.data()) {
      pieces_.back() = {pieces_.back().data(), pieces_.back().size() + bytes.size()};
    } else {
      pieces_.push_back(bytes);
    }
  }
  if (!pieces_.empty()) sink(slot, pieces_);
  pieces_.clear();
  held_head_ += count;
  buffer_head_ = at;
  if (held_head_ == held_.size()) {  // nothing held: start over at the front
    held_.clear();
    held_head_ = 0;
    buffer_head_ = 0;
    buffer_end_ = 0;
  } else if (held_head_ > held_.size() / 2) {  // amortized: each entry moves once more
    held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(held_head_));
    held_head_ = 0;
  }
}

std::optional<std::uint32_t> HeldBackRecords::first_slot() const noexcept {
  if (held_head_ == held_.size()) return std::nullopt;
  return held_[held_head_].slot;
}

}  // namespace bloomshard::core
