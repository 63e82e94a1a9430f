// Streaming shingles (shingle.hpp). The window holds the last units as the
// bytes that are hashed, so a shingle costs one XXH3 call over about
// N x (word length + 1) bytes and one small memmove when the window slides.
#include "core/minhash/shingle.hpp"

#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

#define XXH_INLINE_ALL  // lets the compiler inline XXH3 into the shingle loop
#include <xxhash.h>

namespace bloomshard::core {
namespace {

std::uint32_t utf8_length(unsigned char lead) noexcept {
  if (lead < 0x80U) return 1;
  if (lead < 0xE0U) return 2;
  return lead < 0xF0U ? 3U : 4U;
}

}  // namespace

ShingleSpec parse_shingle_spec(std::string_view text) {
  const auto fail = [&]() -> ShingleSpec {
    throw std::invalid_argument(
        "bad shingle '" + std::string(text) +
        "' (expected word:N or char:N with 1 <= N <= " + std::to_string(kMaxShingleSize) + ")");
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return fail();
  const std::string_view kind = text.substr(0, colon);
  const std::string_view number = text.substr(colon + 1);
  ShingleSpec spec;
  if (kind == "word") {
    spec.kind = ShingleKind::kWord;
  } else if (kind == "char") {
    spec.kind = ShingleKind::kChar;
  } else {
    return fail();
  }
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), spec.size);
  if (ec != std::errc() || end != number.data() + number.size() || spec.size < 1 ||
      spec.size > kMaxShingleSize) {
    return fail();
  }
  return spec;
}

std::string shingle_spec_name(const ShingleSpec& spec) {
  return std::string(spec.kind == ShingleKind::kWord ? "word:" : "char:") +
         std::to_string(spec.size);
}

ShingleHasher::ShingleHasher(ShingleSpec spec) : spec_(spec) {
  if (spec.size < 1 || spec.size > kMaxShingleSize) {
    throw std::invalid_argument("shingle size " + std::to_string(spec.size) + " outside 1.." +
                                std::to_string(kMaxShingleSize));
  }
}

void ShingleHasher::reset() noexcept {
  window_.clear();
  units_ = 0;
  in_word_ = false;
  cp_left_ = 0;
  shingles_ = 0;
  batch_size_ = 0;
}

void ShingleHasher::flush(ShingleHashSink& sink) {
  if (batch_size_ == 0) return;
  sink.add(std::span<const std::uint64_t>(batch_.data(), batch_size_));
  batch_size_ = 0;
}

void ShingleHasher::emit(ShingleHashSink& sink) {
  batch_[batch_size_++] = XXH3_64bits_withSeed(window_.data(), window_.size(), kShingleHashSeed);
  ++shingles_;
  if (batch_size_ == kShingleBatch) flush(sink);
}

void ShingleHasher::end_unit(ShingleHashSink& sink) {
  unit_end_[units_++] = static_cast<std::uint32_t>(window_.size());
  if (units_ < spec_.size) return;
  emit(sink);
  // Slide: drop the first unit (and, for words, the space after it).
  const std::uint32_t drop =
      unit_end_[0] + (spec_.kind == ShingleKind::kWord && units_ > 1 ? 1U : 0U);
  window_.erase(0, drop);
  for (std::uint32_t k = 1; k < units_; ++k) unit_end_[k - 1] = unit_end_[k] - drop;
  --units_;
}

void ShingleHasher::feed(std::string_view piece, ShingleHashSink& sink) {
  if (spec_.kind == ShingleKind::kWord) {
    std::size_t i = 0;
    while (i < piece.size()) {
      if (piece[i] == ' ') {
        if (in_word_) end_unit(sink);
        in_word_ = false;
        ++i;
        continue;
      }
      const void* space = std::memchr(piece.data() + i, ' ', piece.size() - i);
      const std::size_t end =
          space == nullptr
              ? piece.size()
              : static_cast<std::size_t>(static_cast<const char*>(space) - piece.data());
      if (!in_word_ && units_ > 0) window_.push_back(' ');
      in_word_ = true;
      window_.append(piece.substr(i, end - i));
      i = end;
    }
    return;
  }
  for (const char c : piece) {
    if (cp_left_ == 0) cp_left_ = utf8_length(static_cast<unsigned char>(c));
    window_.push_back(c);
    if (--cp_left_ == 0) end_unit(sink);
  }
}

void ShingleHasher::finish(ShingleHashSink& sink) {
  if (in_word_) end_unit(sink);
  in_word_ = false;
  if (shingles_ == 0 && units_ > 0) emit(sink);  // shorter than N: one shingle of it all
  flush(sink);
}

std::vector<std::uint64_t> shingle_hashes(ShingleSpec spec, std::string_view normalized) {
  struct Collect final : ShingleHashSink {
    std::vector<std::uint64_t> all;
    void add(std::span<const std::uint64_t> hashes) override {
      all.insert(all.end(), hashes.begin(), hashes.end());
    }
  } collect;
  ShingleHasher hasher(spec);
  hasher.feed(normalized, collect);
  hasher.finish(collect);
  return std::move(collect.all);
}

}  // namespace bloomshard::core
