#include "bloomshard/app/round_batch.hpp"

#include <cstdint>

namespace bloomshard::app {

void RoundBatch::clear() noexcept {
  arena_.clear();
  records_.clear();
  keys_of_.clear();
  keys_.clear();
  owners_.clear();
  owned_bytes_ = 0;
}

void RoundBatch::add_record(std::uint32_t file_slot, std::string_view line,
                            std::string_view terminator) {
  Entry e{};
  e.file_slot = file_slot;
  e.record_offset = arena_.size();
  e.record_length = line.size() + terminator.size();
  e.first_key = keys_of_.size();
  arena_.insert(arena_.end(), line.begin(), line.end());
  arena_.insert(arena_.end(), terminator.begin(), terminator.end());
  records_.push_back(e);
}

void RoundBatch::add_key(const core::KeyHash& hash, std::string_view key) {
  KeyEntry k{};
  k.key_length = static_cast<std::uint32_t>(key.size());
  k.key_offset = arena_.size();
  k.hash = hash;
  arena_.insert(arena_.end(), key.begin(), key.end());
  keys_of_.push_back(k);
  ++records_.back().key_count;
}

void RoundBatch::add(std::uint32_t file_slot, std::string_view line, std::string_view terminator,
                     const core::KeyHash& hash, std::string_view key) {
  add_record(file_slot, line, terminator);
  const Entry& e = records_.back();
  KeyEntry k{};
  k.key_length = static_cast<std::uint32_t>(key.size());
  // A key that is a piece of its line (plain lines, unnormalized) is not
  // copied twice. Compare addresses as integers: the two views may belong
  // to different buffers, where pointer comparison is unspecified.
  const auto line_begin = reinterpret_cast<std::uintptr_t>(line.data());
  const auto key_begin = reinterpret_cast<std::uintptr_t>(key.data());
  if (key_begin >= line_begin && key_begin + key.size() <= line_begin + line.size()) {
    k.key_offset = e.record_offset + (key_begin - line_begin);
  } else {
    k.key_offset = arena_.size();
    arena_.insert(arena_.end(), key.begin(), key.end());
  }
  k.hash = hash;
  keys_of_.push_back(k);
  ++records_.back().key_count;
}

void RoundBatch::add_owned(io::LineBuffer owner, std::uint32_t file_slot, std::string_view line,
                           std::string_view terminator, const core::KeyHash& hash,
                           std::string_view key) {
  const char* base = owner.get();
  const auto at = [base](std::string_view v) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(v.data()) -
                                      reinterpret_cast<std::uintptr_t>(base));
  };
  Entry e{};
  e.file_slot = file_slot;
  e.record_offset = at(line);
  e.record_length = line.size() + terminator.size();
  e.first_key = keys_of_.size();
  e.key_count = 1;
  e.owned = base;
  KeyEntry k{};
  k.key_length = static_cast<std::uint32_t>(key.size());
  k.hash = hash;
  // As in add(): a key that is a piece of its line is not copied.
  const auto line_begin = reinterpret_cast<std::uintptr_t>(line.data());
  const auto key_begin = reinterpret_cast<std::uintptr_t>(key.data());
  if (key_begin >= line_begin && key_begin + key.size() <= line_begin + line.size()) {
    k.key_offset = at(key);
    k.owned = base;
  } else {
    k.key_offset = arena_.size();
    arena_.insert(arena_.end(), key.begin(), key.end());
  }
  owned_bytes_ += e.record_length;
  records_.push_back(e);
  keys_of_.push_back(k);
  owners_.push_back(std::move(owner));
}

std::span<const core::KeyRef> RoundBatch::keys() {
  keys_.clear();
  keys_.reserve(keys_of_.size());
  for (const KeyEntry& k : keys_of_) {
    const char* base = k.owned != nullptr ? k.owned : arena_.data();
    keys_.push_back({k.hash, std::string_view(base + k.key_offset, k.key_length)});
  }
  return keys_;
}

std::string_view RoundBatch::record_bytes(std::size_t i) const noexcept {
  const Entry& e = records_[i];
  const char* base = e.owned != nullptr ? e.owned : arena_.data();
  return {base + e.record_offset, e.record_length};
}

}  // namespace bloomshard::app
