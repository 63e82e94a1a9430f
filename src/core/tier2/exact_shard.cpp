// Tier 2: the delta (key_arena.hpp: the records; delta_index.hpp: the hash
// index into them; delta_by_slice.hpp: checkpoint order) and the sorted runs
// (sorted_run.hpp), merged by run_merge.hpp. This file ties them together:
// ownership checks, per-slice counters, the runs' list and its bookkeeping.
#include "bloomshard/core/exact_shard.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/tier2/delta_by_slice.hpp"
#include "core/tier2/delta_index.hpp"
#include "core/tier2/key_arena.hpp"
#include "core/tier2/run_merge.hpp"

namespace bloomshard::core {

using detail::DeltaBySlice;
using detail::DeltaEntry;
using detail::DeltaIndex;
using detail::KeyArena;

struct ExactShard::Impl {
  // One run: its identity, a view per owned slice, its storage.
  struct Run {
    RunInfo info;
    std::vector<SliceBaseView> views;
    std::shared_ptr<const void> keepalive;
  };

  explicit Impl(std::uint32_t num_owned)
      : num_local(num_owned),
        slice_count(num_owned, 0),
        slice_key_bytes(num_owned, 0),
        overlap(num_owned, 0) {}

  std::size_t num_local;
  std::vector<Run> runs;           // oldest first
  std::vector<RunInfo> run_infos;  // runs[i].info, for runs()
  std::uint64_t base_keys = 0;
  // Per local slice: delta keys and their bytes (so a merged slice's size is
  // known without merging), and whether its base was attached over a
  // non-empty delta (only then can a key be in both).
  std::vector<std::uint64_t> slice_count;
  std::vector<std::uint64_t> slice_key_bytes;
  std::vector<char> overlap;

  KeyArena arena;    // the delta's records, in insertion order
  DeltaIndex index;  // fingerprint -> record; holds every record of the arena

  // The delta bucketed by slice, built by the first merge after an insert.
  mutable std::mutex order_mutex;
  mutable bool order_valid = false;
  mutable DeltaBySlice order;

  [[nodiscard]] std::uint64_t count() const noexcept { return index.keys(); }

  // The slot holding the key, or the empty slot where it would go.
  [[nodiscard]] DeltaIndex::Found find(std::uint32_t local, std::uint64_t fp,
                                       std::string_view key) const noexcept {
    return index.find(fp,
                      [&](std::uint64_t offset) { return arena.holds(offset, fp, local, key); });
  }

  [[nodiscard]] bool delta_contains(std::uint32_t local, std::uint64_t fp,
                                    std::string_view key) const noexcept {
    return count() != 0 && find(local, fp, key).found;
  }

  void invalidate_order() {
    std::lock_guard lock(order_mutex);
    order_valid = false;
    order.release();
  }

  // Appends the key and indexes it in `slot` (an empty slot find() gave for
  // it). A full index grows first (that moves every slot, so the key's
  // slot is looked up again).
  void add(std::uint32_t local, std::uint64_t fp, std::string_view key, std::size_t slot) {
    if (!index.has_room()) {
      grow_index();
      slot = index.empty_slot(fp);
    }
    const std::uint64_t offset = arena.append(fp, local, key);  // may throw: nothing changed
    index.put(slot, fp, offset);
    count_key(local, key);
  }
  // Same for a key known to be absent from the delta: no lookup, the first
  // empty slot of its search path.
  void add_absent(std::uint32_t local, std::uint64_t fp, std::string_view key) {
    if (!index.has_room()) grow_index();
    const DeltaIndex::Home at = index.home(fp);
    const std::size_t slot = index.empty_slot(at);
    const std::uint64_t offset = arena.append(fp, local, key);  // may throw: nothing changed
    index.put(slot, at, offset);
    count_key(local, key);
  }
  [[gnu::noinline]] void grow_index() { index.reserve(2 * index.max_keys(), arena); }
  void count_key(std::uint32_t local, std::string_view key) {
    ++slice_count[local];
    slice_key_bytes[local] += key.size();
    if (order_valid) invalidate_order();
  }

  [[nodiscard]] bool runs_contain(std::uint32_t local, std::uint64_t fp,
                                  std::string_view key) const noexcept {
    for (auto r = runs.rbegin(); r != runs.rend(); ++r) {  // newest first
      if (r->views[local].contains(fp, key)) return true;
    }
    return false;
  }

  [[nodiscard]] std::size_t depth_of(std::size_t depth) const noexcept {
    return std::min(depth, runs.size());
  }

