#include "bloomshard/app/job_metrics.hpp"

#include <array>
#include <cstdio>

#include "bloomshard/app/json_writer.hpp"
#include "bloomshard/app/resource_usage.hpp"
#include "bloomshard/app/version.hpp"
#include "bloomshard/io/reject_reasons.hpp"

namespace bloomshard::app {
namespace {

// Every reason the read path can give, in a fixed order, so counts reduce as
// one vector. Anything else lands in "other".
constexpr std::array<std::string_view, 9> kKnownReasons = {
    io::reason::kLineTooLong,     io::reason::kEmptyLine,  io::reason::kMalformedJson,
    io::reason::kNotAnObject,     io::reason::kKeyMissing, io::reason::kKeyWrongType,
    io::reason::kKeyIntegerRange, io::reason::kKeyTooLong, kRejectInvalidUtf8};

std::vector<std::uint64_t> reason_vector(const io::RejectCounts& counts) {
  std::vector<std::uint64_t> v(kKnownReasons.size() + 1, 0);
  for (const auto& [reason, n] : counts) {
    std::size_t i = 0;
    while (i < kKnownReasons.size() && kKnownReasons[i] != reason) ++i;
    v[i] += n;
  }
  return v;
}

}  // namespace

JobSummary reduce_metrics(const comm::Communicator& comm, const InputFeed& feed,
                          const core::TwoTierSet& set, const comm::RouterStats& router,
                          const PhaseSeconds& phases, std::uint64_t rounds, double wall_seconds) {
  JobSummary s;
  s.ranks = comm.size();
  const FeedCounters& f = feed.counters();
  const core::DecisionCounters& d = set.counters();
  const std::vector<std::uint64_t> sums = comm.allreduce_sum(std::vector<std::uint64_t>{
      f.records, f.rejected, f.kept, f.dropped, f.input_bytes_done, f.output_bytes, d.decided,
      d.tier1_absent, d.tier1_maybe, d.tier2_lookups, d.duplicates, d.false_positives,
      router.payload_bytes_sent_remote, router.payload_bytes_sent, set.exact().size()});
  s.feed = {sums[0], sums[1], sums[2], sums[3], sums[4], sums[5]};
  s.decisions = {sums[6], sums[7], sums[8], sums[9], sums[10], sums[11]};
  s.bytes_exchanged = sums[12];
  s.payload_bytes = sums[13];
  s.tier2_keys = sums[14];

  const std::vector<std::uint64_t> reasons =
      comm.allreduce_sum(reason_vector(feed.reject_counts()));
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    if (reasons[i] == 0) continue;
    s.rejected_by_reason[i < kKnownReasons.size() ? std::string(kKnownReasons[i]) : "other"] =
        reasons[i];
  }

  s.rounds = comm.allreduce_max(rounds);
  s.max_rss_bytes = comm.allreduce_max(peak_rss_bytes());
  s.wall_seconds = comm.allreduce_max(wall_seconds);
  s.phase_seconds_max = {comm.allreduce_max(phases.read), comm.allreduce_max(phases.route),
                         comm.allreduce_max(phases.decide), comm.allreduce_max(phases.write)};

  const core::ScalableBloom& bloom = set.bloom();
  const auto num_slices = static_cast<double>(bloom.params().num_slices);
  const double my_share = static_cast<double>(bloom.owned().size()) / num_slices;
  s.fpr_target = bloom.params().fpr_target;
  for (std::size_t i = 0; i < bloom.num_layers(); ++i) {
    const core::BloomLayerStats st = bloom.layer_stats(i);
    LayerSummary l;
    l.capacity = st.geometry.capacity;
    l.fpr_target = st.geometry.fpr_target;
    l.k = st.geometry.k;
    l.bits_per_key = st.geometry.bits_per_key;
    const std::uint64_t my_bits = st.geometry.blocks_per_slice * 512 * bloom.owned().size();
    l.bits = comm.allreduce_sum(my_bits);
    l.inserted = comm.allreduce_sum(st.inserted);
    l.fill_ratio = comm.allreduce_sum(st.fill_ratio * static_cast<double>(my_bits)) /
                   static_cast<double>(l.bits);
    // Keys spread over slices uniformly: the job's FPR is the slice-weighted mean.
    l.fpr_estimate = comm.allreduce_sum(st.fpr_estimate * my_share);
    l.cardinality_estimate = comm.allreduce_sum(st.cardinality_estimate);
    s.filter_bits += l.bits;
    s.fpr_estimate += l.fpr_estimate;
    s.cardinality_estimate += l.cardinality_estimate;
    s.layers.push_back(l);
  }
  return s;
}

