// Tier 2 storage. The delta is three allocations that grow in steps, never
// by copying the keys:
//   - an arena of 64 KiB chunks holding records [varint length][key bytes];
//     a key record over 4 KiB gets a chunk of its own, so the tail waste of
//     a chunk stays under 4 KiB (< 7%);
//   - entries {fingerprint, handle} in pages of 4096 (16 bytes per key), the
//     handle packing slice (24 bits), chunk (24 bits) and offset (16 bits);
//   - an open-addressing index of 32-bit entry numbers, linear probing, load
//     <= 1/2, doubled when half full (8..16 bytes per key).
// Arena chunks and entry pages are 64 KiB blocks of 2 MiB huge-page slabs.
// Measured: 48.5 bytes per 20-byte key at 100k keys (test_exact_shard,
// before the slabs; they add at most 2 MiB per shard).
// Base lookups are a binary search on the fingerprints, then a byte compare
// among equal fingerprints (64-bit collisions of different keys are legal).
#include "bloomshard/core/exact_shard.hpp"

#include <sys/mman.h>

#include "huge_pages.hpp"
#include "tier2_arena.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bloomshard::core {
namespace {

using detail::assign_on_huge_pages;
using detail::ByteArena;
using detail::kChunkBytes;
constexpr std::size_t kPageShift = 12;
constexpr std::size_t kPageEntries = std::size_t{1} << kPageShift;
constexpr std::size_t kInitialSlots = 1024;
constexpr std::uint64_t kMaxEntries = std::numeric_limits<std::uint32_t>::max() - 1;

struct Entry {
  std::uint64_t fingerprint;
  std::uint64_t handle;  // slice_local | chunk << 24 | offset << 48
};

// One cache line of entries, the unit build_order writes.
constexpr std::size_t kLineBytes = 64;
constexpr std::size_t kLineEntries = kLineBytes / sizeof(Entry);
static_assert(sizeof(Entry) == 16 && kLineEntries == 4);

// Copies one line of entries to line-aligned `dst` past the caches where
// the CPU can (SSE2 streaming stores; a plain copy elsewhere).
inline void stream_line(Entry* dst, const Entry* src) noexcept {
#if defined(__SSE2__)
  // build_order aligns runs to lines from a vector's data; _mm_stream_si128
  // needs that data 16-byte aligned, as operator new gives it here.
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16);
  auto* d = reinterpret_cast<__m128i*>(dst);
  const auto* v = reinterpret_cast<const __m128i*>(src);
  for (std::size_t k = 0; k < kLineEntries; ++k) _mm_stream_si128(d + k, _mm_loadu_si128(v + k));
#else
  std::copy_n(src, kLineEntries, dst);
#endif
}

