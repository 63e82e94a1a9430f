#include "core/bloom/sizing_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "core/order/file_order.hpp"
#include "core/order/output_offset_map.hpp"

namespace bloomshard::core {
namespace {

// Round payload one rank may receive in the worst (skewed) case, R x batch:
// kept below 1 GiB, half of MPI's int limit (router.hpp).
constexpr double kMaxRoundReceiveBytes = 1024.0 * 1048576.0;
constexpr std::uint64_t kCapacityHeadroomTenths = 11;  // recommended --capacity: 1.1 x distinct
constexpr int kStepsPerLayer = 64;                     // midpoint rule for the FPR integral

void check(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

double layer_bits(const BloomLayerGeometry& g, std::uint32_t slices) {
  return static_cast<double>(g.blocks_per_slice) * 512.0 * slices;
}

double layer_fpr(const BloomLayerGeometry& g, std::uint32_t slices, double keys) {
  return keys > 0 ? blocked_fpr(layer_bits(g, slices) / keys, g.k) : 0.0;
}

// Fills layers with `unique` keys in order; sets layer count and Bloom bytes
// (whole filter) and returns the expected false positives: every new key is
// tested against the filter as it is when the key arrives.
double simulate_layers(const ScalableBloomParams& params, double unique, SizingPlan& p) {
  double left = unique;
  double false_positives = 0;
  double full_layers_fpr = 0;  // sum of the FPRs of the layers already full
  double bloom_bits = 0;
  std::uint32_t layer = 0;
  for (;; ++layer) {
    const BloomLayerGeometry g = layer_geometry(params, layer);
    bloom_bits += layer_bits(g, params.num_slices);
    const double n = std::min(left, static_cast<double>(g.capacity));
    const double step = n / kStepsPerLayer;
    for (int s = 0; s < kStepsPerLayer; ++s) {
      const double at = (s + 0.5) * step;
      false_positives += step * (full_layers_fpr + layer_fpr(g, params.num_slices, at));
    }
    left -= n;
    full_layers_fpr += layer_fpr(g, params.num_slices, n);
    if (left <= 0) break;
  }
  p.layers = layer + 1;
  p.bloom_bytes = bloom_bits / 8.0;
  return false_positives;
}

}  // namespace

std::string mib_label(double bytes) {
  char buf[32];
  const double m = bytes / 1048576.0;
  std::snprintf(buf, sizeof buf, m >= 100 ? "%.0f MiB" : "%.1f MiB", m);
  return buf;
}

std::string count_label(double n) {
  char buf[32];
  if (n >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.1fG", n / 1e9);
  } else if (n >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  } else if (n >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  }
  return buf;
}

SizingPlan make_plan(const PlanInputs& in) {
  check(in.records > 0, "--records must be >= 1");
  check(in.unique_fraction > 0 && in.unique_fraction <= 1, "--unique-fraction must be in (0, 1]");
  check(in.key_bytes > 0, "--key-bytes must be > 0");
  check(in.record_bytes >= in.key_bytes, "--record-bytes must be >= --key-bytes");
  check(in.ranks >= 1, "--ranks must be >= 1");
  check(in.fpr > 0 && in.fpr <= 0.5, "--fpr must be in (0, 0.5]");
  check(in.checkpoint_every >= 0, "--checkpoint-every must be >= 0");
  check(in.records_per_second > 0, "--records-per-second must be > 0");
  check(in.disk_bandwidth > 0, "--disk-bandwidth must be > 0");
  check(in.batch_duplicate_fraction >= 0 && in.batch_duplicate_fraction <= 1,
        "--batch-duplicate-fraction must be in [0, 1]");
  SizingPlan p;
  p.in = in;
  const double records = static_cast<double>(in.records);
  const double ranks = in.ranks;
  p.unique_keys = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::llround(records * in.unique_fraction)));
  p.duplicates = in.records - std::min(in.records, p.unique_keys);

