#include "app/state/query_job.hpp"

#include <chrono>
#include <iostream>
#include <sstream>

#include "app/cli/exit_codes.hpp"
#include "app/cli/mpi_command.hpp"
#include "app/feed/input_feed.hpp"
#include "app/feed/input_manifest.hpp"
#include "app/guard/output_guard.hpp"
#include "app/guard/path_preflight.hpp"
#include "app/options/query_options.hpp"
#include "app/report/job_abort.hpp"
#include "app/report/json_writer.hpp"
#include "app/report/resource_usage.hpp"
#include "app/report/stderr_line.hpp"
#include "app/round/phase_timer.hpp"
#include "app/round/read_step.hpp"
#include "app/round/round_agreement.hpp"
#include "app/round/round_batch.hpp"
#include "app/run/checkpointer.hpp"
#include "app/run/json_fields.hpp"
#include "app/run/metrics_file.hpp"
#include "app/run/run_state.hpp"
#include "app/split/rank_tasks.hpp"
#include "app/state/query_confirmation.hpp"
#include "app/state/state_key_scheme.hpp"
#include "bloomshard/core/membership_query.hpp"
#include "comm/environment.hpp"
#include "comm/router.hpp"
#include "core/bloom/sizing_plan.hpp"
#include "core/order/first_occurrence.hpp"
#include "io/checkpoint/checkpoint_forms.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A query's record figures, summed over the ranks with the key counters in
// one allreduce: each struct walked through its field table, no position
// to keep in step by hand.
struct QueryRecordSums {
  std::uint64_t records = 0;
  std::uint64_t rejected = 0;
  std::uint64_t hits = 0;
  std::uint64_t emitted = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t candidates = 0;        // records with a band hit, confirmed or not
  std::uint64_t unconfirmed_hits = 0;  // band hits below T, at the owners
};
inline constexpr core::CounterOf<QueryRecordSums> kQueryRecordFields[] = {
    {"records", &QueryRecordSums::records},
    {"rejected", &QueryRecordSums::rejected},
    {"hits", &QueryRecordSums::hits},
    {"candidates", &QueryRecordSums::candidates},
    {"unconfirmed_hits", &QueryRecordSums::unconfirmed_hits},
    {"emitted", &QueryRecordSums::emitted},
    {"output_bytes", &QueryRecordSums::output_bytes},
};
static_assert(std::size(kQueryRecordFields) * sizeof(std::uint64_t) == sizeof(QueryRecordSums),
              "a QueryRecordSums field is missing from kQueryRecordFields");

// Collective: `mine` and `keys` summed over the ranks; the key sums go to
// `key_sums`.
QueryRecordSums sum_over_ranks(const comm::Communicator& world, QueryRecordSums mine,
                               const core::QueryCounters& keys, core::QueryCounters& key_sums) {
  std::vector<std::uint64_t> wire;
  wire.reserve(std::size(kQueryRecordFields) + std::size(core::kQueryCounterFields));
  for (const auto& f : kQueryRecordFields) wire.push_back(mine.*f.member);
  for (const auto& f : core::kQueryCounterFields) wire.push_back(keys.*f.member);
  wire = world.allreduce_sum(wire);
  std::size_t i = 0;
  for (const auto& f : kQueryRecordFields) mine.*f.member = wire[i++];
  for (const auto& f : core::kQueryCounterFields) key_sums.*f.member = wire[i++];
  return mine;
}

// What rank 0 found: the generations to try, the slice count, the inputs.
struct QuerySetup {
  std::vector<std::uint64_t> candidates;
  std::uint32_t num_slices = 0;
  std::vector<io::InputFile> inputs;
};