// Orders the streaming stores before later reads of the array.
inline void stream_fence() noexcept {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

constexpr std::uint32_t handle_slice(std::uint64_t h) noexcept {
  return static_cast<std::uint32_t>(h & 0xFFFFFFU);
}
constexpr std::uint64_t handle_chunk(std::uint64_t h) noexcept { return (h >> 24) & 0xFFFFFFU; }
constexpr std::uint64_t handle_offset(std::uint64_t h) noexcept { return h >> 48; }

}  // namespace

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
  std::vector<std::uint32_t> slice_count;
  std::vector<std::uint64_t> slice_key_bytes;
  std::vector<char> overlap;

  ByteArena arena;
  std::vector<Entry*> pages;  // kPageEntries each, blocks of the arena's slabs
  std::uint64_t count = 0;
  std::vector<std::uint32_t> slots;  // entry number + 1; 0 = empty
  unsigned slot_shift = 64;          // slot = (mix(fp) >> slot_shift)

  // Copies of the delta entries bucketed by slice (insertion order inside a
  // slice), built lazily by the first merge; local slice s holds
  // order[slice_start[s], slice_start[s] + slice_count[s]), each run
  // starting on a 64-byte line (see build_order). Copies, not entry
  // numbers: a gather through numbers is a random read per key (a TLB miss
  // each at 10M keys), the copy is one sequential pass.
  mutable std::mutex order_mutex;
  mutable bool order_valid = false;
  mutable std::vector<Entry> order;
  mutable std::vector<std::uint64_t> slice_start;

  [[nodiscard]] const Entry& entry(std::uint64_t i) const noexcept {
    return pages[i >> kPageShift][i & (kPageEntries - 1)];
  }
  [[nodiscard]] std::string_view bytes_of(const Entry& e) const noexcept {
    return arena.get(handle_chunk(e.handle), handle_offset(e.handle));
  }
  [[nodiscard]] std::size_t home_slot(std::uint64_t fp) const noexcept {
    // Fingerprints are uniform in a job, but tests and collisions feed
    // structured ones: a multiply spreads them over the table.
    return static_cast<std::size_t>((fp * 0x9E3779B97F4A7C15ULL) >> slot_shift);
  }

  // Slot holding the key, or the empty slot where it would go.
  [[nodiscard]] std::size_t find_slot(std::uint32_t local, std::uint64_t fp, std::string_view key,
                                      bool& found) const noexcept {
    const std::size_t mask = slots.size() - 1;
    for (std::size_t s = home_slot(fp);; s = (s + 1) & mask) {
      const std::uint32_t v = slots[s];
      if (v == 0) {
        found = false;
        return s;
      }
      const Entry& e = entry(v - 1);
      if (e.fingerprint == fp && handle_slice(e.handle) == local && bytes_of(e) == key) {
        found = true;
        return s;
      }
    }
  }

  [[nodiscard]] bool delta_contains(std::uint32_t local, std::uint64_t fp,
                                    std::string_view key) const noexcept {
    if (count == 0) return false;
    bool found = false;
    (void)find_slot(local, fp, key, found);
    return found;
  }

  void rehash(std::size_t new_size) {
    assign_on_huge_pages(slots, new_size, std::uint32_t{0});
    slot_shift = 64U - static_cast<unsigned>(std::countr_zero(new_size));
    const std::size_t mask = new_size - 1;
    // Entries are read in order but land at random: prefetching the slot of
    // the entry kAhead places on overlaps those misses (a doubling at 4M
    // keys reinserts every key; without it the growth steps were about a
    // fifth of the decide phase).
    constexpr std::uint64_t kAhead = 16;
    for (std::uint64_t i = 0; i < count; ++i) {
      if (i + kAhead < count)
        __builtin_prefetch(slots.data() + home_slot(entry(i + kAhead).fingerprint), 1);
      std::size_t s = home_slot(entry(i).fingerprint);
      while (slots[s] != 0) s = (s + 1) & mask;
      slots[s] = static_cast<std::uint32_t>(i + 1);
    }
  }

  void invalidate_order() {
    std::lock_guard lock(order_mutex);
    order_valid = false;
    std::vector<Entry>().swap(order);
    std::vector<std::uint64_t>().swap(slice_start);
  }

  void add(std::uint32_t local, std::uint64_t fp, std::string_view key, std::size_t slot) {
    if (count >= kMaxEntries) {
      throw std::length_error("exact shard delta: more than 2^32 - 2 keys; checkpoint sooner");
    }
    if ((count >> kPageShift) == pages.size()) {
      static_assert(kPageEntries * sizeof(Entry) == kChunkBytes);
      pages.push_back(reinterpret_cast<Entry*>(arena.take_block()));
    }
    const auto [chunk, offset] = arena.append(key);
    Entry& e = pages[count >> kPageShift][count & (kPageEntries - 1)];
    e.fingerprint = fp;
    e.handle = local | (chunk << 24) | (offset << 48);
    slots[slot] = static_cast<std::uint32_t>(count + 1);
    ++count;
    ++slice_count[local];
    slice_key_bytes[local] += key.size();
    if (order_valid || !order.empty()) invalidate_order();
    if (count * 2 > slots.size()) rehash(slots.size() * 2);
  }

  // A counting sort by slice; entries are read in insertion order. The
  // scatter is write-combined in software: each slice gathers one 64-byte
  // line (4 entries) in a small cache-resident buffer, and full lines go to
  // line-aligned places with non-temporal stores (each slice's run starts
  // on a line). A plain scatter of 50M entries to 2048 slices took twice as
  // long (a read-for-ownership and often a TLB miss per 16-byte store), and
  // this pass was a third of a checkpoint's merge.
  void build_order() const {
    order.clear();
    order.resize(count + kLineEntries * (num_local + 1));  // line padding and alignment
    const auto address = reinterpret_cast<std::uintptr_t>(order.data());
    slice_start.assign(num_local + 1, 0);
    slice_start[0] = (kLineBytes - address % kLineBytes) % kLineBytes / sizeof(Entry);
    for (std::size_t s = 0; s < num_local; ++s) {
      const std::uint64_t lines = (slice_count[s] + kLineEntries - 1) / kLineEntries;
      slice_start[s + 1] = slice_start[s] + lines * kLineEntries;
    }
    std::vector<std::uint64_t> fill(slice_start.begin(), slice_start.end() - 1);
    std::vector<Entry> lines(num_local * kLineEntries);
    std::vector<std::uint8_t> held(num_local, 0);
    for (std::uint64_t i = 0; i < count; ++i) {
      const Entry& e = entry(i);
      const std::uint32_t s = handle_slice(e.handle);
      Entry* line = lines.data() + std::size_t{s} * kLineEntries;
      line[held[s]] = e;
      if (++held[s] == kLineEntries) {
        stream_line(order.data() + fill[s], line);
        fill[s] += kLineEntries;
        held[s] = 0;
      }
    }
    stream_fence();
    for (std::size_t s = 0; s < num_local; ++s) {
      std::copy_n(lines.data() + s * kLineEntries, held[s], order.data() + fill[s]);
    }
    order_valid = true;
  }

  [[nodiscard]] bool less_entry(const Entry& a, const Entry& b) const noexcept {
    return a.fingerprint != b.fingerprint ? a.fingerprint < b.fingerprint
                                          : bytes_of(a) < bytes_of(b);
  }

  // The slice's delta entries sorted by (fingerprint, bytes). Fingerprints
  // are uniform in a job, so one counting pass on their top log2(n) bits
  // leaves buckets of 1-2 entries; std::sort per bucket keeps structured or
  // colliding fingerprints (tests, adversarial input) correct.
  [[nodiscard]] std::vector<Entry> sorted_delta(std::uint32_t local) const {
    std::size_t d_begin = 0;
    std::size_t d_end = 0;
    {
      std::lock_guard lock(order_mutex);
      if (!order_valid) build_order();
      d_begin = slice_start[local];
      d_end = d_begin + slice_count[local];
    }
    const std::size_t n = d_end - d_begin;
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(d_begin);
    const auto last = order.begin() + static_cast<std::ptrdiff_t>(d_end);
    const auto less = [this](const Entry& a, const Entry& b) { return less_entry(a, b); };
    if (n < 256) {
      std::vector<Entry> v(first, last);
      std::sort(v.begin(), v.end(), less);
      return v;
    }
    const unsigned bits = std::min(16U, static_cast<unsigned>(std::bit_width(n)) - 1U);
    const unsigned shift = 64U - bits;
    std::vector<std::uint32_t> start((std::size_t{1} << bits) + 1, 0);
    for (auto it = first; it != last; ++it) {
      ++start[static_cast<std::size_t>(it->fingerprint >> shift) + 1];
    }
    for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
    std::vector<Entry> out(n);
    {
      std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
      for (auto it = first; it != last; ++it) {
        out[fill[static_cast<std::size_t>(it->fingerprint >> shift)]++] = *it;
      }
    }
    for (std::size_t b = 0; b + 1 < start.size(); ++b) {
      if (start[b + 1] - start[b] > 1) {
        std::sort(out.begin() + start[b], out.begin() + start[b + 1], less);
      }
    }
    return out;
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

  // Calls emit(fingerprint, bytes) for the slice's delta `d` merged with its
  // newest `depth` runs, in order, each key once (a key in several sources,
  // possible only for a run attached over the delta, is emitted once). A
  // k-way pick over the heads: k <= max_runs + 1 (about 11), and heads differ
  // in the fingerprint nearly always, so a pick is k integer compares.
  template <class Emit>
  void merge(std::uint32_t local, const std::vector<Entry>& d, std::size_t depth,
             Emit&& emit) const {
    constexpr std::size_t kAhead = 8;  // arena records are read in random order
    const std::size_t nd = d.size();
    for (std::size_t p = 0; p < std::min(kAhead, nd); ++p) {
      __builtin_prefetch(arena.record(handle_chunk(d[p].handle), handle_offset(d[p].handle)));
    }
    const auto delta_key = [&](std::size_t j) {
      if (j + kAhead < nd) {
        const Entry& a = d[j + kAhead];
        __builtin_prefetch(arena.record(handle_chunk(a.handle), handle_offset(a.handle)));
      }
      return bytes_of(d[j]);
    };
    depth = depth_of(depth);
    if (depth == 0) {
      for (std::size_t j = 0; j < nd; ++j) emit(d[j].fingerprint, delta_key(j));
      return;
    }
    struct Head {
      const SliceBaseView* run;
      std::size_t i;
    };
    std::vector<Head> heads;
    heads.reserve(depth);
    for (std::size_t r = runs.size() - depth; r < runs.size(); ++r) {
      if (runs[r].views[local].size() > 0) heads.push_back({&runs[r].views[local], 0});
    }
    std::size_t j = 0;
    std::string_view dk = nd > 0 ? delta_key(0) : std::string_view();
    while (!heads.empty() || j < nd) {
      // The smallest head key; -1 = the delta.
      std::ptrdiff_t best = -1;
      std::uint64_t bfp = j < nd ? d[j].fingerprint : 0;
      std::string_view bkey = dk;
      for (std::size_t h = 0; h < heads.size(); ++h) {
        const std::uint64_t fp = heads[h].run->fingerprints[heads[h].i];
        if (best == -1 && j >= nd) {
          best = static_cast<std::ptrdiff_t>(h);
          bfp = fp;
          bkey = heads[h].run->key(heads[h].i);
          continue;
        }
        if (fp > bfp) continue;
        const std::string_view k = heads[h].run->key(heads[h].i);
        if (less_key(fp, k, bfp, bkey)) {
          best = static_cast<std::ptrdiff_t>(h);
          bfp = fp;
          bkey = k;
        }
      }
      emit(bfp, bkey);
      // Advance every source whose head equals the emitted key.
      if (j < nd && d[j].fingerprint == bfp && dk == bkey) {
        if (++j < nd) dk = delta_key(j);
      }
      for (std::size_t h = 0; h < heads.size();) {
        Head& hd = heads[h];
        if (hd.run->fingerprints[hd.i] == bfp && hd.run->key(hd.i) == bkey) {
          if (++hd.i == hd.run->size()) {
            heads[h] = heads.back();
            heads.pop_back();
            continue;
          }
        }
        ++h;
      }
    }
  }

  [[nodiscard]] std::uint64_t delta_bytes() const noexcept {
    std::uint64_t b = arena.bytes();
    b += pages.capacity() * sizeof(pages[0]);  // the pages themselves are arena blocks
    b += slots.capacity() * sizeof(std::uint32_t);
    std::lock_guard lock(order_mutex);
    b += order.capacity() * sizeof(Entry) + slice_start.capacity() * sizeof(std::uint64_t);
    return b;
  }
};