  // The slice's delta entries in merge order.
  [[nodiscard]] std::vector<DeltaEntry> sorted_delta(std::uint32_t local) const {
    std::span<const DeltaEntry> entries;
    {
      std::lock_guard lock(order_mutex);
      if (!order_valid) {
        order.build(arena, slice_count);
        order_valid = true;
      }
      entries = order.slice(local);
    }
    return detail::sorted_slice(entries, arena);
  }

  // Calls emit(fingerprint, bytes) for the slice's delta merged with its
  // newest `depth` runs, in order, each key once.
  template <class Emit>
  void merge(std::uint32_t local, std::size_t depth, Emit&& emit) const {
    const std::vector<DeltaEntry> delta = sorted_delta(local);
    std::vector<const SliceBaseView*> views;
    for (std::size_t r = runs.size() - depth_of(depth); r < runs.size(); ++r) {
      views.push_back(&runs[r].views[local]);
    }
    detail::merge_sorted(delta, arena, views, std::forward<Emit>(emit));
  }

  [[nodiscard]] std::uint64_t delta_bytes() const noexcept {
    // The index at its load limit, whatever was reserved (see the header).
    auto b = static_cast<std::uint64_t>(static_cast<double>(count()) * DeltaIndex::kSlotsPerKey *
                                        sizeof(std::uint64_t));
    b += arena.used();
    std::lock_guard lock(order_mutex);
    return b + order.bytes();
  }
  [[nodiscard]] std::uint64_t delta_mapped_bytes() const noexcept {
    std::lock_guard lock(order_mutex);
    return arena.mapped() + index.table_bytes() + order.bytes();
  }
};

ExactShard::ExactShard(SliceRange owned, std::uint32_t num_slices) : owned_(owned) {
  if (num_slices < 1 || num_slices > kMaxSlices || owned.first >= owned.last ||
      owned.last > num_slices) {
    throw std::invalid_argument("exact shard: slice range [" + std::to_string(owned.first) + ", " +
                                std::to_string(owned.last) + ") not a non-empty part of [0, " +
                                std::to_string(num_slices) + ")");
  }
  impl_ = std::make_unique<Impl>(owned.size());
}

ExactShard::~ExactShard() = default;
ExactShard::ExactShard(ExactShard&&) noexcept = default;
ExactShard& ExactShard::operator=(ExactShard&&) noexcept = default;

namespace {
[[noreturn, gnu::cold, gnu::noinline]] void throw_not_owned(SliceRange owned, std::uint32_t slice) {
  throw std::out_of_range("exact shard: slice " + std::to_string(slice) + " not in owned [" +
                          std::to_string(owned.first) + ", " + std::to_string(owned.last) + ")");
}
inline std::uint32_t local_slice(SliceRange owned, std::uint32_t slice) {
  if (!owned.contains(slice)) throw_not_owned(owned, slice);
  return slice - owned.first;
}
}  // namespace

bool ExactShard::contains(std::uint32_t slice, std::uint64_t fp, std::string_view key) const {
  const std::uint32_t local = local_slice(owned_, slice);
  return impl_->delta_contains(local, fp, key) || impl_->runs_contain(local, fp, key);
}

bool ExactShard::insert(std::uint32_t slice, std::uint64_t fp, std::string_view key) {
  const std::uint32_t local = local_slice(owned_, slice);
  const DeltaIndex::Found at = impl_->find(local, fp, key);
  if (at.found || impl_->runs_contain(local, fp, key)) return false;
  impl_->add(local, fp, key, at.slot);
  return true;
}

void ExactShard::insert_new(std::uint32_t slice, std::uint64_t fp, std::string_view key) {
  const std::uint32_t local = local_slice(owned_, slice);
#ifndef NDEBUG
  if (contains(slice, fp, key)) {
    throw std::logic_error("exact shard: insert_new of a key already present");
  }
#endif
  impl_->add_absent(local, fp, key);
}

void ExactShard::reserve_delta(std::uint64_t keys) { impl_->index.reserve(keys, impl_->arena); }

void ExactShard::prefetch(std::uint64_t fp) const noexcept { impl_->index.prefetch(fp); }

void ExactShard::prefetch_record(std::uint64_t fp, std::size_t key_size) const noexcept {
  const Impl& im = *impl_;
  const std::uint64_t offset = im.index.likely_offset(fp);
  if (offset != DeltaIndex::kNone) im.arena.prefetch(offset, key_size);
}

void ExactShard::prefetch_runs(std::uint32_t slice, std::uint64_t fp) const noexcept {
  const std::uint32_t local = slice - owned_.first;  // caller checked ownership
  for (const auto& run : impl_->runs) run.views[local].prefetch(fp);
}

void ExactShard::attach_base(std::uint32_t slice, SliceBaseView view,
                             std::shared_ptr<const void> keepalive) {
  const std::uint32_t local = local_slice(owned_, slice);
  Impl& im = *impl_;
  if (im.runs.size() > 1) {
    throw std::logic_error("exact shard: attach_base on a shard of " +
                           std::to_string(im.runs.size()) + " runs");
  }
  if (im.runs.empty()) {
    im.runs.push_back({RunInfo{}, std::vector<SliceBaseView>(im.num_local), nullptr});
    im.run_infos.assign(1, RunInfo{});
  }
  Impl::Run& run = im.runs.front();
  // One run holds slices of different storages: keep them all alive.
  struct Keep {
    std::shared_ptr<const void> before, added;
  };
  run.keepalive = std::make_shared<Keep>(Keep{std::move(run.keepalive), std::move(keepalive)});
  if (im.slice_count[local] != 0) im.overlap[local] = 1;
  im.base_keys -= run.views[local].size();
  run.views[local] = view;
  im.base_keys += view.size();
}

void ExactShard::replace_newest_runs(std::size_t count, RunInfo info,
                                     std::vector<SliceBaseView> views,
                                     std::shared_ptr<const void> keepalive) {
  Impl& im = *impl_;
  if (views.size() != im.num_local) {
    throw std::invalid_argument("exact shard: " + std::to_string(views.size()) + " run views for " +
                                std::to_string(im.num_local) + " slices");
  }
  count = std::min(count, im.runs.size());
  for (std::size_t r = im.runs.size() - count; r < im.runs.size(); ++r) {
    for (const SliceBaseView& v : im.runs[r].views) im.base_keys -= v.size();
  }
  im.runs.resize(im.runs.size() - count);
  for (std::size_t local = 0; local < im.num_local; ++local) {
    if (im.slice_count[local] != 0) im.overlap[local] = 1;
    im.base_keys += views[local].size();
  }
  im.runs.push_back({info, std::move(views), std::move(keepalive)});
  im.run_infos.clear();
  for (const Impl::Run& r : im.runs) im.run_infos.push_back(r.info);
}

const std::vector<RunInfo>& ExactShard::runs() const noexcept { return impl_->run_infos; }

void ExactShard::drop_oldest_runs(std::size_t count) {
  Impl& im = *impl_;
  count = std::min(count, im.runs.size());
  for (std::size_t r = 0; r < count; ++r) {
    for (const SliceBaseView& v : im.runs[r].views) im.base_keys -= v.size();
  }
  im.runs.erase(im.runs.begin(), im.runs.begin() + static_cast<std::ptrdiff_t>(count));
  im.run_infos.erase(im.run_infos.begin(),
                     im.run_infos.begin() + static_cast<std::ptrdiff_t>(count));
}

std::size_t ExactShard::newest_holder(std::uint32_t slice, std::uint64_t fp,
                                      std::string_view key) const {
  const std::uint32_t local = local_slice(owned_, slice);
  const Impl& im = *impl_;
  if (im.delta_contains(local, fp, key)) return kInDelta;
  for (std::size_t r = im.runs.size(); r > 0; --r) {  // newest first
    if (im.runs[r - 1].views[local].contains(fp, key)) return r - 1;
  }
  return kNotHeld;
}

void ExactShard::insert_refresh(std::uint32_t slice, std::uint64_t fp, std::string_view key) {
  const std::uint32_t local = local_slice(owned_, slice);
  Impl& im = *impl_;
#ifndef NDEBUG
  if (im.delta_contains(local, fp, key)) {
    throw std::logic_error("exact shard: insert_refresh of a key already in the delta");
  }
#endif
  im.add_absent(local, fp, key);
}

SliceBaseView ExactShard::run_view(std::size_t run, std::uint32_t slice) const {
  const std::uint32_t local = local_slice(owned_, slice);
  if (run >= impl_->runs.size()) {
    throw std::out_of_range("exact shard: run " + std::to_string(run) + " of " +
                            std::to_string(impl_->runs.size()));
  }
  return impl_->runs[run].views[local];
}

SliceSize ExactShard::merged_slice_size(std::uint32_t slice, std::size_t depth) const {
  const std::uint32_t local = local_slice(owned_, slice);
  const Impl& im = *impl_;
  depth = im.depth_of(depth);
  if (im.overlap[local] == 0) {
    SliceSize size{im.slice_count[local], im.slice_key_bytes[local]};
    for (std::size_t r = im.runs.size() - depth; r < im.runs.size(); ++r) {
      size.keys += im.runs[r].views[local].size();
      size.bytes += im.runs[r].views[local].bytes.size();
    }
    return size;
  }
  SliceSize size;
  im.merge(local, depth, [&size](std::uint64_t, std::string_view k) {
    ++size.keys;
    size.bytes += k.size();
  });
  return size;
}

void ExactShard::write_merged_slice(std::uint32_t slice, std::span<std::uint64_t> fingerprints,
                                    std::span<std::uint64_t> offsets, std::span<char> bytes,
                                    std::size_t depth) const {
  const std::uint32_t local = local_slice(owned_, slice);
  const SliceSize size = merged_slice_size(slice, depth);
  const auto mismatch = [slice](const std::string& what) {
    return std::length_error("exact shard: merged slice " + std::to_string(slice) + ": " + what);
  };
  if (fingerprints.size() != size.keys || offsets.size() != size.keys + 1 ||
      bytes.size() != size.bytes) {
    throw mismatch("spans of " + std::to_string(fingerprints.size()) + "/" +
                   std::to_string(offsets.size()) + "/" + std::to_string(bytes.size()) +
                   " elements for " + std::to_string(size.keys) + " keys of " +
                   std::to_string(size.bytes) + " bytes");
  }
  std::size_t k = 0;
  std::size_t pos = 0;
  bool overflow = false;
  offsets[0] = 0;
  impl_->merge(local, depth, [&](std::uint64_t fp, std::string_view key) {
    if (k == fingerprints.size() || key.size() > bytes.size() - pos) {
      overflow = true;  // only if the shard changed meanwhile (a caller bug)
      return;
    }
    fingerprints[k] = fp;
    if (!key.empty()) std::memcpy(bytes.data() + pos, key.data(), key.size());
    pos += key.size();
    offsets[++k] = pos;
  });
  if (overflow || k != fingerprints.size() || pos != bytes.size()) {
    throw mismatch("changed while being merged");
  }
}

SliceBaseData ExactShard::merged_slice(std::uint32_t slice, std::size_t depth) const {
  const SliceSize size = merged_slice_size(slice, depth);
  SliceBaseData out;
  out.fingerprints.resize(size.keys);
  out.offsets.resize(size.keys + 1);
  out.bytes.resize(size.bytes);
  write_merged_slice(slice, out.fingerprints, out.offsets, out.bytes, depth);
  return out;
}

void ExactShard::fold_delta_into_base() {
  if (impl_->count() == 0 && impl_->runs.size() <= 1) return;
  // Merge everything first, attach after: merged_slice reads the delta.
  auto merged = std::make_shared<std::vector<SliceBaseData>>(impl_->num_local);
  std::vector<SliceBaseView> views(impl_->num_local);
  for (std::uint32_t local = 0; local < impl_->num_local; ++local) {
    (*merged)[local] = merged_slice(owned_.first + local);
    views[local] = (*merged)[local].view();
  }
  replace_newest_runs(kAllRuns, RunInfo{}, std::move(views), std::move(merged));
  clear_delta();
  // The keys now live in the in-memory run: give the delta's memory back
  // rather than hold both.
  impl_->arena.release();
  impl_->index.release();
}

void ExactShard::clear_delta() {
  Impl& im = *impl_;
  im.arena.clear();
  im.index.clear();
  std::fill(im.slice_count.begin(), im.slice_count.end(), 0U);
  std::fill(im.slice_key_bytes.begin(), im.slice_key_bytes.end(), 0U);
  std::fill(im.overlap.begin(), im.overlap.end(), char{0});
  im.invalidate_order();
}

std::uint64_t ExactShard::size() const noexcept { return impl_->base_keys + impl_->count(); }
std::uint64_t ExactShard::delta_keys() const noexcept { return impl_->count(); }
std::uint64_t ExactShard::delta_bytes() const noexcept { return impl_->delta_bytes(); }
std::uint64_t ExactShard::delta_mapped_bytes() const noexcept {
  return impl_->delta_mapped_bytes();
}
std::uint64_t ExactShard::base_keys() const noexcept { return impl_->base_keys; }

}  // namespace bloomshard::core
