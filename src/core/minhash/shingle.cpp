// Streaming shingles (shingle.hpp). The window holds the last units as the
// bytes that are hashed, so a shingle costs one XXH3 call over about
// N x (word length + 1) bytes and one small memmove when the window slides.
// A word past kMaxWindowWordBytes leaves the window: the (at most N)
// shingles holding it are hashed by streaming states fed as bytes arrive,
// which XXH3 guarantees equal to the one-shot hash of the same bytes.
#include "core/minhash/shingle.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
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

// The shingles that hold a long word, hashed as their bytes go by. The
// shingle starting at unit s owns slot s mod N: the N shingles open at once
// start at N consecutive units. The states live in one plain byte buffer
// aligned by hand (XXH3_state_t asks for 64), so they are ordinary heap
// bytes.
struct ShingleHasher::LongWordStates {
  explicit LongWordStates(std::uint32_t n)
      : raw(n * sizeof(XXH3_state_t) + alignof(XXH3_state_t) - 1),
        state(align_states(raw.data())),
        slots(n),
        start(n),
        open(n, 0) {}

  static XXH3_state_t* align_states(unsigned char* p) noexcept {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t mask = alignof(XXH3_state_t) - 1;
    return reinterpret_cast<XXH3_state_t*>((address + mask) & ~mask);
  }

  [[nodiscard]] bool is_open(std::uint64_t s) const noexcept {
    const std::size_t slot = s % slots;
    return open[slot] != 0 && start[slot] == s;
  }
  void open_at(std::uint64_t s, std::string_view prefix) noexcept {
    const std::size_t slot = s % slots;
    XXH3_64bits_reset_withSeed(&state[slot], kShingleHashSeed);
    XXH3_64bits_update(&state[slot], prefix.data(), prefix.size());
    start[slot] = s;
    open[slot] = 1;
    ++open_count;
  }
  [[nodiscard]] std::uint64_t close(std::uint64_t s) noexcept {
    const std::size_t slot = s % slots;
    open[slot] = 0;
    --open_count;
    return XXH3_64bits_digest(&state[slot]);
  }
  void update_all(std::string_view bytes) noexcept {
    for (std::size_t slot = 0; slot < slots; ++slot) {
      if (open[slot] != 0) XXH3_64bits_update(&state[slot], bytes.data(), bytes.size());
    }
  }
  void clear() noexcept {
    std::fill(open.begin(), open.end(), std::uint8_t{0});
    open_count = 0;
  }

  std::vector<unsigned char> raw;
  XXH3_state_t* state;  // slots states inside raw
  std::size_t slots;
  std::vector<std::uint64_t> start;
  std::vector<std::uint8_t> open;
  std::uint32_t open_count = 0;
};

ShingleHasher::ShingleHasher(ShingleSpec spec) : spec_(spec) {
  if (spec.size < 1 || spec.size > kMaxShingleSize) {
    throw std::invalid_argument("shingle size " + std::to_string(spec.size) + " outside 1.." +
                                std::to_string(kMaxShingleSize));
  }
}

ShingleHasher::~ShingleHasher() = default;

std::size_t ShingleHasher::held_bytes() const noexcept {
  const std::size_t states =
      states_ ? states_->raw.capacity() + states_->slots * (sizeof(std::uint64_t) + 1) : 0;
  return window_.capacity() + states;
}