ExactShard::ExactShard(SliceRange owned, std::uint32_t num_slices)
    : owned_(owned), num_slices_(num_slices) {
  if (num_slices < 1 || num_slices > kMaxSlices || owned.first >= owned.last ||
      owned.last > num_slices) {
    throw std::invalid_argument("exact shard: slice range [" + std::to_string(owned.first) + ", " +
                                std::to_string(owned.last) + ") not a non-empty part of [0, " +
                                std::to_string(num_slices) + ")");
  }
  impl_ = std::make_unique<Impl>(owned.size());
  impl_->rehash(kInitialSlots);
}

ExactShard::~ExactShard() = default;
ExactShard::ExactShard(ExactShard&&) noexcept = default;
ExactShard& ExactShard::operator=(ExactShard&&) noexcept = default;

namespace {
std::uint32_t local_slice(SliceRange owned, std::uint32_t slice) {
  if (!owned.contains(slice)) {
    throw std::out_of_range("exact shard: slice " + std::to_string(slice) + " not in owned [" +
                            std::to_string(owned.first) + ", " + std::to_string(owned.last) + ")");
  }
  return slice - owned.first;
}
}  // namespace

bool ExactShard::contains(std::uint32_t slice, std::uint64_t fp, std::string_view key) const {
  const std::uint32_t local = local_slice(owned_, slice);
  return impl_->delta_contains(local, fp, key) || impl_->runs_contain(local, fp, key);
}

