#include "bloomshard/core/scalable_bloom.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/fastrange.hpp"
#include "core/window/slot_window.hpp"

namespace bloomshard::core {
namespace {

void check_params(const ScalableBloomParams& p) {
  if (p.initial_capacity < 1) {
    throw std::invalid_argument("initial capacity must be >= 1");
  }
  if (!(p.fpr_target > 0.0 && p.fpr_target <= 0.5)) {
    throw std::invalid_argument("FPR target " + std::to_string(p.fpr_target) + " outside (0, 0.5]");
  }
  if (!(p.growth >= 1.0) || !std::isfinite(p.growth)) {
    throw std::invalid_argument("growth " + std::to_string(p.growth) + " must be >= 1");
  }
  if (!(p.tightening > 0.0 && p.tightening < 1.0)) {
    throw std::invalid_argument("tightening " + std::to_string(p.tightening) + " outside (0, 1)");
  }
  if (p.num_slices < 1 || p.num_slices > kMaxSlices) {
    throw std::invalid_argument("slice count " + std::to_string(p.num_slices) + " outside [1, " +
                                std::to_string(kMaxSlices) + "]");
  }
}

// Capacities and word counts stay below 2^62 so products never overflow.
constexpr double kMaxCount = 4611686018427387904.0;  // 2^62

}  // namespace

BloomLayerGeometry layer_geometry(const ScalableBloomParams& params, std::uint32_t index) {
  check_params(params);
  const double i = static_cast<double>(index);
  const double capacity =
      std::ceil(static_cast<double>(params.initial_capacity) * std::pow(params.growth, i));
  if (!(capacity < kMaxCount)) {
    throw std::invalid_argument("layer " + std::to_string(index) + " capacity exceeds 2^62");
  }
  BloomLayerGeometry g;
  g.capacity = static_cast<std::uint64_t>(capacity);
  g.fpr_target = params.fpr_target * (1.0 - params.tightening) * std::pow(params.tightening, i);
  const BloomGeometryChoice choice = choose_geometry(g.fpr_target);
  g.bits_per_key = choice.bits_per_key;
  g.k = choice.k;
  const double bits_per_slice =
      capacity * g.bits_per_key /
      (static_cast<double>(kBlockBits) * static_cast<double>(params.num_slices));
  const double blocks = std::ceil(bits_per_slice);
  if (!(blocks < kMaxCount)) {
    throw std::invalid_argument("layer " + std::to_string(index) + " is too large");
  }
  g.blocks_per_slice = blocks < 1.0 ? 1 : static_cast<std::uint64_t>(blocks);
  return g;
}

ScalableBloom::ScalableBloom(const ScalableBloomParams& params, SliceRange owned)
    : params_(params), owned_(owned) {
  check_params(params);
  if (owned.first > owned.last || owned.last > params.num_slices) {
    throw std::invalid_argument("slice range [" + std::to_string(owned.first) + ", " +
                                std::to_string(owned.last) + ") outside [0, " +
                                std::to_string(params.num_slices) + ")");
  }
  add_layer();
}

LayerLayout ScalableBloom::layout(std::size_t index) const noexcept {
  return layers_[index].layout;
}

bool ScalableBloom::may_contain(const KeyHash& h) const noexcept {
  const std::uint32_t bits = probe_bits(h);
  BlockMask mask;
  std::uint32_t mask_k = 0;  // layers of one k share the mask
  for (const Layer& layer : layers_) {
    const LayerLayout& l = layer.layout;
    if (l.k != mask_k) {
      mask = block_mask(bits, l.k);
      mask_k = l.k;
    }
    if (block_has(layer.words.data() + block_word_offset(l, h), mask)) return true;
  }
  return false;
}

bool ScalableBloom::insert(const KeyHash& h) {
  if (auto_grow_ && layers_.back().inserted >= layers_.back().geometry.capacity) {
    add_layer();
  }
  Layer& layer = layers_.back();
  ++layer.inserted;
  const LayerLayout& l = layer.layout;
  return block_set(layer.words.data() + block_word_offset(l, h), block_mask(probe_bits(h), l.k));
}

bool ScalableBloom::insert_if_absent(const KeyHash& h) {
  const std::uint32_t bits = probe_bits(h);
  BlockMask mask;
  std::uint32_t mask_k = 0;
  std::uint64_t* newest_block = nullptr;
  for (Layer& layer : layers_) {
    const LayerLayout& l = layer.layout;
    if (l.k != mask_k) {
      mask = block_mask(bits, l.k);
      mask_k = l.k;
    }
    newest_block = layer.words.data() + block_word_offset(l, h);
    if (block_has(newest_block, mask)) return false;
  }
  if (auto_grow_ && layers_.back().inserted >= layers_.back().geometry.capacity) {
    (void)insert(h);  // into a new layer
    return true;
  }
  ++layers_.back().inserted;
  (void)block_set(newest_block, mask);  // the newest layer's block and k, from the last pass
  return true;
}

void ScalableBloom::prefetch(const KeyHash& h) const noexcept {
  for (const Layer& layer : layers_) {
    prefetch_block(layer.words.data() + block_word_offset(layer.layout, h));
  }
}

void ScalableBloom::query_batch(std::span<const KeyHash> hashes,
                                std::span<std::uint8_t> out) const {
  if (out.size() < hashes.size()) {
    throw std::invalid_argument("query_batch: output shorter than input");
  }
  // One prefetched pass per layer, ORed: an absent key probes every layer
  // anyway, and each pass keeps kPrefetchDistance lines in flight.
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    query_layer_batch(layers_[i].words.data(), layout(i), hashes, out, i > 0);
  }
}