void ShingleHasher::reset() noexcept {
  window_.clear();
  begin_ = 0;
  units_ = 0;
  window_first_ = 0;
  unit_index_ = 0;
  long_word_ = false;
  if (states_) states_->clear();
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

void ShingleHasher::push(std::uint64_t hash, ShingleHashSink& sink) {
  batch_[batch_size_++] = hash;
  ++shingles_;
  if (batch_size_ == kShingleBatch) flush(sink);
}

void ShingleHasher::emit(ShingleHashSink& sink) {
  push(XXH3_64bits_withSeed(window_.data() + begin_, window_.size() - begin_, kShingleHashSeed),
       sink);
}

void ShingleHasher::drop_first_window_unit() {
  // The unit and, for words, the space after it. Only the start moves; the
  // bytes before it go in one move every kWindowSlack bytes, not each time.
  begin_ = unit_end_[0] + (spec_.kind == ShingleKind::kWord && units_ > 1 ? 1U : 0U);
  for (std::uint32_t k = 1; k < units_; ++k) unit_end_[k - 1] = unit_end_[k];
  --units_;
  ++window_first_;
  if (begin_ < kWindowSlack) return;
  window_.erase(0, begin_);
  for (std::uint32_t k = 0; k < units_; ++k) unit_end_[k] -= static_cast<std::uint32_t>(begin_);
  begin_ = 0;
}

void ShingleHasher::end_unit(ShingleHashSink& sink) {
  if (!long_word_) unit_end_[units_++] = static_cast<std::uint32_t>(window_.size());
  long_word_ = false;
  ++unit_index_;
  if (unit_index_ < spec_.size) return;
  const std::uint64_t first = unit_index_ - spec_.size;  // the finished shingle's first unit
  if (states_ && states_->is_open(first)) {
    push(states_->close(first), sink);
    return;  // its units are not in the window (a long word's clear dropped them)
  }
  emit(sink);  // the window holds exactly units first .. unit_index_ - 1
  drop_first_window_unit();
}

void ShingleHasher::start_long_word() {
  // Opens a state for each shingle that will hold the current word (those
  // starting at most N - 1 units before it) and has none yet, fed with its
  // bytes so far; every unit from such a start on is still in the window
  // (an earlier long word would have opened that shingle's state).
  if (!states_) states_ = std::make_unique<LongWordStates>(spec_.size);
  const std::uint64_t word = unit_index_;
  const std::uint64_t lowest = word + 1 >= spec_.size ? word + 1 - spec_.size : 0;
  for (std::uint64_t s = std::max(lowest, window_first_); s <= word; ++s) {
    if (states_->is_open(s)) continue;
    const std::size_t offset = s == window_first_ ? begin_ : unit_end_[s - window_first_ - 1] + 1U;
    states_->open_at(s, std::string_view(window_).substr(offset));
  }
  window_.clear();
  begin_ = 0;
  units_ = 0;
  window_first_ = word + 1;
  long_word_ = true;
}

void ShingleHasher::append_word_bytes(std::string_view bytes) {
  if (!long_word_) {
    const std::size_t word_start = units_ > 0 ? unit_end_[units_ - 1] + 1U : begin_;
    if (window_.size() - word_start + bytes.size() > kMaxWindowWordBytes) start_long_word();
  }
  if (!long_word_) window_.append(bytes);
  if (states_ && states_->open_count > 0) states_->update_all(bytes);
}

void ShingleHasher::begin_word_in_window() {
  if (!in_word_ && unit_index_ > 0) {
    if (units_ > 0) window_.push_back(' ');
    if (states_ && states_->open_count > 0) states_->update_all(" ");
  }
  in_word_ = true;
}

void ShingleHasher::rebuild_window(std::string_view piece, const PieceWords& words,
                                   std::size_t complete) {
  // What the window would hold had every word gone through it: the last
  // N - 1 complete words (all short, all in this piece), joined by spaces.
  window_.clear();
  begin_ = 0;
  units_ = 0;
  const std::size_t n = spec_.size;
  for (std::size_t k = complete - (n - 1); k < complete; ++k) {
    if (units_ > 0) window_.push_back(' ');
    const std::size_t slot = k % n;
    window_.append(piece.substr(words.start[slot], words.end[slot] - words.start[slot]));
    unit_end_[units_++] = static_cast<std::uint32_t>(window_.size());
  }
  window_first_ = unit_index_ - units_;
}

void ShingleHasher::feed_words(std::string_view piece, ShingleHashSink& sink) {
  // Words that begin in this piece are remembered by offset (the last N);
  // once N of them are complete and no long word is open, each further
  // word's shingle is the piece's bytes from the start of the word N - 1
  // back to its end (the piece is normalized text: one space between words)
  // and is hashed there, without going through the window ("direct"). The
  // window is made up again where the piece ends or a long word comes.
  const std::size_t n = spec_.size;
  PieceWords words;
  std::size_t begun = 0;  // words begun in this piece
  bool direct = false;
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
        space == nullptr ? piece.size()
                         : static_cast<std::size_t>(static_cast<const char*>(space) - piece.data());
    if (in_word_) {  // the rest of a word begun in an earlier piece
      append_word_bytes(piece.substr(i, end - i));
      i = end;
      continue;
    }
    words.start[begun % n] = i;
    words.end[begun % n] = end;
    ++begun;
    const bool complete = end < piece.size();
    const bool short_word = end - i <= kMaxWindowWordBytes;
    if (!direct && complete && short_word && begun >= n && !long_word_ &&
        (!states_ || states_->open_count == 0)) {
      direct = true;  // the N - 1 words before this one are complete, in this piece
    }
    if (direct && complete && short_word) {
      const std::size_t first = words.start[begun % n];  // N - 1 words back
      ++unit_index_;
      push(XXH3_64bits_withSeed(piece.data() + first, end - first, kShingleHashSeed), sink);
      i = end;
      continue;
    }
    if (direct) {  // a long or unfinished word: back to the window
      rebuild_window(piece, words, begun - 1);
      direct = false;
    }
    begin_word_in_window();
    append_word_bytes(piece.substr(i, end - i));
    i = end;
  }
  if (direct) rebuild_window(piece, words, begun);
}

void ShingleHasher::feed(std::string_view piece, ShingleHashSink& sink) {
  if (spec_.kind == ShingleKind::kWord) {
    feed_words(piece, sink);
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
  if (shingles_ == 0 && unit_index_ > 0) {  // shorter than N: one shingle of it all
    if (states_ && states_->is_open(0)) {
      push(states_->close(0), sink);
    } else {
      emit(sink);
    }
  }
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