bool ExactShard::insert(std::uint32_t slice, std::uint64_t fp, std::string_view key) {
  const std::uint32_t local = local_slice(owned_, slice);
  bool found = false;
  const std::size_t slot = impl_->find_slot(local, fp, key, found);
  if (found || impl_->runs_contain(local, fp, key)) return false;
  impl_->add(local, fp, key, slot);
  return true;
}

void ExactShard::insert_new(std::uint32_t slice, std::uint64_t fp, std::string_view key) {
  const std::uint32_t local = local_slice(owned_, slice);
#ifndef NDEBUG
  if (contains(slice, fp, key)) {
    throw std::logic_error("exact shard: insert_new of a key already present");
  }
#endif
  Impl& im = *impl_;
  const std::size_t mask = im.slots.size() - 1;
  std::size_t s = im.home_slot(fp);
  while (im.slots[s] != 0) s = (s + 1) & mask;
  im.add(local, fp, key, s);
}

void ExactShard::prefetch(std::uint64_t fp) const noexcept {
  __builtin_prefetch(impl_->slots.data() + impl_->home_slot(fp));
}

void ExactShard::prefetch_entry(std::uint64_t fp) const noexcept {
  const Impl& im = *impl_;
  const std::uint32_t v = im.slots[im.home_slot(fp)];
  if (v != 0) __builtin_prefetch(&im.entry(v - 1));
}

