#include "bloomshard/app/round_batch.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace bloomshard::app {
namespace {

// Arena chunk size: keys of a round of 8 MiB of JSONL are ~2 MB; a copied
// record longer than this gets a chunk of its own, freed by clear().
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// True when `piece` lies inside `whole`. Compares addresses as integers:
// the two views may belong to different buffers, where pointer comparison
// is unspecified.
bool lies_in(std::string_view piece, std::string_view whole) noexcept {
  const auto w = reinterpret_cast<std::uintptr_t>(whole.data());
  const auto p = reinterpret_cast<std::uintptr_t>(piece.data());
  return p >= w && p + piece.size() <= w + whole.size();
}

}  // namespace

char* RoundBatch::Arena::copy(std::string_view bytes, std::string_view more) {
  const std::size_t n = bytes.size() + more.size();
  while (current_ < chunks_.size() && chunks_[current_].size - used_ < n) {
    ++current_;
    used_ = 0;
  }
  if (current_ == chunks_.size()) {
    const std::size_t size = std::max(n, kChunkBytes);
    chunks_.push_back({std::unique_ptr<char[]>(new char[size]), size});  // not zero-filled
    used_ = 0;
  }
  char* at = chunks_[current_].data.get() + used_;
  if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
  if (!more.empty()) std::memcpy(at + bytes.size(), more.data(), more.size());
  used_ += n;
  return at;
}

void RoundBatch::Arena::clear() noexcept {
  std::erase_if(chunks_, [](const Chunk& c) { return c.size != kChunkBytes; });
  current_ = 0;
  used_ = 0;
}

void RoundBatch::clear() noexcept {
  arena_.clear();
  records_.clear();
  keys_.clear();
  kept_.clear();
  bytes_ = 0;
}

void RoundBatch::keep(io::BufferRef buffer) {
  if (!kept_.empty() && kept_.back().get() == buffer.get()) return;
  kept_.push_back(std::move(buffer));
}

void RoundBatch::push_record(std::uint32_t file_slot, const char* bytes, std::size_t length) {
  records_.push_back({bytes, length, file_slot, 0, keys_.size()});
  bytes_ += length;
}

// A key that is a piece of its line (plain lines, unnormalized) is not
// copied: its view moves with the line to where the line is stored.
void RoundBatch::push_key(const core::KeyHash& hash, std::string_view key, std::string_view line,
                          const char* stored_line) {
  std::string_view stored;
  if (lies_in(key, line)) {
    const auto at = reinterpret_cast<std::uintptr_t>(key.data()) -
                    reinterpret_cast<std::uintptr_t>(line.data());
    stored = std::string_view(stored_line + at, key.size());
  } else {
    stored = std::string_view(arena_.copy(key), key.size());
    bytes_ += key.size();
  }
  keys_.push_back({hash, stored});
  ++records_.back().key_count;
}

void RoundBatch::add(std::uint32_t file_slot, std::string_view line, std::string_view terminator,
                     const core::KeyHash& hash, std::string_view key) {
  const char* stored = arena_.copy(line, terminator);
  push_record(file_slot, stored, line.size() + terminator.size());
  push_key(hash, key, line, stored);
}

void RoundBatch::add_kept(std::uint32_t file_slot, std::string_view line,
                          std::string_view terminator, const core::KeyHash& hash,
                          std::string_view key) {
  push_record(file_slot, line.data(), line.size() + terminator.size());
  push_key(hash, key, line, line.data());
}

void RoundBatch::add_record(std::uint32_t file_slot, std::string_view line,
                            std::string_view terminator) {
  push_record(file_slot, arena_.copy(line, terminator), line.size() + terminator.size());
}

void RoundBatch::add_key(const core::KeyHash& hash, std::string_view key) {
  keys_.push_back({hash, std::string_view(arena_.copy(key), key.size())});
  bytes_ += key.size();
  ++records_.back().key_count;
}

}  // namespace bloomshard::app