// Rank 0: reads the newest readable header, checks the given scheme flags
// against it and prepares the output dir. First byte: exit code (0 = go),
// then "slices g1 g2 ...\n" and the input list, or the error text. Nothing
// in the state dir is created or written.
std::string query_setup_on_rank0(const QueryConfig& q) {
  const auto fail = [](int code, const std::string& why) {
    return std::string(1, static_cast<char>(code)) + why;
  };
  try {
    // Every path the query writes, before it reads anything (path_preflight.hpp).
    std::vector<WritePath> written{
        {"--output", q.feed.output_dir, WritePath::Kind::kDirectory},
        {"--output", fs::path(q.feed.output_dir) / kRejectsDirName, WritePath::Kind::kDirectory}};
    if (!q.feed.metrics_path.empty()) {
      written.push_back({"--metrics", q.feed.metrics_path, WritePath::Kind::kFile});
    }
    if (std::string why = check_write_paths(written); !why.empty()) return fail(kExitUsage, why);
    const fs::path state(q.state_dir);
    if (!fs::is_directory(state)) return fail(kExitUsage, "no state dir '" + q.state_dir + "'");
    const std::vector<std::uint64_t> candidates = io::resume_candidates(state);
    std::optional<io::CheckpointSummary> summary;
    std::string unreadable;
    for (const std::uint64_t g : candidates) {
      try {
        summary = io::read_checkpoint_summary(io::generation_path(state, g));
        break;
      } catch (const std::exception& e) {
        unreadable += std::string("\n  ") + e.what();
      }
    }
    if (!summary) {
      return fail(kExitFailure,
                  "no checkpoint in '" + q.state_dir + "' can be read" +
                      (candidates.empty() ? std::string(" (there is none)") : ":" + unreadable));
    }
    const StateScheme scheme = state_scheme_of(summary->header);
    if (std::string conflict = key_scheme_conflict(scheme, q.scheme_flags); !conflict.empty()) {
      return fail(kExitUsage, conflict + " (a query uses the state's key scheme)");
    }
    if (scheme.key.unit == core::KeyUnit::kParagraph) {
      return fail(kExitUsage,
                  "the state holds paragraph keys (--unit paragraph); query answers one key "
                  "per record and cannot use it yet");
    }
    std::vector<fs::path> args(q.feed.inputs.begin(), q.feed.inputs.end());
    const std::vector<io::InputFile> files = io::discover_inputs(args);
    if (files.empty()) return fail(kExitUsage, "no input files found");
    const OutputCheck check = prepare_output_dir(q.feed.output_dir, args, files, q.feed.overwrite);
    if (!check.error.empty()) return fail(check.exit_code, check.error);
    if (!summary->header.finished) {
      std::cerr << "bloomshard query: note: the state holds an unfinished run; the answers are "
                   "those of its generation "
                << summary->header.generation << '\n';
    }
    std::string head = std::to_string(summary->header.params.num_slices);
    for (const std::uint64_t g : candidates) head += ' ' + std::to_string(g);
    return std::string(1, '\0') + head + '\n' + encode_inputs(files);
  } catch (const std::exception& e) {
    return fail(kExitFailure, e.what());
  }
}

QuerySetup decode_query_setup(std::string_view text) {
  QuerySetup s;
  const std::size_t nl = text.find('\n');
  std::istringstream head{std::string(text.substr(1, nl - 1))};
  head >> s.num_slices;
  std::uint64_t g = 0;
  while (head >> g) s.candidates.push_back(g);
  s.inputs = decode_inputs(text.substr(nl + 1));
  return s;
}

// Job-wide figures of a query (sums over ranks).
struct QueryTotals {
  std::uint64_t records = 0;  ///< lines read, rejects included
  std::uint64_t rejected = 0;
  std::uint64_t hits = 0;    ///< records whose key the state holds
  std::uint64_t misses = 0;  ///< records with a key it does not hold
  /// Records with a band hit, confirmed or not (a confirming state; else
  /// the hits).
  std::uint64_t candidates = 0;
  std::uint64_t unconfirmed_hits = 0;  ///< band hits below the state's T
  double confirm_jaccard = 0;          ///< the state's T (0: it does not confirm)
  std::uint64_t emitted = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t input_bytes = 0;
  std::uint64_t skipped_inputs = 0;
  core::QueryCounters keys;  ///< per key decided at an owner (batch repeats combined)
  std::uint64_t rounds = 0;
  std::uint64_t generation = 0;
  double seconds = 0;
  double load_seconds = 0;
  std::uint64_t max_rss_anon_bytes = 0;
};

// The document's counts and the per-key counters, in its order.
constexpr JsonField<QueryTotals> kRecordFields[] = {
    {"records", &QueryTotals::records},
    {"rejected", &QueryTotals::rejected},
    {"hits", &QueryTotals::hits},
    {"misses", &QueryTotals::misses},
    {"candidates", &QueryTotals::candidates},
    {"unconfirmed_hits", &QueryTotals::unconfirmed_hits},
    {"emitted", &QueryTotals::emitted},
    {"output_bytes", &QueryTotals::output_bytes},
    {"input_bytes", &QueryTotals::input_bytes},
    {"skipped_inputs", &QueryTotals::skipped_inputs},
};
constexpr JsonField<core::QueryCounters> kKeyFields[] = {
    {"keys_queried", &core::QueryCounters::queried},
    {"tier1_absent", &core::QueryCounters::tier1_absent},
    {"tier1_maybe", &core::QueryCounters::tier1_maybe},
    {"tier2_lookups", &core::QueryCounters::tier2_lookups},
    {"key_hits", &core::QueryCounters::hits},
    {"false_positives", &core::QueryCounters::false_positives},
};
constexpr JsonField<QueryTotals> kTimeFields[] = {
    {"rounds", &QueryTotals::rounds},
    {"seconds", &QueryTotals::seconds},
    {"load_seconds", &QueryTotals::load_seconds},
};