  // Integer ceil(unique x 1.1): 700000 gives 770000, not 770001.
  p.recommended_capacity = (p.unique_keys * kCapacityHeadroomTenths + 9) / 10;
  if (p.in.capacity == 0) p.in.capacity = p.recommended_capacity;
  p.recommended_slices = default_num_slices(in.ranks, p.in.capacity);
  if (p.in.slices == 0) p.in.slices = p.recommended_slices;
  check(p.in.slices >= in.ranks && p.in.slices <= kMaxSlices,
        "--slices must be >= --ranks and <= the slice limit");
  const double wire_per_record = 1.0 + kWireBytesPerKey / in.record_bytes;
  const double batch_cap = kMaxRoundReceiveBytes / (ranks * wire_per_record);
  p.recommended_batch_bytes = static_cast<std::uint64_t>(
      std::max(4096.0, std::min(static_cast<double>(default_batch_bytes(in.ranks)), batch_cap)));
  if (p.in.batch_bytes == 0) p.in.batch_bytes = p.recommended_batch_bytes;

  ScalableBloomParams params;
  params.initial_capacity = p.in.capacity;
  params.fpr_target = in.fpr;
  params.num_slices = p.in.slices;
  p.false_positives = simulate_layers(params, static_cast<double>(p.unique_keys), p);
  p.tier2_lookups =
      static_cast<double>(p.duplicates) * (1.0 - in.batch_duplicate_fraction) + p.false_positives;

  // Per rank: slices, and so keys, are spread evenly.
  const double keys_per_rank = static_cast<double>(p.unique_keys) / ranks;
  const double records_per_rank = records / ranks;
  p.tier2_disk_bytes = in.checkpoints ? keys_per_rank * (kTier2BytesPerKey + in.key_bytes) : 0.0;
  const double delta_per_key =
      (in.checkpoints ? kDeltaBytesPerKey : kDeltaBytesPerKey - kMergeBucketBytesPerKey) +
      in.key_bytes;
  double delta_keys = keys_per_rank;
  if (in.checkpoints && in.checkpoint_every > 0) {
    delta_keys =
        std::min(delta_keys, in.records_per_second * in.checkpoint_every * in.unique_fraction);
  }
  if (in.checkpoints) {  // a delta past its budget forces a checkpoint
    delta_keys = std::min(delta_keys, static_cast<double>(in.max_delta_bytes) / delta_per_key);
  }
  p.delta_bytes = delta_keys * delta_per_key + 65536.0;
  // The lockstep layout reads its blocks without the read-ahead thread
  // (app/feed/input_feed.cpp reads_blocks), but the block written in the
  // background holds its reader buffers (about a batch) while the next
  // one is read.
  p.round_buffer_bytes =
      kRoundBufferFactor * static_cast<double>(p.in.batch_bytes) +
      (in.input_order && in.lockstep ? static_cast<double>(p.in.batch_bytes) : kReadAheadBytes);
  double remembered_keys = 0;  // the whole job's, --kept-copy first
  if (in.input_order && in.lockstep) {
    // One round's keys at most, spread over the owners (the table the
    // lockstep order reserves, app/round/key_order.cpp); emptied every
    // round; nothing retracted, no offset map.
    const auto round_keys = static_cast<std::uint64_t>(std::min(
        static_cast<double>(p.in.batch_bytes) / static_cast<double>(kInputOrderReserveBytesPerKey),
        static_cast<double>(kInputOrderMaxReserveKeys)));
    p.order_table_bytes = static_cast<double>(order_table_peak_bytes(round_keys, round_keys));
  } else if (in.input_order) {
    // The watermark sits in the slowest rank's input; the kept copies of
    // the inputs the others read ahead are remembered: about `ranks`
    // inputs' distinct keys (measured 10M records in 16 inputs at 2 ranks:
    // at most 506K keys an owner, a 24 MiB table grown from the 12 MiB
    // reserve; this model gives 437K and the same table).
    const double share =
        in.inputs > 0 ? std::min(1.0, ranks / static_cast<double>(in.inputs)) : 1.0;
    const double remembered = static_cast<double>(p.unique_keys) * share / ranks;
    const double reserved = std::min(
        records * in.record_bytes / static_cast<double>(kInputOrderReserveBytesPerKey) / ranks,
        static_cast<double>(kInputOrderMaxReserveKeys));
    p.order_table_bytes = static_cast<double>(order_table_peak_bytes(
        static_cast<std::uint64_t>(reserved), static_cast<std::uint64_t>(std::ceil(remembered))));
    remembered_keys = remembered * ranks;
    p.offset_map_bytes =
        std::min(records_per_rank * (1.0 - in.unique_fraction) * kOutputOffsetMapBytesPerLeftOut,
                 static_cast<double>(kOutputOffsetMapMaxBytes));
    p.retractions = std::ceil(static_cast<double>(p.duplicates) * share / 2.0);
    p.retraction_bytes = p.retractions * kEndPassBytesPerRetraction / ranks;
  }
  const double bloom_per_rank = p.bloom_bytes / ranks;
  const bool collective_io = in.ranks > 1 && in.checkpoints;
  p.peak_rss_bytes = kBaseRssBytes + (collective_io ? kMultiRankRssBytes : 0.0) + bloom_per_rank +
                     p.delta_bytes + p.tier2_disk_bytes + p.round_buffer_bytes +
                     p.order_table_bytes + p.offset_map_bytes + p.retraction_bytes;
  p.bloom_bytes = bloom_per_rank;