void ScalableBloom::insert_batch(std::span<const KeyHash> hashes) {
  // Inserts go in runs that fit the newest layer, so growth (which moves
  // the target layer) happens only between runs.
  std::size_t done = 0;
  while (done < hashes.size()) {
    if (auto_grow_ && layers_.back().inserted >= layers_.back().geometry.capacity) {
      add_layer();
    }
    const std::size_t newest = layers_.size() - 1;
    Layer& layer = layers_[newest];
    std::size_t run = hashes.size() - done;
    if (auto_grow_) {
      const std::uint64_t room = layer.geometry.capacity - layer.inserted;
      if (room < run) {
        run = static_cast<std::size_t>(room);
      }
    }
    insert_layer_batch(layer.words.data(), layout(newest), hashes.subspan(done, run));
    layer.inserted += run;
    done += run;
  }
}

void ScalableBloom::add_layer() {
  const auto index = static_cast<std::uint32_t>(layers_.size());
  Layer layer;
  layer.slot = current_slot_;
  layer.remix = index;
  if (window_ != 0) {
    std::uint32_t j = 0;  // layers already opened in the current slot
    for (auto it = layers_.rbegin(); it != layers_.rend() && it->slot == current_slot_; ++it) ++j;
    layer.remix = j;
  }
  layer.geometry = window_ == 0
                       ? core::layer_geometry(params_, index)
                       : core::layer_geometry(slot_layer_params(params_, window_), layer.remix);
  const double words = static_cast<double>(owned_.size()) *
                       static_cast<double>(layer.geometry.blocks_per_slice) *
                       static_cast<double>(kBlockWords);
  if (!(words < static_cast<double>(std::numeric_limits<std::size_t>::max() / 8))) {
    throw std::invalid_argument("layer " + std::to_string(index) + " does not fit in memory");
  }
  layer.layout = LayerLayout{layer.geometry.blocks_per_slice, params_.num_slices, owned_.first,
                             layer.remix, layer.geometry.k};
  layer.words.assign(static_cast<std::size_t>(owned_.size()) *
                         static_cast<std::size_t>(layer.geometry.blocks_per_slice) * kBlockWords,
                     0);
  layers_.push_back(std::move(layer));
}

void ScalableBloom::start_window(std::uint32_t window, std::uint64_t current_slot,
                                 std::span<const std::uint64_t> layer_slots) {
  check_window({window, SlotRule::kPerRun, 0});
  if (layer_slots.empty() || layer_slots.back() != current_slot) {
    throw std::invalid_argument("a windowed filter's newest layer must belong to slot " +
                                std::to_string(current_slot));
  }
  if (std::string e = check_slot_tags(layer_slots, current_slot); !e.empty()) {
    throw std::invalid_argument("Bloom layer " + e);
  }
  window_ = window;
  layers_.clear();
  for (const std::uint64_t slot : layer_slots) {
    current_slot_ = slot;
    add_layer();
  }
}

