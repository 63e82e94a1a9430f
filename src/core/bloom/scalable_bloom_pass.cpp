// The in-order Bloom pass of the two-tier decision (two_tier.cpp): every
// key of a batch probed and, when absent, inserted, before tier 2 sees any
// of them. Alone in its loop the Bloom blocks are the only random lines in
// flight, so the prefetch can run further ahead than in the mixed loop.
#include <array>
#include <stdexcept>
#include <string>

#include "bloomshard/core/scalable_bloom.hpp"

namespace bloomshard::core {
namespace {

// One key's block, located and prefetched for write (nullptr for a key of
// a slice the layer does not hold: its block would lie outside the words).
inline std::uint64_t* locate(std::uint64_t* words, const LayerLayout& l, SliceRange owned,
                             const KeyHash& h) noexcept {
  if (!owned.contains(slice_of(h, l.num_slices))) return nullptr;
  std::uint64_t* block = words + block_word_offset(l, h);
  prefetch_block_for_write(block);
  return block;
}

// One layer, K probes (a constant: the mask is a few shifts and ORs). A
// maybe needs no branch: setting bits that are all set changes nothing, so
// block_set's "newly set" is the absent answer (a branch on it would
// mispredict on every repeat, 30% of the keys).
template <std::uint32_t K>
std::size_t one_layer_pass(std::uint64_t* words, const LayerLayout& l, SliceRange owned,
                           std::span<const KeyHash> hashes, std::uint8_t* absent,
                           std::uint64_t& inserted) {
  constexpr std::size_t kAhead = kBloomPassDistance;
  std::array<std::uint64_t*, kAhead> ring{};
  const std::size_t n = hashes.size();
  for (std::size_t j = 0; j < n && j < kAhead; ++j) ring[j] = locate(words, l, owned, hashes[j]);
  std::uint64_t fresh_keys = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t* block = ring[i % kAhead];
    if (block == nullptr) {
      inserted += fresh_keys;
      return i;
    }
    if (i + kAhead < n) ring[i % kAhead] = locate(words, l, owned, hashes[i + kAhead]);
    const bool fresh = block_set(block, block_mask_k<K>(probe_bits(hashes[i])));
    absent[i] = static_cast<std::uint8_t>(fresh);
    fresh_keys += fresh ? 1U : 0U;
  }
  inserted += fresh_keys;
  return n;
}

template <std::uint32_t... K>
std::size_t one_layer_pass_k(std::uint32_t k, std::integer_sequence<std::uint32_t, K...>,
                             std::uint64_t* words, const LayerLayout& l, SliceRange owned,
                             std::span<const KeyHash> hashes, std::uint8_t* absent,
                             std::uint64_t& inserted) {
  std::size_t done = 0;
  ((k == K + 1 ? (done = one_layer_pass<K + 1>(words, l, owned, hashes, absent, inserted), 0) : 0),
   ...);
  return done;
}

}  // namespace

std::size_t ScalableBloom::insert_if_absent_batch(std::span<const KeyHash> hashes,
                                                  std::span<std::uint8_t> absent) {
  if (absent.size() < hashes.size()) {
    throw std::invalid_argument("insert_if_absent_batch: " + std::to_string(absent.size()) +
                                " answer slots for " + std::to_string(hashes.size()) + " keys");
  }
  Layer& newest = layers_.back();
  if (auto_grow_ && (newest.inserted >= newest.geometry.capacity ||
                     newest.geometry.capacity - newest.inserted < hashes.size())) {
    return 0;
  }
  if (layers_.size() == 1) {
    return one_layer_pass_k(
        newest.layout.k, std::make_integer_sequence<std::uint32_t, kMaxProbes>{},
        newest.words.data(), newest.layout, owned_, hashes, absent.data(), newest.inserted);
  }
  // Several layers: the general probe of insert_if_absent, plus the stop
  // before a maybe that the newest layer does not confirm.
  const std::size_t n = hashes.size();
  const std::uint32_t num_slices = params_.num_slices;
  auto owned_key = [&](std::size_t j) { return owned_.contains(slice_of(hashes[j], num_slices)); };
  for (std::size_t j = 0; j < n && j < kBloomPassDistance; ++j) {
    if (owned_key(j)) prefetch(hashes[j]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!owned_key(i)) return i;
    if (i + kBloomPassDistance < n && owned_key(i + kBloomPassDistance)) {
      prefetch(hashes[i + kBloomPassDistance]);
    }
    const std::uint32_t bits = probe_bits(hashes[i]);
    bool older_maybe = false;
    for (std::size_t layer = 0; layer + 1 < layers_.size() && !older_maybe; ++layer) {
      const LayerLayout& l = layers_[layer].layout;
      older_maybe = block_has(layers_[layer].words.data() + block_word_offset(l, hashes[i]),
                              block_mask(bits, l.k));
    }
    std::uint64_t* block = newest.words.data() + block_word_offset(newest.layout, hashes[i]);
    const BlockMask mask = block_mask(bits, newest.layout.k);
    if (block_has(block, mask)) {
      absent[i] = 0;
    } else if (older_maybe) {
      return i;
    } else {
      (void)block_set(block, mask);
      ++newest.inserted;
      absent[i] = 1;
    }
  }
  return n;
}

}  // namespace bloomshard::core