std::string totals_json(const QueryTotals& t, const QueryConfig& q) {
  JsonWriter j;
  j.begin_object();
  j.value("command", "query");
  j.value("state", q.state_dir);
  j.value("generation", t.generation);
  j.value("emit", q.emit == QueryEmit::kHits ? "hits" : "misses");
  j.value("confirm_jaccard", t.confirm_jaccard);
  write_fields(j, t, kRecordFields);
  write_fields(j, t.keys, kKeyFields);
  write_fields(j, t, kTimeFields);
  j.value("input_mb_per_second",
          t.seconds > 0 ? static_cast<double>(t.input_bytes) / 1e6 / t.seconds : 0.0);
  j.value("max_rss_anon_bytes", t.max_rss_anon_bytes);
  j.end_object();
  return j.str() + '\n';
}

class QueryJob {
 public:
  QueryJob(const comm::Communicator& world, QueryConfig config)
      : world_(world), q_(std::move(config)) {}

  int run() {
    const Clock::time_point start = Clock::now();
    if (q_.feed.batch_bytes == 0) q_.feed.batch_bytes = core::default_batch_bytes(world_.usize());
    const std::string setup = world_.broadcast(world_.rank() == 0 ? query_setup_on_rank0(q_) : "");
    if (setup[0] != '\0') {
      if (world_.rank() == 0) std::cerr << "bloomshard query: " << setup.substr(1) << '\n';
      return setup[0];
    }
    const QuerySetup s = decode_query_setup(setup);
    if (s.num_slices < world_.usize()) {
      if (world_.rank() == 0) {
        std::cerr << "bloomshard query: the state has " << s.num_slices << " slices for "
                  << world_.size() << " ranks; every rank must own a slice (use fewer ranks)\n";
      }
      return kExitUsage;
    }
    const core::SliceRange owned =
        core::slices_of_rank(world_.urank(), world_.usize(), s.num_slices);
    std::optional<io::LoadedCheckpoint> loaded = load(s.candidates, owned);
    if (!loaded) return kExitFailure;
    QueryTotals totals;
    totals.load_seconds = world_.allreduce_max(seconds_since(start));
    totals.generation = loaded->summary.header.generation;
    apply_state_scheme(state_scheme_of(loaded->summary.header), q_.feed);
    if (const std::optional<io::FormScheme> forms = io::form_scheme_of(loaded->summary.header)) {
      // The feed routes wire keys (the key scheme says confirm-jaccard).
      totals.confirm_jaccard = forms->threshold;
      confirmation_.emplace(*loaded->forms,
                            QueryFormScheme{forms->threshold, forms->values, forms->bits});
    }

    RunManifest m;
    for (const io::InputFile& f : s.inputs) m.inputs.push_back({f, {}, false, 0, {}, {}, {}});
    std::vector<FileTask> mine = tasks_of_rank(m, world_.rank(), world_.size(), totals.input_bytes);
    InputFeed feed(
        q_.feed, std::move(mine),
        fs::path(q_.feed.output_dir) / kRejectsDirName / reject_file_name(world_.rank(), 0), false);
    comm::KeyRouter router(world_, s.num_slices, {}, q_.feed.exchange);
    const int failed = answer_all(feed, router, *loaded->set, totals);
    feed.finish();
    if (failed != kExitOk) return failed;
    return report(feed, totals, seconds_since(start));
  }

 private:
  // Collective: the newest generation that loads and verifies; older ones
  // as fallback (each failure one line on rank 0).
  std::optional<io::LoadedCheckpoint> load(const std::vector<std::uint64_t>& candidates,
                                           core::SliceRange owned) {
    for (const std::uint64_t g : candidates) {
      const fs::path path = io::generation_path(q_.state_dir, g);
      try {
        // A confirming state's forms of the owned slices come with it.
        return io::load_checkpoint(world_, path, owned, true, true);
      } catch (const std::exception& e) {
        if (world_.rank() == 0) {
          std::cerr << "bloomshard query: warning: checkpoint generation " << g
                    << " cannot be used: " << one_line(e.what()) << "; trying an older one\n";
        }
      }
    }
    if (world_.rank() == 0) {
      std::cerr << "bloomshard query: no checkpoint generation in '" << q_.state_dir
                << "' verifies (bloomshard verify --state DIR tells why)\n";
    }
    return std::nullopt;
  }

