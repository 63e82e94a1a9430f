#include "app/report/job_metrics.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>

#include "app/cli/version.hpp"
#include "app/feed/skipped_inputs.hpp"
#include "app/report/json_writer.hpp"
#include "app/report/resource_usage.hpp"
#include "app/run/json_fields.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "comm/transport_defaults.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::app {
namespace {

// Collective: each phase's maximum over ranks.
PhaseSeconds max_over_ranks(const comm::Communicator& comm, const PhaseSeconds& p) {
  return {comm.allreduce_max(p.read), comm.allreduce_max(p.route), comm.allreduce_max(p.decide),
          comm.allreduce_max(p.write)};
}

// Collective: every rank's phases, on every rank (an allgather of 4 values
// per rank, the doubles as their bits: 512 KiB at 16384 ranks, once per
// segment).
std::vector<PhaseSeconds> gather_phases(const comm::Communicator& comm, const PhaseSeconds& p) {
  const std::array<std::uint64_t, 4> mine = {
      std::bit_cast<std::uint64_t>(p.read), std::bit_cast<std::uint64_t>(p.route),
      std::bit_cast<std::uint64_t>(p.decide), std::bit_cast<std::uint64_t>(p.write)};
  const std::vector<std::uint64_t> all = comm.allgather(mine);
  std::vector<PhaseSeconds> by_rank(all.size() / 4);
  for (std::size_t r = 0; r < by_rank.size(); ++r) {
    by_rank[r] = {std::bit_cast<double>(all[4 * r]), std::bit_cast<double>(all[4 * r + 1]),
                  std::bit_cast<double>(all[4 * r + 2]), std::bit_cast<double>(all[4 * r + 3])};
  }
  return by_rank;
}

void write_phases(JsonWriter& j, const char* name, const PhaseSeconds& p) {
  j.begin_object(name);
  j.value("read", p.read);
  j.value("route", p.route);
  j.value("decide", p.decide);
  j.value("write", p.write);
  j.end_object();
}

// Every reason the read path can give, in a fixed order, so counts reduce as
// one vector. Anything else lands in "other".
constexpr std::array<std::string_view, 10> kKnownReasons = {
    io::reason::kLineTooLong,     io::reason::kEmptyLine,  io::reason::kMalformedJson,
    io::reason::kNotAnObject,     io::reason::kKeyMissing, io::reason::kKeyWrongType,
    io::reason::kKeyIntegerRange, io::reason::kKeyTooLong, kRejectInvalidUtf8,
    kRejectParagraphNotString};

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

JobCounters local_counters(const InputFeed& feed, const core::TwoTierSet& set,
                           const comm::RouterStats& router, std::uint64_t rounds) {
  const FeedCounters& f = feed.counters();
  const core::DecisionCounters& d = set.counters();
  JobCounters c;
  c.records = f.records;
  c.kept = f.kept;
  c.dropped = f.dropped;
  c.rejected = f.rejected;
  c.decided = d.decided;
  c.tier1_absent = d.tier1_absent;
  c.tier1_maybe = d.tier1_maybe;
  c.tier2_lookups = d.tier2_lookups;
  // Owners confirmed d.duplicates in tier 2; the router (and, for split
  // inputs' tagged keys, the job: combine_in_file_order) dropped the later
  // copies inside each batch before they travelled.
  c.duplicates = d.duplicates + router.keys_combined + f.combined_in_file_order;
  c.batch_duplicates = router.keys_combined + f.combined_in_file_order;
  c.subrounds = router.subrounds;
  c.retracted = f.retracted;
  c.false_positives = d.false_positives;
  c.output_bytes = f.output_bytes;
  c.bytes_exchanged = router.payload_bytes_sent_remote;
  c.payload_bytes = router.payload_bytes_sent;
  c.rounds = rounds;
  const ParagraphCounters p = feed.paragraph_counters();
  c.paragraphs = p.paragraphs;
  c.paragraphs_keyed = p.paragraphs_keyed;
  c.paragraphs_removed = p.paragraphs_removed;
  c.records_changed = p.records_changed;
  c.records_dropped = p.records_dropped;
  c.paragraph_bytes_removed = p.bytes_removed;
  const MinHashCounters m = feed.minhash_counters();
  c.minhash_records = m.records;
  c.minhash_empty_texts = m.empty_texts;
  c.near_duplicates = m.near_duplicates;
  c.band_keys = m.band_keys;
  c.band_keys_new = m.band_keys_new;
  c.minhash_candidates = m.candidates;
  c.confirmed_hits = m.confirmed_hits;
  c.unconfirmed_hits = m.unconfirmed_hits;
  for (const auto& [reason, n] : feed.reject_counts()) c.rejected_by_reason[reason] = n;
  return c;
}

JobCounters reduce_counters(const comm::Communicator& comm, const JobCounters& local) {
  // Summed counters travel as one vector; those the same on every rank
  // (rounds) as another, reduced by max.
  std::vector<std::uint64_t> sums;
  std::vector<std::uint64_t> maxima;
  for (const CounterField& f : kCounterFields) {
    (f.same_on_every_rank ? maxima : sums).push_back(local.*f.member);
  }
  sums = comm.allreduce_sum(sums);
  maxima = comm.allreduce_max(maxima);
  JobCounters g;
  std::size_t next_sum = 0;
  std::size_t next_max = 0;
  for (const CounterField& f : kCounterFields) {
    g.*f.member = f.same_on_every_rank ? maxima[next_max++] : sums[next_sum++];
  }
  io::RejectCounts local_reasons;
  for (const auto& [reason, n] : local.rejected_by_reason) local_reasons[reason] = n;
  const std::vector<std::uint64_t> reasons = comm.allreduce_sum(reason_vector(local_reasons));
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    if (reasons[i] == 0) continue;
    g.rejected_by_reason[i < kKnownReasons.size() ? std::string(kKnownReasons[i]) : "other"] =
        reasons[i];
  }
  return g;
}

