// One record's near-duplicate sketch (--unit minhash): its text normalized
// (minhash_text.hpp), shingled and hashed (shingle.hpp), a MinHash
// signature of bands x rows values (minhash_signature.hpp) and its band keys
// (minhash_band_key.hpp), streamed so that a long document costs about one
// normalization chunk of memory, never its list of shingles.
// Empty-text rule: a text whose normalized form is empty (nothing, only
// white space, only punctuation) has no shingle; its sketch is flagged
// `empty`, its signature is every value 0xFFFFFFFF, and it has a single
// band key, empty_text_band_key(): empty texts form their own exact key
// class (the first is kept, the rest are duplicates of it) and are never
// near-duplicates of a text with words.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/minhash/minhash_band_key.hpp"
#include "core/minhash/minhash_signature.hpp"
#include "core/minhash/minhash_text.hpp"
#include "core/minhash/shingle.hpp"

namespace bloomshard::core {

/// The --unit minhash parameters (defaults: word:5, 14 bands x 8 rows).
struct MinHashConfig {
  ShingleSpec shingle{};
  std::uint32_t bands = 14;
  std::uint32_t rows = 8;
};

/// What sketch() gives for one text.
struct MinHashSketch {
  bool empty = false;                    // no shingle: the empty-text rule
  std::uint64_t shingles = 0;            // shingles hashed (with repeats)
  std::vector<std::uint32_t> signature;  // bands x rows values
  std::vector<BandKey> band_keys;        // bands keys, or the one empty-text key
};

/// Sketches texts one after another, reusing its buffers (one per thread).
class MinHashSketcher {
 public:
  /// Throws std::invalid_argument for 0 bands or rows, or a signature above
  /// kMaxSignatureValues values.
  explicit MinHashSketcher(const MinHashConfig& config, SignatureIsa isa = signature_isa());

  /// Sketches `text` into `out`. Returns false, with the reason in `error`
  /// ("invalid UTF-8 at byte N: ..."), for a text that is not UTF-8; the
  /// job rejects such a record. `chunk` is the normalizer's (tests).
  bool sketch(std::string_view text, MinHashSketch& out, std::string& error,
              std::size_t chunk = kMinHashTextChunk);

  [[nodiscard]] const MinHashConfig& config() const noexcept { return config_; }

 private:
  MinHashConfig config_;
  std::unique_ptr<PermutationFamily> family_;
  MinHashSignatureBuilder builder_;
  ShingleHasher shingler_;
  MinHashTextNormalizer normalizer_;  // reused: its buffers outlive one text
};

}  // namespace bloomshard::core