std::string metrics_json(const JobSummary& s) {
  JsonWriter j;
  j.begin_object();
  j.value("tool_version", tool_version());
  j.value("ranks", static_cast<std::uint64_t>(s.ranks));
  j.value("input_files", s.input_files);
  j.value("input_bytes", s.input_bytes);
  j.value("records", s.feed.records);
  j.value("kept", s.feed.kept);
  j.value("duplicates", s.decisions.duplicates);
  j.value("dropped", s.feed.dropped);
  j.value("rejected", s.feed.rejected);
  j.begin_object("rejected_by_reason");
  for (const auto& [reason, n] : s.rejected_by_reason) j.value(reason, n);
  j.end_object();
  j.value("decided", s.decisions.decided);
  j.value("tier1_absent", s.decisions.tier1_absent);
  j.value("tier1_maybe", s.decisions.tier1_maybe);
  j.value("tier2_lookups", s.decisions.tier2_lookups);
  j.value("false_positives", s.decisions.false_positives);
  j.value("false_positive_rate", s.feed.kept ? static_cast<double>(s.decisions.false_positives) /
                                                   static_cast<double>(s.feed.kept)
                                             : 0.0);
  j.value("tier2_keys", s.tier2_keys);
  j.value("output_bytes", s.feed.output_bytes);
  j.value("bytes_exchanged", s.bytes_exchanged);
  j.value("payload_bytes", s.payload_bytes);
  j.value("rounds", s.rounds);
  j.begin_object("phase_seconds");
  j.value("read", s.phase_seconds_max.read);
  j.value("route", s.phase_seconds_max.route);
  j.value("decide", s.phase_seconds_max.decide);
  j.value("write", s.phase_seconds_max.write);
  j.end_object();
  j.value("wall_seconds", s.wall_seconds);
  j.value("max_rss_bytes", s.max_rss_bytes);
  j.begin_object("filter");
  j.value("fpr_target", s.fpr_target);
  j.value("layers", static_cast<std::uint64_t>(s.layers.size()));
  j.value("bits", s.filter_bits);
  j.value("fpr_estimate", s.fpr_estimate);
  j.value("cardinality_estimate", s.cardinality_estimate);
  j.begin_array("layer");
  for (const LayerSummary& l : s.layers) {
    j.begin_object();
    j.value("capacity", l.capacity);
    j.value("fpr_target", l.fpr_target);
    j.value("k", static_cast<std::uint64_t>(l.k));
    j.value("bits_per_key", l.bits_per_key);
    j.value("bits", l.bits);
    j.value("inserted", l.inserted);
    j.value("fill_ratio", l.fill_ratio);
    j.value("fpr_estimate", l.fpr_estimate);
    j.value("cardinality_estimate", l.cardinality_estimate);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.end_object();
  return j.str();
}

std::string summary_text(const JobSummary& s) {
  char buf[512];
  const double dup_pct = s.feed.records ? 100.0 * static_cast<double>(s.feed.dropped) /
                                              static_cast<double>(s.feed.records)
                                        : 0.0;
  std::snprintf(buf, sizeof buf,
                "bloomshard dedup: %llu records, %llu kept, %llu duplicates (%.2f%%), "
                "%llu rejected; %llu ranks, %.2f s, %.0f records/s\n"
                "  tier 1: %llu maybe of %llu; tier 2: %llu lookups, %llu false positives; "
                "filter %zu layer(s), %.1f MiB, est. FPR %.3g; max RSS %.1f MiB\n",
                static_cast<unsigned long long>(s.feed.records),
                static_cast<unsigned long long>(s.feed.kept),
                static_cast<unsigned long long>(s.decisions.duplicates), dup_pct,
                static_cast<unsigned long long>(s.feed.rejected),
                static_cast<unsigned long long>(s.ranks), s.wall_seconds,
                s.wall_seconds > 0 ? static_cast<double>(s.feed.records) / s.wall_seconds : 0.0,
                static_cast<unsigned long long>(s.decisions.tier1_maybe),
                static_cast<unsigned long long>(s.decisions.decided),
                static_cast<unsigned long long>(s.decisions.tier2_lookups),
                static_cast<unsigned long long>(s.decisions.false_positives), s.layers.size(),
                static_cast<double>(s.filter_bits) / 8.0 / 1048576.0, s.fpr_estimate,
                static_cast<double>(s.max_rss_bytes) / 1048576.0);
  return buf;
}

}  // namespace bloomshard::app