JobSummary reduce_metrics(const comm::Communicator& comm, const JobCounters& base,
                          const InputFeed& feed, const core::TwoTierSet& set,
                          const comm::RouterStats& router, const PhaseSeconds& phases,
                          const PhaseSeconds& phases_system, std::uint64_t rounds,
                          double wall_seconds) {
  JobSummary s;
  s.ranks = comm.size();
  s.counters = base;
  s.counters += reduce_counters(comm, local_counters(feed, set, router, rounds));
  s.tier2_keys = comm.allreduce_sum(set.exact().size());
  s.segment_rounds = comm.allreduce_max(rounds);
  s.read_bytes_by_rank.assign(comm.usize(), 0);
  s.read_bytes_by_rank[comm.urank()] = feed.counters().read_bytes;
  s.read_bytes_by_rank = comm.allreduce_sum(s.read_bytes_by_rank);
  s.max_rss_bytes = comm.allreduce_max(peak_rss_bytes());
  s.mpi_pml_default = comm::applied_pml_default();  // every rank's: one node, one decision
  s.wall_seconds = comm.allreduce_max(wall_seconds);
  s.phase_seconds_max = max_over_ranks(comm, phases);
  s.phase_system_seconds_max = max_over_ranks(comm, phases_system);
  s.phase_seconds_by_rank = gather_phases(comm, phases);

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

std::vector<LayerSummary> saved_layers(const io::CheckpointSummary& s) {
  std::vector<LayerSummary> layers;
  for (const io::CheckpointLayerInfo& info : s.layers) {
    LayerSummary l;
    l.capacity = info.geometry.capacity;
    l.fpr_target = info.geometry.fpr_target;
    l.k = info.geometry.k;
    l.bits_per_key = info.geometry.bits_per_key;
    l.bits = info.geometry.blocks_per_slice * 512 * s.header.params.num_slices;
    l.inserted = info.inserted;
    const double bits = static_cast<double>(l.bits);
    const double n = static_cast<double>(l.inserted);
    // k is unsigned: negate it as a double (-k would wrap to ~2^32).
    l.fill_ratio = 1.0 - std::exp(-static_cast<double>(l.k) * n / bits);
    l.fpr_estimate = n > 0 ? core::blocked_fpr(bits / n, l.k) : 0.0;
    l.cardinality_estimate = n;
    layers.push_back(l);
  }
  return layers;
}

JobSummary summary_of_finished_run(const io::CheckpointSummary& s, const RunManifest& m) {
  JobSummary j;
  j.finished_by_earlier_attempt = true;
  j.ranks = static_cast<int>(s.written_by_ranks);
  j.counters = m.counters;
  for (const InputProgress& p : m.inputs) {
    j.input_files += 1;
    j.input_bytes += p.file.size;
  }
  j.tier2_keys = s.tier2_keys;
  j.fpr_target = s.header.params.fpr_target;
  j.layers = saved_layers(s);
  for (const LayerSummary& l : j.layers) {
    j.filter_bits += l.bits;
    j.fpr_estimate += l.fpr_estimate;
    j.cardinality_estimate += l.cardinality_estimate;
  }
  j.skipped_inputs = skipped_in_manifest(m);
  j.mpi_pml_default = comm::applied_pml_default();  // this start's, like every start's
  return j;
}

namespace {

// The document's counters, in its order: record counts, then (after the
// reasons) the filter's decisions, then the exchange and the output.
constexpr JsonField<JobCounters> kRecordFields[] = {
    {"records", &JobCounters::records},       {"kept", &JobCounters::kept},
    {"duplicates", &JobCounters::duplicates}, {"batch_duplicates", &JobCounters::batch_duplicates},
    {"dropped", &JobCounters::dropped},       {"rejected", &JobCounters::rejected},
};
constexpr JsonField<JobCounters> kDecisionFields[] = {
    {"decided", &JobCounters::decided},
    {"tier1_absent", &JobCounters::tier1_absent},
    {"tier1_maybe", &JobCounters::tier1_maybe},
    {"tier2_lookups", &JobCounters::tier2_lookups},
    {"false_positives", &JobCounters::false_positives},
};
constexpr JsonField<JobCounters> kExchangeFields[] = {
    {"output_bytes", &JobCounters::output_bytes},
    {"bytes_exchanged", &JobCounters::bytes_exchanged},
    {"payload_bytes", &JobCounters::payload_bytes},
    {"rounds", &JobCounters::rounds},
    {"subrounds", &JobCounters::subrounds},
    {"retracted", &JobCounters::retracted},
};
// --unit paragraph (zeros under --unit record). "duplicates", "decided"
// and tier2_keys then count paragraph keys; "dropped" = records_dropped.
constexpr JsonField<JobCounters> kParagraphFields[] = {
    {"paragraphs", &JobCounters::paragraphs},
    {"paragraphs_keyed", &JobCounters::paragraphs_keyed},
    {"paragraphs_removed", &JobCounters::paragraphs_removed},
    {"records_changed", &JobCounters::records_changed},
    {"records_dropped", &JobCounters::records_dropped},
    {"bytes_removed", &JobCounters::paragraph_bytes_removed},
};
// --unit minhash (zeros under the other units). "duplicates", "decided"
// and tier2_keys then count band keys; "dropped" = near_duplicates.
constexpr JsonField<JobCounters> kMinHashFields[] = {
    {"records", &JobCounters::minhash_records},
    {"empty_texts", &JobCounters::minhash_empty_texts},
    {"near_duplicates", &JobCounters::near_duplicates},
    {"band_keys", &JobCounters::band_keys},
    {"band_keys_inserted", &JobCounters::band_keys_new},
    {"candidates", &JobCounters::minhash_candidates},
    {"confirmed_hits", &JobCounters::confirmed_hits},
    {"unconfirmed_hits", &JobCounters::unconfirmed_hits},
};
constexpr JsonField<CheckpointRecord> kCheckpointFields[] = {
    {"generation", &CheckpointRecord::generation},
    {"seconds", &CheckpointRecord::seconds},
    {"bytes_written", &CheckpointRecord::bytes_written},
    {"compaction_bytes_written", &CheckpointRecord::compaction_bytes},
    {"tier2_keys", &CheckpointRecord::tier2_keys},
    {"run_keys", &CheckpointRecord::run_keys},
    {"runs", &CheckpointRecord::runs},
    {"merged_runs", &CheckpointRecord::merged_runs},
    {"outputs_seconds", &CheckpointRecord::outputs_seconds},
    {"merge_seconds", &CheckpointRecord::merge_seconds},
    {"io_seconds", &CheckpointRecord::io_seconds},
    {"commit_seconds", &CheckpointRecord::commit_seconds},
    {"rebase_seconds", &CheckpointRecord::rebase_seconds},
};
constexpr JsonField<LayerSummary> kLayerFields[] = {
    {"capacity", &LayerSummary::capacity},
    {"fpr_target", &LayerSummary::fpr_target},
    {"k", &LayerSummary::k},
    {"bits_per_key", &LayerSummary::bits_per_key},
    {"bits", &LayerSummary::bits},
    {"inserted", &LayerSummary::inserted},
    {"fill_ratio", &LayerSummary::fill_ratio},
    {"fpr_estimate", &LayerSummary::fpr_estimate},
    {"cardinality_estimate", &LayerSummary::cardinality_estimate},
};

void write_counters(JsonWriter& j, const JobSummary& s) {
  const JobCounters& c = s.counters;
  write_fields(j, c, kRecordFields);
  j.begin_object("rejected_by_reason");
  for (const auto& [reason, n] : c.rejected_by_reason) j.value(reason, n);
  j.end_object();
  write_fields(j, c, kDecisionFields);
  j.value("false_positive_rate",
          c.kept ? static_cast<double>(c.false_positives) / static_cast<double>(c.kept) : 0.0);
  j.value("tier2_keys", s.tier2_keys);
  write_fields(j, c, kExchangeFields);
  j.begin_object("paragraph_dedup");
  write_fields(j, c, kParagraphFields);
  j.end_object();
  j.begin_object("minhash_dedup");
  write_fields(j, c, kMinHashFields);
  j.end_object();
}

// Broken inputs: the part from `record` (1-based) and decompressed byte
// `offset` on was skipped for `reason`.
void write_skipped_inputs(JsonWriter& j, const std::vector<SkippedInput>& skipped) {
  j.begin_array("skipped_inputs");
  for (const SkippedInput& k : skipped) {
    j.begin_object();
    j.value("file", k.file);
    j.value("record", k.at.records + 1);
    j.value("offset", k.at.decompressed_offset);
    j.value("records_read", k.at.records);
    j.value("reason", k.reason);
    j.end_object();
  }
  j.end_array();
}

void write_segment(JsonWriter& j, const JobSummary& s) {
  j.value("input_layout", s.input_layout);
  j.value("input_blocks", s.input_blocks);
  j.value("rounds_without_order_table", s.rounds_without_order_table);
  j.value("join_seconds", s.join_seconds);
  j.value("end_pass_seconds", s.end_pass_seconds);
  j.value("end_pass_outputs_by_map", s.end_pass_outputs_by_map);
  j.value("end_pass_compressed_outputs", s.end_pass_compressed_outputs);
  j.value("end_pass_offset_map_bytes", s.end_pass_offset_map_bytes);
  j.value("mpi_pml_default", s.mpi_pml_default);
  j.value("finished_by_earlier_attempt", s.finished_by_earlier_attempt);
  j.value("segment_rounds", s.segment_rounds);
  j.begin_array("read_bytes_by_rank");
  for (const std::uint64_t b : s.read_bytes_by_rank) j.value({}, b);
  j.end_array();
}

void write_checkpoints(JsonWriter& j, const JobSummary& s) {
  j.value("checkpoints", s.checkpoints);
  j.value("checkpoint_seconds_total", s.checkpoint.seconds_total);
  j.value("checkpoint_bytes_written", s.checkpoint.bytes_written);
  j.value("compaction_bytes_written", s.checkpoint.compaction_bytes);
  j.begin_array("checkpoint_history");
  for (const CheckpointRecord& c : s.checkpoint.history) {
    j.begin_object();
    write_fields(j, c, kCheckpointFields);
    j.end_object();
  }
  j.end_array();
}

void write_all_phases(JsonWriter& j, const JobSummary& s) {
  write_phases(j, "phase_seconds", s.phase_seconds_max);
  write_phases(j, "phase_system_seconds", s.phase_system_seconds_max);
  j.begin_object("phase_seconds_by_rank");  // one array per phase, index = rank
  for (const auto& [name, field] :
       {std::pair{"read", &PhaseSeconds::read}, std::pair{"route", &PhaseSeconds::route},
        std::pair{"decide", &PhaseSeconds::decide}, std::pair{"write", &PhaseSeconds::write}}) {
    j.begin_array(name);
    for (const PhaseSeconds& p : s.phase_seconds_by_rank) j.value({}, p.*field);
    j.end_array();
  }
  j.end_object();
}

void write_filter(JsonWriter& j, const JobSummary& s) {
  j.begin_object("filter");
  j.value("fpr_target", s.fpr_target);
  j.value("layers", static_cast<std::uint64_t>(s.layers.size()));
  j.value("bits", s.filter_bits);
  j.value("fpr_estimate", s.fpr_estimate);
  j.value("cardinality_estimate", s.cardinality_estimate);
  j.begin_array("layer");
  for (const LayerSummary& l : s.layers) {
    j.begin_object();
    write_fields(j, l, kLayerFields);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

std::string metrics_json(const JobSummary& s) {
  JsonWriter j;
  j.begin_object();
  j.value("tool_version", tool_version());
  j.value("ranks", static_cast<std::uint64_t>(s.ranks));
  j.value("input_files", s.input_files);
  j.value("input_bytes", s.input_bytes);
  write_counters(j, s);
  write_skipped_inputs(j, s.skipped_inputs);
  write_segment(j, s);
  write_checkpoints(j, s);
  write_all_phases(j, s);
  j.value("wall_seconds", s.wall_seconds);
  j.value("max_rss_bytes", s.max_rss_bytes);
  j.value("max_rss_anon_bytes", s.max_rss_anon_bytes);
  write_filter(j, s);
  j.end_object();
  return j.str();
}

namespace {

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The first summary line's counts of records. Under --unit paragraph the
// filter decides paragraphs, not records: records are kept (whole or cut)
// or dropped over --drop-if-removed-fraction, and the duplicate paragraphs
// are counted on the paragraphs line, with their own percentage.
std::string record_counts(const JobCounters& c) {
  char buf[256];
  if (c.paragraphs != 0) {
    std::snprintf(buf, sizeof buf,
                  "%llu records, %llu kept (%llu of them cut), %llu dropped (%.2f%%), "
                  "%llu rejected",
                  static_cast<unsigned long long>(c.records),
                  static_cast<unsigned long long>(c.kept),
                  static_cast<unsigned long long>(c.records_changed),
                  static_cast<unsigned long long>(c.dropped), percent(c.dropped, c.records),
                  static_cast<unsigned long long>(c.rejected));
  } else if (c.minhash_records != 0) {  // duplicates counts band keys there
    std::snprintf(
        buf, sizeof buf, "%llu records, %llu kept, %llu near-duplicates (%.2f%%), %llu rejected",
        static_cast<unsigned long long>(c.records), static_cast<unsigned long long>(c.kept),
        static_cast<unsigned long long>(c.near_duplicates), percent(c.dropped, c.records),
        static_cast<unsigned long long>(c.rejected));
  } else {
    std::snprintf(
        buf, sizeof buf, "%llu records, %llu kept, %llu duplicates (%.2f%%), %llu rejected",
        static_cast<unsigned long long>(c.records), static_cast<unsigned long long>(c.kept),
        static_cast<unsigned long long>(c.duplicates), percent(c.dropped, c.records),
        static_cast<unsigned long long>(c.rejected));
  }
  return buf;
}

std::string paragraph_counts(const JobCounters& c) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "  paragraphs: %llu split, %llu keyed, %llu duplicates (%.2f%% of keyed), %llu "
                "removed (%llu bytes) from %llu changed records; %llu records dropped over the "
                "removed fraction\n",
                static_cast<unsigned long long>(c.paragraphs),
                static_cast<unsigned long long>(c.paragraphs_keyed),
                static_cast<unsigned long long>(c.duplicates),
                percent(c.duplicates, c.paragraphs_keyed),
                static_cast<unsigned long long>(c.paragraphs_removed),
                static_cast<unsigned long long>(c.paragraph_bytes_removed),
                static_cast<unsigned long long>(c.records_changed),
                static_cast<unsigned long long>(c.records_dropped));
  return buf;
}

std::string minhash_counts(const JobCounters& c) {
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "  minhash: %llu records sketched (%llu empty texts), %llu near-duplicates "
                "removed (%.2f%%) of %llu candidates; %llu band keys, %llu inserted, %llu hits "
                "confirmed, %llu unconfirmed\n",
                static_cast<unsigned long long>(c.minhash_records),
                static_cast<unsigned long long>(c.minhash_empty_texts),
                static_cast<unsigned long long>(c.near_duplicates),
                percent(c.near_duplicates, c.minhash_records),
                static_cast<unsigned long long>(c.minhash_candidates),
                static_cast<unsigned long long>(c.band_keys),
                static_cast<unsigned long long>(c.band_keys_new),
                static_cast<unsigned long long>(c.confirmed_hits),
                static_cast<unsigned long long>(c.unconfirmed_hits));
  return buf;
}

}  // namespace

std::string summary_text(const JobSummary& s) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "bloomshard dedup: %s; %llu ranks, %.2f s, %.0f records/s\n"
                "  tier 1: %llu maybe of %llu; tier 2: %llu lookups, %llu false positives; "
                "filter %zu layer(s), %.1f MiB, est. FPR %.3g; max RSS %.1f MiB\n",
                record_counts(s.counters).c_str(), static_cast<unsigned long long>(s.ranks),
                s.wall_seconds,
                s.wall_seconds > 0 ? static_cast<double>(s.counters.records) / s.wall_seconds
                                   : 0.0,  // a resumed run counts earlier records too
                static_cast<unsigned long long>(s.counters.tier1_maybe),
                static_cast<unsigned long long>(s.counters.decided),
                static_cast<unsigned long long>(s.counters.tier2_lookups),
                static_cast<unsigned long long>(s.counters.false_positives), s.layers.size(),
                static_cast<double>(s.filter_bits) / 8.0 / 1048576.0, s.fpr_estimate,
                static_cast<double>(s.max_rss_bytes) / 1048576.0);
  std::string text = buf;
  if (s.input_layout == "lockstep") {
    text += "  inputs read in lockstep: " + std::to_string(s.input_blocks) + " block(s)\n";
  }
  if (s.counters.paragraphs != 0) text += paragraph_counts(s.counters);
  if (s.counters.minhash_records != 0) text += minhash_counts(s.counters);
  if (!s.skipped_inputs.empty()) {
    text += "  skipped " + std::to_string(s.skipped_inputs.size()) +
            " broken input(s) from the damage on:";
    for (const SkippedInput& k : s.skipped_inputs) text += "\n    " + describe_skip(k);
    text += '\n';
  }
  return text;
}

}  // namespace bloomshard::app