void ScalableBloom::open_slot(std::uint64_t slot) {
  if (window_ == 0) throw std::logic_error("open_slot on a filter without a window");
  if (slot <= current_slot_) {
    throw std::invalid_argument("slot " + std::to_string(slot) + " is not after the current " +
                                std::to_string(current_slot_));
  }
  std::vector<std::uint64_t> tags;
  for (const Layer& l : layers_) tags.push_back(l.slot);
  const std::size_t expired = expired_prefix(tags, slot, window_);
  layers_.erase(layers_.begin(), layers_.begin() + static_cast<std::ptrdiff_t>(expired));
  current_slot_ = slot;
  add_layer();
}

std::uint64_t ScalableBloom::layer_slot(std::size_t layer) const { return layer_at(layer).slot; }

bool ScalableBloom::layer_full(std::uint64_t global_inserted) const noexcept {
  return global_inserted >= layers_.back().geometry.capacity;
}

const ScalableBloom::Layer& ScalableBloom::layer_at(std::size_t layer) const {
  if (layer >= layers_.size()) {
    throw std::out_of_range("layer " + std::to_string(layer) + " of " +
                            std::to_string(layers_.size()));
  }
  return layers_[layer];
}

const BloomLayerGeometry& ScalableBloom::layer_geometry(std::size_t layer) const {
  return layer_at(layer).geometry;
}

std::uint64_t ScalableBloom::layer_inserted(std::size_t layer) const {
  return layer_at(layer).inserted;
}

BloomLayerStats ScalableBloom::layer_stats(std::size_t layer) const {
  const Layer& l = layer_at(layer);
  BloomLayerStats s;
  s.geometry = l.geometry;
  s.inserted = l.inserted;
  const std::uint64_t total_bits = static_cast<std::uint64_t>(l.words.size()) * 64U;
  const std::uint64_t set_bits = count_set_bits(l.words);
  s.fill_ratio =
      total_bits == 0 ? 0.0 : static_cast<double>(set_bits) / static_cast<double>(total_bits);
  s.fpr_estimate = fpr_from_block_words(l.words, l.geometry.k);
  s.cardinality_estimate = cardinality_from_fill(set_bits, total_bits, l.geometry.k);
  return s;
}

std::uint64_t ScalableBloom::newest_layer_inserted() const noexcept {
  return layers_.back().inserted;
}

std::span<const std::uint64_t> ScalableBloom::slice_words(std::size_t layer,
                                                          std::uint32_t slice) const {
  if (layer >= layers_.size() || !owned_.contains(slice)) {
    throw std::out_of_range("slice_words: layer " + std::to_string(layer) + " slice " +
                            std::to_string(slice) + " not held");
  }
  const Layer& l = layers_[layer];
  const std::size_t per_slice = static_cast<std::size_t>(l.geometry.blocks_per_slice) * kBlockWords;
  return std::span<const std::uint64_t>(l.words).subspan((slice - owned_.first) * per_slice,
                                                         per_slice);
}

std::span<std::uint64_t> ScalableBloom::slice_words(std::size_t layer, std::uint32_t slice) {
  const std::span<const std::uint64_t> view = std::as_const(*this).slice_words(layer, slice);
  const std::size_t offset = static_cast<std::size_t>(view.data() - layers_[layer].words.data());
  return std::span<std::uint64_t>(layers_[layer].words).subspan(offset, view.size());
}

void ScalableBloom::set_layer_inserted(std::size_t layer, std::uint64_t inserted) {
  if (layer >= layers_.size()) {
    throw std::out_of_range("layer " + std::to_string(layer) + " of " +
                            std::to_string(layers_.size()));
  }
  layers_[layer].inserted = inserted;
}

std::uint64_t ScalableBloom::memory_bytes() const noexcept {
  std::uint64_t bytes = 0;
  for (const Layer& l : layers_) {
    bytes += static_cast<std::uint64_t>(l.words.size()) * sizeof(std::uint64_t);
  }
  return bytes;
}

}  // namespace bloomshard::core
