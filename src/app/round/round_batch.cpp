#include "app/round/round_batch.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace bloomshard::app {
namespace {

// Arena chunk size: keys of a round of 8 MiB of JSONL are ~2 MB; a copied
// record longer than this gets a chunk of its own, freed by clear().
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

}  // namespace

char* RoundBatch::Arena::copy(std::string_view bytes, std::string_view more) {
  const std::size_t n = bytes.size() + more.size();
  if (static_cast<std::size_t>(end_ - next_) < n) return copy_to_new_chunk(bytes, more);
  char* at = next_;
  if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
  if (!more.empty()) std::memcpy(at + bytes.size(), more.data(), more.size());
  next_ += n;
  return at;
}

// The next chunk with room (the standard chunks kept by clear(), then new
// ones), and the copy there.
char* RoundBatch::Arena::copy_to_new_chunk(std::string_view bytes, std::string_view more) {
  const std::size_t n = bytes.size() + more.size();
  if (current_ < chunks_.size()) ++current_;  // the one being filled is full
  while (current_ < chunks_.size() && chunks_[current_].size < n) ++current_;
  if (current_ == chunks_.size()) {
    const std::size_t size = std::max(n, kChunkBytes);
    chunks_.push_back({std::unique_ptr<char[]>(new char[size]), size});  // not zero-filled
  }
  next_ = chunks_[current_].data.get();
  end_ = next_ + chunks_[current_].size;
  return copy(bytes, more);
}

void RoundBatch::Arena::clear() noexcept {
  std::erase_if(chunks_, [](const Chunk& c) { return c.size != kChunkBytes; });
  current_ = 0;
  next_ = chunks_.empty() ? nullptr : chunks_[0].data.get();
  end_ = chunks_.empty() ? nullptr : next_ + chunks_[0].size;
}

void RoundBatch::clear() noexcept {
  arena_.clear();
  records_.clear();
  keys_.clear();
  tags_.clear();
  kept_.clear();
  bytes_ = 0;
}

void RoundBatch::keep(io::BufferRef buffer) {
  if (!kept_.empty() && kept_.back().get() == buffer.get()) return;
  kept_.push_back(std::move(buffer));
}

void RoundBatch::add(std::uint32_t file_slot, std::string_view line, std::string_view terminator,
                     const core::KeyHash& hash, std::string_view key) {
  const char* stored = arena_.copy(line, terminator);
  push_record(file_slot, stored, line.size() + terminator.size());
  push_key(hash, key, line, stored);
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