  const double read_seconds = records_per_rank / in.records_per_second;
  p.checkpoints = static_cast<std::uint64_t>(std::max(1.0, std::ceil(keys_per_rank / delta_keys)));
  if (in.checkpoint_every > 0) {
    p.checkpoints = std::max<std::uint64_t>(
        p.checkpoints, static_cast<std::uint64_t>(std::ceil(read_seconds / in.checkpoint_every)));
  }
  // --kept-copy first saves every owner's remembered kept copies and its
  // retractions as rows of the generation (24 bytes each), and its end
  // pass one more generation (the cut outputs recorded before their renames).
  p.checkpoint_bytes = bloom_per_rank * ranks +
                       delta_keys * ranks * (kTier2BytesPerKey + in.key_bytes) +
                       (remembered_keys + p.retractions) * kInputOrderRowBytesPerKey;
  if (in.input_order) ++p.checkpoints;
  p.checkpoint_seconds = p.checkpoint_bytes / in.disk_bandwidth;
  p.state_bytes = bloom_per_rank * ranks +
                  static_cast<double>(p.unique_keys) * (kTier2BytesPerKey + in.key_bytes);
  if (!in.checkpoints) {
    p.checkpoints = 0;
    p.checkpoint_bytes = p.checkpoint_seconds = p.state_bytes = 0;
  }

  p.keys_per_round = std::max(1.0, static_cast<double>(p.in.batch_bytes) / in.record_bytes);
  p.exchange_bytes = p.keys_per_round * (kWireBytesPerKey + in.key_bytes) + p.keys_per_round;
  // Count exchange (Alltoall), keys (Alltoallv), verdicts (Alltoallv): R - 1 each.
  p.messages = 3ULL * (in.ranks - 1);
  p.rounds = static_cast<std::uint64_t>(std::ceil(records_per_rank / p.keys_per_round));
  p.seconds = read_seconds + static_cast<double>(p.checkpoints) * p.checkpoint_seconds;
  return p;
}

std::string plan_summary_line(const SizingPlan& p) {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "plan: %u ranks, %s records (%s distinct) -> peak RSS ~%s/rank (Bloom %s, delta %s, "
      "rounds %s), state %s, %llu checkpoint(s) of ~%s (~%.1f s), ~%s tier-2 lookups",
      p.in.ranks, count_label(static_cast<double>(p.in.records)).c_str(),
      count_label(static_cast<double>(p.unique_keys)).c_str(), mib_label(p.peak_rss_bytes).c_str(),
      mib_label(p.bloom_bytes).c_str(), mib_label(p.delta_bytes).c_str(),
      mib_label(p.round_buffer_bytes).c_str(), mib_label(p.state_bytes).c_str(),
      static_cast<unsigned long long>(p.checkpoints), mib_label(p.checkpoint_bytes).c_str(),
      p.checkpoint_seconds, count_label(p.tier2_lookups).c_str());
  std::string line = buf;
  if (p.order_table_bytes > 0) line += ", order table " + mib_label(p.order_table_bytes) + "/rank";
  return line;
}

}  // namespace bloomshard::core