  // Collective: the rounds. Returns kExitOk, or the exit code of an input
  // failure (agreed by every rank).
  int answer_all(InputFeed& feed, comm::KeyRouter& router, const core::TwoTierSet& set,
                 QueryTotals& totals) {
    RoundBatch batch;
    std::vector<core::Verdict> membership;
    std::vector<core::Verdict> emit;
    std::vector<std::uint8_t> hits;
    std::vector<std::uint32_t> first_of;
    core::FirstOccurrenceFinder firsts;
    std::string input_error;
    for (;;) {
      read_round(feed, batch, input_error);
      const std::span<const core::KeyRef> keys = batch.keys();
      membership.resize(keys.size());
      // Owners answer "in the state" as kDuplicate, "not in it" as kNew.
      router.route(keys,
                   [&](std::span<const core::KeyRef> owned_keys, std::span<core::Verdict> out) {
                     if (confirmation_) {
                       confirmation_->answer(set, owned_keys, out, key_counters_);
                       return;
                     }
                     hits.resize(owned_keys.size());
                     core::query_batch(set, owned_keys, hits, key_counters_);
                     for (std::size_t i = 0; i < out.size(); ++i) {
                       out[i] = hits[i] != 0 ? core::Verdict::kDuplicate : core::Verdict::kNew;
                     }
                   },
                   membership, {.budget = q_.feed.max_exchange_bytes});
      // route() marks later copies of a key in the batch as duplicates
      // (its combining); a query gives them their first copy's answer.
      firsts.find(keys, first_of);
      emit.resize(keys.size());
      // A record is in the state when one of its keys is (one key per
      // record, or under --unit minhash its band keys: a near-duplicate of
      // a record the state saw; of a confirming state, a band hit whose
      // estimate reached T). Every key of it gets the record's answer.
      for (std::size_t r = 0; r < batch.size(); ++r) {
        const std::size_t first = batch.first_key(r);
        const std::size_t end = first + batch.key_count(r);
        bool in_state = false;
        bool candidate = false;
        for (std::size_t i = first; i < end && !in_state; ++i) {
          const core::Verdict v = membership[first_of[i]];
          in_state = v == core::Verdict::kDuplicate;
          candidate = candidate || in_state || v == core::Verdict::kUnconfirmedHit;
        }
        record_hits_ += in_state ? 1 : 0;
        record_candidates_ += candidate ? 1 : 0;
        const bool wanted = in_state == (q_.emit == QueryEmit::kHits);
        // InputFeed writes the records it calls kept.
        std::fill(emit.begin() + static_cast<std::ptrdiff_t>(first),
                  emit.begin() + static_cast<std::ptrdiff_t>(end),
                  wanted ? core::Verdict::kNew : core::Verdict::kDuplicate);
      }
      feed.write_kept(batch, emit);
      ++totals.rounds;
      peak_rss_anon_ = std::max(peak_rss_anon_, rss_anon_bytes());
      RoundAgreement mine;
      mine.ranks_reading = feed.exhausted() ? 0U : 1U;
      mine.input_errors = input_error.empty() ? 0U : 1U;
      mine.broken_inputs = feed.skip_pending() ? 1U : 0U;
      const RoundAgreement g = agree(world_, mine);
      if (g.input_errors != 0) {
        if (!input_error.empty()) {
          write_stderr_line("bloomshard query: rank " + std::to_string(world_.rank()) +
                            ": input error: " + input_error);
        }
        world_.barrier();
        return kExitFailure;
      }
      if (g.broken_inputs != 0) {
        skipped_ += g.broken_inputs;
        const bool skip = skipped_ <= q_.feed.max_skipped_inputs;
        feed.resolve_held_input(skip);
        if (!skip) {
          if (world_.rank() == 0) {
            std::cerr << "bloomshard query: more broken inputs than --max-skipped-inputs "
                      << q_.feed.max_skipped_inputs << '\n';
          }
          return kExitTooManyRejects;
        }
        if (world_.rank() == 0) {
          std::cerr << "bloomshard query: warning: " << g.broken_inputs
                    << " input(s) broke and were skipped from the damage on\n";
        }
        continue;
      }
      if (g.finished()) return kExitOk;
    }
  }

