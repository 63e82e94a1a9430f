#include "core/order/output_offset_map.hpp"

namespace bloomshard::core {
namespace {

// One LEB128 number from `bytes` at `at` (advanced); false past the end.
bool take(const std::vector<std::uint8_t>& bytes, std::size_t& at, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; at < bytes.size() && shift < 64; shift += 7) {
    const std::uint8_t b = bytes[at++];
    v |= std::uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80u) == 0) return true;
  }
  return false;
}

}  // namespace

void OutputOffsetMap::put(std::uint64_t v) {
  while (v >= 0x80) {
    encoded_.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  encoded_.push_back(static_cast<std::uint8_t>(v));
}

bool OutputOffsetMap::note_written(std::uint64_t input_begin, std::uint64_t length) {
  if (broken_) return false;
  if (input_begin < open_end_) {
    break_map();
    return false;
  }
  if (open_ && input_begin == open_end_) {  // the run goes on
    open_end_ += length;
  } else {
    if (open_) {
      put(open_gap_);
      put(open_end_ - open_begin_);
    }
    open_gap_ = input_begin - open_end_;
    open_begin_ = input_begin;
    open_end_ = input_begin + length;
    open_ = true;
  }
  output_length_ += length;
  return true;
}

void OutputOffsetMap::break_map() noexcept {
  broken_ = true;
  open_ = false;
  std::vector<std::uint8_t>().swap(encoded_);
}

bool OutputOffsetMap::Cursor::next_run() {
  const OutputOffsetMap& m = *map_;
  const std::uint64_t prev_end = started_ ? end_ : 0;
  const std::uint64_t out = started_ ? out_begin_ + (end_ - begin_) : 0;
  std::uint64_t gap = 0;
  std::uint64_t length = 0;
  if (at_ < m.encoded_.size()) {
    if (!take(m.encoded_, at_, gap) || !take(m.encoded_, at_, length)) return false;
  } else if (m.open_ && !last_) {
    last_ = true;
    gap = m.open_gap_;
    length = m.open_end_ - m.open_begin_;
  } else {
    return false;
  }
  started_ = true;
  begin_ = prev_end + gap;
  end_ = begin_ + length;
  out_begin_ = out;
  return true;
}

std::optional<OutputOffsetMap::Place> OutputOffsetMap::Cursor::find(std::uint64_t input_offset) {
  if (map_->broken_) return std::nullopt;
  while (!started_ || input_offset >= end_) {
    if (!next_run()) return std::nullopt;
  }
  if (input_offset < begin_) return std::nullopt;  // left out, or below the previous lookup
  return Place{out_begin_ + (input_offset - begin_), end_};
}

}  // namespace bloomshard::core