void ExactShard::prefetch_key_bytes(std::uint64_t fp) const noexcept {
  const Impl& im = *impl_;
  const std::uint32_t v = im.slots[im.home_slot(fp)];
  if (v == 0) return;
  const Entry& e = im.entry(v - 1);
  // The home slot may hold another key (a probe run): its bytes are then a
  // wasted line, never a wrong answer.
  if (e.fingerprint == fp) {
    __builtin_prefetch(im.arena.record(handle_chunk(e.handle), handle_offset(e.handle)));
  }
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
  const std::size_t mask = im.slots.size() - 1;
  std::size_t s = im.home_slot(fp);
  while (im.slots[s] != 0) s = (s + 1) & mask;
  im.add(local, fp, key, s);
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
  im.merge(local, im.sorted_delta(local), depth, [&size](std::uint64_t, std::string_view k) {
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
  impl_->merge(local, impl_->sorted_delta(local), depth,
               [&](std::uint64_t fp, std::string_view key) {
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
  if (impl_->count == 0 && impl_->runs.size() <= 1) return;
  // Merge everything first, attach after: merged_slice reads the delta.
  auto merged = std::make_shared<std::vector<SliceBaseData>>(impl_->num_local);
  std::vector<SliceBaseView> views(impl_->num_local);
  for (std::uint32_t local = 0; local < impl_->num_local; ++local) {
    (*merged)[local] = merged_slice(owned_.first + local);
    views[local] = (*merged)[local].view();
  }
  replace_newest_runs(kAllRuns, RunInfo{}, std::move(views), std::move(merged));
  clear_delta();
}

void ExactShard::clear_delta() {
  Impl& im = *impl_;
  im.arena = ByteArena();
  std::vector<Entry*>().swap(im.pages);
  im.count = 0;
  std::fill(im.slice_count.begin(), im.slice_count.end(), 0U);
  std::fill(im.slice_key_bytes.begin(), im.slice_key_bytes.end(), 0U);
  std::fill(im.overlap.begin(), im.overlap.end(), char{0});
  im.invalidate_order();
  im.rehash(kInitialSlots);
}

std::uint64_t ExactShard::size() const noexcept { return impl_->base_keys + impl_->count; }
std::uint64_t ExactShard::delta_keys() const noexcept { return impl_->count; }
std::uint64_t ExactShard::delta_bytes() const noexcept { return impl_->delta_bytes(); }
std::uint64_t ExactShard::base_keys() const noexcept { return impl_->base_keys; }

}  // namespace bloomshard::core