  // Collective: sums the figures, prints the summary (rank 0), writes
  // --metrics. Exit 3 over --max-reject-fraction.
  int report(const InputFeed& feed, QueryTotals& t, double seconds) {
    const FeedCounters& c = feed.counters();
    const QueryRecordSums records = sum_over_ranks(
        world_,
        {c.records, c.rejected, record_hits_, c.kept, c.output_bytes, record_candidates_,
         confirmation_ ? confirmation_->counters().unconfirmed : 0},
        key_counters_, t.keys);
    t.records = records.records;
    t.rejected = records.rejected;
    t.hits = records.hits;
    t.misses = t.records - t.rejected - t.hits;
    t.candidates = records.candidates;
    t.unconfirmed_hits = records.unconfirmed_hits;
    t.emitted = records.emitted;
    t.output_bytes = records.output_bytes;
    t.skipped_inputs = skipped_;
    t.seconds = world_.allreduce_max(seconds);
    t.max_rss_anon_bytes = world_.allreduce_max(peak_rss_anon_);
    const double reject_fraction =
        t.records ? static_cast<double>(t.rejected) / static_cast<double>(t.records) : 0.0;
    if (world_.rank() != 0)
      return reject_fraction > q_.feed.max_reject_fraction ? kExitTooManyRejects : kExitOk;
    if (!q_.feed.metrics_path.empty()) {
      try {
        write_metrics_file(q_.feed.metrics_path, totals_json(t, q_));
      } catch (const std::exception&) {
        std::cerr << "bloomshard query: warning: cannot write " << q_.feed.metrics_path << '\n';
      }
    }
    std::printf(
        "bloomshard query: %llu records, %llu hits, %llu misses, %llu rejected; %llu %s written "
        "to %s\n"
        "  keys: %llu queried, %llu tier-1 maybes, %llu tier-2 lookups, %llu false positives\n"
        "  state generation %llu, %.2f s (load %.2f s), %.1f MB/s of input\n",
        static_cast<unsigned long long>(t.records), static_cast<unsigned long long>(t.hits),
        static_cast<unsigned long long>(t.misses), static_cast<unsigned long long>(t.rejected),
        static_cast<unsigned long long>(t.emitted), q_.emit == QueryEmit::kHits ? "hits" : "misses",
        q_.feed.output_dir.c_str(), static_cast<unsigned long long>(t.keys.queried),
        static_cast<unsigned long long>(t.keys.tier1_maybe),
        static_cast<unsigned long long>(t.keys.tier2_lookups),
        static_cast<unsigned long long>(t.keys.false_positives),
        static_cast<unsigned long long>(t.generation), t.seconds, t.load_seconds,
        t.seconds > 0 ? static_cast<double>(t.input_bytes) / 1e6 / t.seconds : 0.0);
    if (confirmation_) {
      std::printf(
          "  confirmation (--confirm-jaccard %g of the state): %llu candidates, %llu band "
          "hits below it\n",
          t.confirm_jaccard, static_cast<unsigned long long>(t.candidates),
          static_cast<unsigned long long>(t.unconfirmed_hits));
    }
    std::fflush(stdout);
    if (reject_fraction > q_.feed.max_reject_fraction) {
      std::cerr << "bloomshard query: " << t.rejected << " of " << t.records
                << " records rejected, more than --max-reject-fraction; see "
                << (fs::path(q_.feed.output_dir) / kRejectsDirName).string() << '\n';
      return kExitTooManyRejects;
    }
    return kExitOk;
  }

  comm::Communicator world_;
  QueryConfig q_;
  core::QueryCounters key_counters_;     // this rank as owner
  std::uint64_t record_hits_ = 0;        // this rank's records found in the state
  std::uint64_t record_candidates_ = 0;  // of its records, those with a band hit
  // A confirming state's owner answer (its forms live in the loaded state).
  std::optional<QueryConfirmation> confirmation_;
  std::uint64_t skipped_ = 0;  // broken inputs skipped, all ranks
  std::uint64_t peak_rss_anon_ = 0;
};

}  // namespace

int run_query(const std::vector<std::string>& args) {
  return run_mpi_command<QueryConfig>(
      {.name = "query",
       .parse = parse_query_options,
       .run = [](const comm::Communicator& world,
                 QueryConfig config) { return QueryJob(world, std::move(config)).run(); }},
      args);
}

}  // namespace bloomshard::app
