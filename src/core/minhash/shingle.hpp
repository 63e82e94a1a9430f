// Shingles of a normalized text (minhash_text.hpp), hashed to 64 bits as
// they come, for MinHash signatures. Two kinds:
//   word:N  N consecutive words (the normalized text split at its single
//           spaces) joined by one U+0020;
//   char:N  N consecutive code points of the normalized text (spaces
//           included).
// Each shingle's UTF-8 bytes are hashed with XXH3_64bits_withSeed(bytes,
// kShingleHashSeed). A text with fewer than N words (code points) is one
// shingle of all of it; an empty normalized text has no shingle. The rules
// and known answers: docs/near-duplicates.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bloomshard::core {

/// XXH3 seed of shingle hashes (the ASCII bytes "shingle1" read big-endian).
inline constexpr std::uint64_t kShingleHashSeed = 0x7368696e676c6531ULL;

/// The largest N accepted: a shingle window longer than this would cost
/// more than it tells.
inline constexpr std::uint32_t kMaxShingleSize = 64;

enum class ShingleKind : std::uint8_t { kWord = 0, kChar = 1 };

/// A shingle definition, "word:5" by default.
struct ShingleSpec {
  ShingleKind kind = ShingleKind::kWord;
  std::uint32_t size = 5;

  friend bool operator==(const ShingleSpec&, const ShingleSpec&) = default;
};

/// Parses "word:N" or "char:N" (1 <= N <= kMaxShingleSize); throws
/// std::invalid_argument naming the value and what was expected.
[[nodiscard]] ShingleSpec parse_shingle_spec(std::string_view text);

/// "word:5" etc.
[[nodiscard]] std::string shingle_spec_name(const ShingleSpec& spec);

/// Receives shingle hashes in batches of at most kShingleBatch.
class ShingleHashSink {
 public:
  virtual ~ShingleHashSink() = default;
  virtual void add(std::span<const std::uint64_t> hashes) = 0;
};

/// Hashes per batch handed to a sink: enough to amortize a kernel call,
/// small enough to stay in L1 (2 KiB).
inline constexpr std::size_t kShingleBatch = 256;

/// A word:N word longer than this is not kept in the window: the shingles
/// that hold it are hashed by streaming XXH3 states instead (same hashes).
inline constexpr std::size_t kMaxWindowWordBytes = 1024;

/// Dropped units stay in the window until this many bytes have gathered.
inline constexpr std::size_t kWindowSlack = 4096;

/// Streams the shingles of one normalized text: feed() its pieces in order
/// (cut anywhere between code points), then finish(). Memory, whatever the
/// text's length: the window (at most N x (kMaxWindowWordBytes + 1) bytes
/// for word:N, 4 N for char:N, plus kWindowSlack), one batch, and from the first word longer
/// than kMaxWindowWordBytes on, N streaming XXH3 states (576 bytes each).
class ShingleHasher {
 public:
  explicit ShingleHasher(ShingleSpec spec);
  ~ShingleHasher();
  ShingleHasher(const ShingleHasher&) = delete;
  ShingleHasher& operator=(const ShingleHasher&) = delete;

  /// Starts a new text.
  void reset() noexcept;

  /// Adds the next piece of normalized text; full batches go to `sink`.
  void feed(std::string_view piece, ShingleHashSink& sink);

  /// Ends the text: the last batch, and the short-text shingle, go to `sink`.
  void finish(ShingleHashSink& sink);

  /// Shingles produced since reset().
  [[nodiscard]] std::uint64_t shingle_count() const noexcept { return shingles_; }

  /// Bytes held on the heap now (for memory bounds).
  [[nodiscard]] std::size_t held_bytes() const noexcept;

 private:
  struct LongWordStates;  // the streaming states, made at the first long word
  // Offsets in the current piece of the last N words begun in it (word k at
  // slot k mod N).
  struct PieceWords {
    std::array<std::size_t, kMaxShingleSize> start;
    std::array<std::size_t, kMaxShingleSize> end;
  };
  void feed_words(std::string_view piece, ShingleHashSink& sink);
  void begin_word_in_window();
  void rebuild_window(std::string_view piece, const PieceWords& words, std::size_t complete);

  void push(std::uint64_t hash, ShingleHashSink& sink);
  void emit(ShingleHashSink& sink);
  void end_unit(ShingleHashSink& sink);
  void flush(ShingleHashSink& sink);
  void append_word_bytes(std::string_view bytes);
  void start_long_word();
  void drop_first_window_unit();

  ShingleSpec spec_;
  // The units from window_first_ on (words joined by ' ', or code points),
  // from byte begin_ on; a long word and every unit before it are not in it.
  std::string window_;
  std::size_t begin_ = 0;  // bytes before it are dropped units, erased in bulk
  std::array<std::uint32_t, kMaxShingleSize> unit_end_{};  // end of each unit in window_
  std::uint32_t units_ = 0;                                // complete units in window_
  std::uint64_t window_first_ = 0;  // index in the text of window_'s first unit
  std::uint64_t unit_index_ = 0;    // index of the unit being read (= units ended)
  bool long_word_ = false;          // the word being read is past kMaxWindowWordBytes
  std::unique_ptr<LongWordStates> states_;
  bool in_word_ = false;       // word:N: a word is being appended
  std::uint32_t cp_left_ = 0;  // char:N: bytes left of the current code point
  std::uint64_t shingles_ = 0;
  std::array<std::uint64_t, kShingleBatch> batch_{};
  std::size_t batch_size_ = 0;
};

/// The shingle hashes of a whole normalized text, in order (tests, tools).
[[nodiscard]] std::vector<std::uint64_t> shingle_hashes(ShingleSpec spec,
                                                        std::string_view normalized);

}  // namespace bloomshard::core
