#include "app/cli/plan_command.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "app/cli/exit_codes.hpp"
#include "app/feed/input_sample.hpp"
#include "app/options/exact_options.hpp"
#include "app/options/minhash_options.hpp"
#include "app/report/json_writer.hpp"
#include "app/round/key_order.hpp"
#include "app/split/lockstep_layout.hpp"
#include "core/bloom/sizing_plan.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "core/minhash/minhash_jaccard.hpp"
#include "core/minhash/minhash_signature.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;
namespace {

constexpr double kMiB = 1048576.0;

// A --unit minhash plan: the key-level plan of the job as it runs today
// (no confirmation) and the same with confirmation's b-bit signatures in
// tier 2 (--confirm-jaccard is not an option yet: both figures are given).
struct MinHashPlan {
  std::uint64_t records = 0;
  std::uint32_t bands = 0;
  std::uint32_t rows = 0;
  std::uint64_t payload = 0;            // tier-2 bytes per new record
  std::uint64_t payload_confirmed = 0;  // the same at b = kDefaultConfirmBits
  core::SizingPlan plain;
  core::SizingPlan confirmed;
};

MinHashPlan make_minhash_plan(const core::PlanInputs& in, std::uint32_t bands, std::uint32_t rows) {
  MinHashPlan m;
  m.records = in.records;
  m.bands = bands;
  m.rows = rows;
  m.payload = core::minhash_tier2_payload_per_record(bands, rows, 0);
  m.payload_confirmed =
      core::minhash_tier2_payload_per_record(bands, rows, core::kDefaultConfirmBits);
  m.plain = core::make_plan(minhash_key_inputs(in, bands, rows, 0));
  m.confirmed = core::make_plan(minhash_key_inputs(in, bands, rows, core::kDefaultConfirmBits));
  return m;
}

void minhash_json(JsonWriter& j, const MinHashPlan& m) {
  j.begin_object("minhash");
  j.value("records", m.records);
  j.value("bands", static_cast<std::uint64_t>(m.bands));
  j.value("rows", static_cast<std::uint64_t>(m.rows));
  j.value("keys", m.plain.in.records);
  j.value("tier2_payload_per_record", m.payload);
  j.begin_object("with_confirmation");
  j.value("confirm_bits", static_cast<std::uint64_t>(core::kDefaultConfirmBits));
  j.value("tier2_payload_per_record", m.payload_confirmed);
  j.value("tier2_disk_bytes", m.confirmed.tier2_disk_bytes);
  j.value("delta_bytes", m.confirmed.delta_bytes);
  j.value("peak_rss_bytes", m.confirmed.peak_rss_bytes);
  j.value("state_bytes", m.confirmed.state_bytes);
  j.value("annotate_position_bytes_per_key", static_cast<std::uint64_t>(core::kBandPositionBytes));
  j.value("annotate_answer_bytes_per_key", static_cast<std::uint64_t>(core::kBandMatchBytes));
  j.end_object();
  j.end_object();
}

// The plan as one JSON object; under --unit minhash `inputs` and every
// figure are per band key, and a "minhash" object gives the records.
std::string plan_json(const core::SizingPlan& p, const MinHashPlan* minhash) {
  JsonWriter j;
  j.begin_object();
  j.value("unit", minhash ? "minhash" : "record");
  if (minhash) minhash_json(j, *minhash);
  j.begin_object("inputs");
  j.value("records", p.in.records);
  j.value("unique_fraction", p.in.unique_fraction);
  j.value("key_bytes", p.in.key_bytes);
  j.value("record_bytes", p.in.record_bytes);
  j.value("ranks", static_cast<std::uint64_t>(p.in.ranks));
  j.value("fpr", p.in.fpr);
  j.value("capacity", p.in.capacity);
  j.value("slices", static_cast<std::uint64_t>(p.in.slices));
  j.value("batch_bytes", p.in.batch_bytes);
  j.value("checkpoint_every", p.in.checkpoint_every);
  j.value("records_per_second", p.in.records_per_second);
  j.value("disk_bandwidth", p.in.disk_bandwidth);
  j.value("batch_duplicate_fraction", p.in.batch_duplicate_fraction);
  j.value("kept_copy", p.in.input_order ? "first" : "arrival");
  j.value("inputs", p.in.inputs);
  j.end_object();
  j.begin_object("per_rank");
  j.value("bloom_bytes", p.bloom_bytes);
  j.value("tier2_disk_bytes", p.tier2_disk_bytes);
  j.value("delta_bytes", p.delta_bytes);
  j.value("round_buffer_bytes", p.round_buffer_bytes);
  j.value("order_table_bytes", p.order_table_bytes);
  j.value("offset_map_bytes", p.offset_map_bytes);
  j.value("retractions", p.retractions);
  j.value("retraction_bytes", p.retraction_bytes);
  j.value("peak_rss_bytes", p.peak_rss_bytes);
  j.end_object();
  j.begin_object("per_checkpoint");
  j.value("checkpoints", p.checkpoints);
  j.value("bytes", p.checkpoint_bytes);
  j.value("seconds", p.checkpoint_seconds);
  j.end_object();
  j.begin_object("per_round");
  j.value("rounds", p.rounds);
  j.value("keys", p.keys_per_round);
  j.value("exchange_bytes", p.exchange_bytes);
  j.value("messages", p.messages);
  j.end_object();
  j.value("unique_keys", p.unique_keys);
  j.value("duplicates", p.duplicates);
  j.value("layers", static_cast<std::uint64_t>(p.layers));
  j.value("false_positives", p.false_positives);
  j.value("tier2_lookups", p.tier2_lookups);
  j.value("state_bytes", p.state_bytes);
  j.value("seconds", p.seconds);
  j.begin_object("recommended");
  j.value("capacity", p.recommended_capacity);
  j.value("slices", static_cast<std::uint64_t>(p.recommended_slices));
  j.value("batch_bytes", p.recommended_batch_bytes);
  j.end_object();
  j.value("summary", core::plan_summary_line(p));
  j.end_object();
  return j.str() + '\n';
}

// `what` names the unit of p.in.records and of the rate ("records",
// "band keys").
void print_table(const core::SizingPlan& p, const char* what) {
  std::printf("bloomshard plan: %llu %s (%llu distinct keys, %llu duplicates) on %u ranks\n",
              static_cast<unsigned long long>(p.in.records), what,
              static_cast<unsigned long long>(p.unique_keys),
              static_cast<unsigned long long>(p.duplicates), p.in.ranks);
  std::printf("per rank\n");
  std::printf("  Bloom bits          %10.1f MiB (%u layer(s))\n", p.bloom_bytes / kMiB, p.layers);
  std::printf("  tier 2 on disk      %10.1f MiB\n", p.tier2_disk_bytes / kMiB);
  std::printf("  delta in RAM        %10.1f MiB (largest, between checkpoints)\n",
              p.delta_bytes / kMiB);
  std::printf("  round buffers       %10.1f MiB\n", p.round_buffer_bytes / kMiB);
  if (p.in.input_order) {
    std::printf(
        "  order table         %10.1f MiB (--kept-copy first: kept copies of ~%s; the outputs' "
        "offset maps %.1f MiB and ~%s retractions at the end pass %.1f MiB more)\n",
        p.order_table_bytes / kMiB,
        p.in.inputs > 0 ? (std::to_string(std::min<std::uint64_t>(p.in.ranks, p.in.inputs)) +
                           " of " + std::to_string(p.in.inputs) + " inputs")
                              .c_str()
                        : "every input, --inputs not given",
        p.offset_map_bytes / kMiB, core::count_label(p.retractions).c_str(),
        p.retraction_bytes / kMiB);
  }
  std::printf("  peak RSS            %10.1f MiB\n", p.peak_rss_bytes / kMiB);
  std::printf("per checkpoint (whole job)\n");
  std::printf("  checkpoints         %10llu\n", static_cast<unsigned long long>(p.checkpoints));
  std::printf("  bytes               %10.1f MiB (largest)\n", p.checkpoint_bytes / kMiB);
  std::printf("  seconds             %10.2f at %.2f GB/s\n", p.checkpoint_seconds,
              p.in.disk_bandwidth / 1e9);
  std::printf("per round (per rank)\n");
  std::printf("  rounds              %10llu\n", static_cast<unsigned long long>(p.rounds));
  std::printf("  keys                %10.0f\n", p.keys_per_round);
  std::printf("  exchange bytes      %10.1f KiB (keys out, verdicts back)\n",
              p.exchange_bytes / 1024.0);
  std::printf("  messages            %10llu\n", static_cast<unsigned long long>(p.messages));
  std::printf("whole job\n");
  std::printf("  state on disk       %10.1f MiB\n", p.state_bytes / kMiB);
  std::printf("  tier-2 lookups      %10.0f (%llu duplicates + %.0f false positives)\n",
              p.tier2_lookups, static_cast<unsigned long long>(p.duplicates), p.false_positives);
  std::printf("  seconds             %10.1f at %.0f %s/s per rank\n", p.seconds,
              p.in.records_per_second, what);
  std::printf("recommended\n  --capacity %llu --slices %u --batch-bytes %llu\n",
              static_cast<unsigned long long>(p.recommended_capacity), p.recommended_slices,
              static_cast<unsigned long long>(p.recommended_batch_bytes));
}

// The table of a --unit minhash plan: the records as band keys, then
// what confirmation would add.
void print_minhash_table(const MinHashPlan& m) {
  std::printf("--unit minhash %ux%u: %llu records x %u band keys of 16 B\n", m.bands, m.rows,
              static_cast<unsigned long long>(m.records), m.bands);
  print_table(m.plain, "band keys");
  std::printf("tier-2 payload per new record\n");
  std::printf("  band keys           %10llu B\n", static_cast<unsigned long long>(m.payload));
  std::printf(
      "  with confirmation   %10llu B (b = %u bits per value beside each key; "
      "--confirm-jaccard keeps them in memory for the run and in a state)\n",
      static_cast<unsigned long long>(m.payload_confirmed), core::kDefaultConfirmBits);
  std::printf(
      "  annotate mode       %10llu B more in memory (the first record's position, %zu B a "
      "key) and %zu B a key on the return path\n",
      static_cast<unsigned long long>(m.bands * core::kBandPositionBytes), core::kBandPositionBytes,
      core::kBandMatchBytes);
  std::printf("with confirmation (per rank unless said)\n");
  std::printf("  tier 2 on disk      %10.1f MiB\n", m.confirmed.tier2_disk_bytes / kMiB);
  std::printf("  delta in RAM        %10.1f MiB\n", m.confirmed.delta_bytes / kMiB);
  std::printf("  peak RSS            %10.1f MiB\n", m.confirmed.peak_rss_bytes / kMiB);
  std::printf("  state on disk       %10.1f MiB (whole job)\n", m.confirmed.state_bytes / kMiB);
}

// The plan inputs of a job from its input sample (records, not keys).
core::PlanInputs sampled_plan_inputs(const DedupConfig& c, const InputSample& sample,
                                     std::uint64_t capacity, std::uint32_t ranks,
                                     std::uint32_t slices) {
  core::PlanInputs in;
  in.records = sample.estimated_records;
  in.unique_fraction = std::max(1.0 - sample.duplicate_fraction(),
                                1.0 / static_cast<double>(sample.estimated_records));
  in.key_bytes = std::max(1.0, sample.key_bytes);
  in.record_bytes = std::max(in.key_bytes, sample.text_bytes / static_cast<double>(sample.records));
  in.ranks = ranks;
  in.fpr = c.fpr;
  in.capacity = capacity;
  in.slices = slices;
  in.batch_bytes = c.batch_bytes;
  in.checkpoint_every = c.checkpoint_every;
  in.max_delta_bytes = c.max_delta_bytes;
  in.checkpoints = !c.state_dir.empty();
  in.input_order = keeps_input_order(c);
  in.inputs = sample.inputs;
  in.lockstep = lockstep_layout_applies(c, sample.all_uncompressed);
  return in;
}

// The memory part of the start-up line for key-level inputs `in`, then
// `table` (the plan command for the full table). Throws what make_plan
// throws.
std::string plan_figures(const core::PlanInputs& in, const char* keys_word,
                         const std::string& table) {
  const core::SizingPlan p = core::make_plan(in);
  char plan[512];
  // The sample sees only the duplicates inside it: distinct keys, and so
  // memory, are upper bounds; tier-2 lookups (the duplicates that reach
  // tier 2) are not estimated at all.
  std::snprintf(
      plan, sizeof plan, ", <= ~%s %s -> peak RSS ~%s/rank (Bloom %s, delta %s, rounds %s)",
      core::count_label(static_cast<double>(p.unique_keys)).c_str(), keys_word,
      core::mib_label(p.peak_rss_bytes).c_str(), core::mib_label(p.bloom_bytes).c_str(),
      core::mib_label(p.delta_bytes).c_str(), core::mib_label(p.round_buffer_bytes).c_str());
  std::string line = plan;
  if (in.input_order) {  // --kept-copy first: each owner's order table, inside the parenthesis
    line.insert(line.size() - 1, ", order table " + core::mib_label(p.order_table_bytes));
  }
  if (in.checkpoints) {
    std::snprintf(plan, sizeof plan, ", state ~%s, %llu checkpoint(s) of ~%s",
                  core::mib_label(p.state_bytes).c_str(),
                  static_cast<unsigned long long>(p.checkpoints),
                  core::mib_label(p.checkpoint_bytes).c_str());
    line += plan;
  }
  return line + table;
}

// Refuses (std::invalid_argument) a plan option that does not apply to
// `unit`, or a unit plan does not model.
void check_unit_options(const std::string& unit, const po::variables_map& vm) {
  const bool minhash = unit == "minhash";
  if (!minhash && unit != "record") {
    throw std::invalid_argument("--unit must be record or minhash, not '" + unit +
                                "' (paragraphs per record are not modelled)");
  }
  if (minhash && !vm["key-bytes"].defaulted()) {
    throw std::invalid_argument(
        "--key-bytes does not apply with --unit minhash: a band key is 16 bytes");
  }
  if (!minhash && (!vm["bands"].defaulted() || !vm["rows"].defaulted())) {
    throw std::invalid_argument("--bands and --rows apply with --unit minhash only");
  }
}

}  // namespace

core::PlanInputs minhash_key_inputs(const core::PlanInputs& records, std::uint32_t bands,
                                    std::uint32_t rows, std::uint32_t confirm_bits) {
  if (bands == 0) throw std::invalid_argument("--bands must be at least 1");
  if (rows == 0) throw std::invalid_argument("--rows must be at least 1");
  if (static_cast<std::uint64_t>(bands) * rows > core::kMaxSignatureValues) {
    throw std::invalid_argument("--bands " + std::to_string(bands) + " x --rows " +
                                std::to_string(rows) + " exceeds " +
                                std::to_string(core::kMaxSignatureValues) + " signature values");
  }
  if (records.records > std::numeric_limits<std::uint64_t>::max() / bands) {
    throw std::invalid_argument("--records x --bands overflows 64 bits");
  }
  core::PlanInputs keys = records;
  keys.records = records.records * bands;
  keys.key_bytes =
      static_cast<double>(core::minhash_tier2_payload_per_record(bands, rows, confirm_bits)) /
      bands;
  keys.record_bytes = std::max(keys.key_bytes, records.record_bytes / bands);
  keys.records_per_second = records.records_per_second * bands;
  return keys;
}

std::string loaded_forms_plan(const DedupConfig& c, std::uint64_t state_keys, std::uint32_t ranks) {
  if (c.key.unit != core::KeyUnit::kMinHash || c.key.confirm_jaccard <= 0.0 || state_keys == 0) {
    return {};
  }
  const std::uint32_t r = std::max<std::uint32_t>(1, ranks);
  const std::uint64_t per_rank = (state_keys + r - 1) / r;  // slices spread the keys evenly
  char text[160];
  std::snprintf(text, sizeof text, "; the state's forms of %s band keys loaded ~%.1f MiB/rank",
                core::count_label(static_cast<double>(state_keys)).c_str(),
                static_cast<double>(core::confirm_table_bytes(
                    per_rank, c.key.bands * c.key.rows, core::kDefaultConfirmBits,
                    c.annotate.mode == RunMode::kAnnotate || c.key.confirm_origins)) /
                    (1024.0 * 1024.0));
  return text;
}

std::string dedup_plan_line(const DedupConfig& c, std::span<const io::InputFile> files,
                            std::uint64_t capacity, std::uint32_t ranks, std::uint32_t slices) {
  return dedup_plan_line(c, sample_inputs(c, files), capacity, ranks, slices);
}

std::string dedup_plan_line(const DedupConfig& c, const InputSample& sample, std::uint64_t capacity,
                            std::uint32_t ranks, std::uint32_t slices) {
  char head[160];
  std::snprintf(head, sizeof head, "plan: %u ranks, ", ranks);
  if (sample.estimated_records == 0 || sample.keys == 0) {
    return std::string(head) + "no record with a key in the first " +
           std::to_string(kSampleBytes >> 20) + " MiB of " + std::to_string(sample.files) +
           " sampled input(s): no estimate";
  }
  char facts[256];
  std::snprintf(facts, sizeof facts,
                "~%s records (sampled %llu input(s), %llu records: %.0f B each",
                core::count_label(static_cast<double>(sample.estimated_records)).c_str(),
                static_cast<unsigned long long>(sample.files),
                static_cast<unsigned long long>(sample.records),
                sample.text_bytes / static_cast<double>(sample.records));
  std::string line = std::string(head) + facts;
  // A paragraph is a key: how many a record holds, and their sizes, are
  // not sampled.
  if (c.key.unit == core::KeyUnit::kParagraph) {
    return line + "); --unit paragraph: keys not sampled, no memory estimate";
  }
  core::PlanInputs in = sampled_plan_inputs(c, sample, capacity, ranks, slices);
  if (c.key.unit == core::KeyUnit::kMinHash) {  // B 16-byte keys per new record
    std::snprintf(facts, sizeof facts,
                  "); --unit minhash %s %ux%u: tier-2 payload %llu B per new record (%llu B "
                  "with --confirm-jaccard at b = %u)",
                  c.key.shingle.c_str(), c.key.bands, c.key.rows,
                  static_cast<unsigned long long>(
                      core::minhash_tier2_payload_per_record(c.key.bands, c.key.rows, 0)),
                  static_cast<unsigned long long>(core::minhash_tier2_payload_per_record(
                      c.key.bands, c.key.rows, core::kDefaultConfirmBits)),
                  core::kDefaultConfirmBits);
    line += facts;
    if (c.key.confirm_jaccard > 0.0) {  // the owners' forms, beside the plan below
      const std::uint64_t keys = in.records * c.key.bands / std::max<std::uint32_t>(1, ranks);
      // Annotate mode, and every run of a state that keeps origins (a new
      // confirming state's included), keep each key's first record's
      // position and run beside its form.
      const bool positions = c.annotate.mode == RunMode::kAnnotate || c.key.confirm_origins;
      std::snprintf(facts, sizeof facts, ", forms of --confirm-jaccard in memory ~%.1f MiB/rank%s",
                    static_cast<double>(core::confirm_table_bytes(
                        keys, c.key.bands * c.key.rows, core::kDefaultConfirmBits, positions)) /
                        (1024.0 * 1024.0),
                    positions ? " (with their origins)" : "");
      line += facts;
    }
    // Which band keys repeat is not sampled: every one is counted new.
    in.unique_fraction = 1.0;
    char table[256];
    std::snprintf(table, sizeof table,
                  " [bloomshard plan --unit minhash --bands %u --rows %u --records %llu "
                  "--record-bytes %.0f --ranks %u for the table]",
                  c.key.bands, c.key.rows, static_cast<unsigned long long>(in.records),
                  in.record_bytes, ranks);
    try {
      return line +
             plan_figures(minhash_key_inputs(in, c.key.bands, c.key.rows, 0), "band keys", table);
    } catch (const std::exception& e) {
      return line + "; no memory estimate (" + e.what() + ")";
    }
  }
  std::snprintf(facts, sizeof facts, ", keys %.0f B, >= %.1f%% duplicates)", sample.key_bytes,
                100.0 * sample.duplicate_fraction());
  line += facts;
  char table[256];
  std::snprintf(table, sizeof table,
                " [bloomshard plan --records %llu --unique-fraction %.3f --key-bytes %.0f "
                "--record-bytes %.0f --ranks %u%s%s%s for the table]",
                static_cast<unsigned long long>(in.records), in.unique_fraction, in.key_bytes,
                in.record_bytes, ranks, in.input_order ? " --kept-copy first --inputs " : "",
                in.input_order ? std::to_string(in.inputs).c_str() : "",
                in.lockstep ? " --layout lockstep" : "");
  try {
    return line + plan_figures(in, "distinct", table);
  } catch (const std::exception& e) {
    return line + "; no memory estimate (" + e.what() + ")";
  }
}

int run_plan(const std::vector<std::string>& args) {
  core::PlanInputs in;
  double bandwidth_gb = in.disk_bandwidth / 1e9;
  bool json = false;
  std::string unit = "record";
  const MinHashFlags minhash_defaults;
  std::uint32_t bands = minhash_defaults.bands;
  std::uint32_t rows = minhash_defaults.rows;
  std::string kept_copy = "first";
  std::string layout = "tasks";
  po::options_description desc("plan options");
  // clang-format off
  desc.add_options()
    ("help,h", "show this help")
    ("records", po::value(&in.records)->required(), "input records of the job")
    ("unique-fraction", po::value(&in.unique_fraction)->default_value(in.unique_fraction),
     "distinct keys / records")
    ("key-bytes", po::value(&in.key_bytes)->default_value(in.key_bytes), "mean key bytes")
    ("record-bytes", po::value(&in.record_bytes)->default_value(in.record_bytes),
     "mean record bytes (line and newline)")
    ("ranks", po::value(&in.ranks)->required(), "MPI ranks of the job")
    ("fpr", po::value(&in.fpr)->default_value(in.fpr), "dedup's --fpr")
    ("capacity", po::value(&in.capacity)->default_value(0),
     "dedup's --capacity (0: the recommended one)")
    ("slices", po::value(&in.slices)->default_value(0), "dedup's --slices (0: the default)")
    ("batch-bytes", po::value(&in.batch_bytes)->default_value(0),
     "dedup's --batch-bytes (0: the recommended one)")
    ("checkpoint-every", po::value(&in.checkpoint_every)->default_value(0),
     "dedup's --checkpoint-every in seconds (0: one checkpoint at the end)")
    ("disk-bandwidth", po::value(&bandwidth_gb)->default_value(bandwidth_gb),
     "GB/s the file system gives the whole job for checkpoints")
    ("records-per-second", po::value(&in.records_per_second)->default_value(in.records_per_second),
     "records one rank reads and decides per second (measured: docs/commands.md)")
    ("batch-duplicate-fraction",
     po::value(&in.batch_duplicate_fraction)->default_value(in.batch_duplicate_fraction),
     "share of duplicates whose first copy is in the same rank's round (never reach tier 2; "
     "an earlier run's metrics give batch_duplicates / duplicates)")
    ("unit", po::value(&unit)->default_value(unit),
     "dedup's --unit: record | minhash (--bands keys of 16 B per record; --records, "
     "--record-bytes and --records-per-second stay per record, --unique-fraction is then "
     "new band keys / band keys)")
    ("bands", po::value(&bands)->default_value(bands), "--unit minhash: dedup's --bands")
    ("rows", po::value(&rows)->default_value(rows),
     "--unit minhash: dedup's --rows (sizes the confirmation's b-bit signatures)")
    ("kept-copy", po::value(&kept_copy)->default_value(kept_copy),
     "dedup's --kept-copy: first (plans each owner's order table, and with --state its copy "
     "in each checkpoint and the end pass's extra checkpoint) | arrival; not given: first, "
     "arrival under --unit minhash (as dedup)")
    ("inputs", po::value(&in.inputs)->default_value(0),
     "--kept-copy first: the job's input files (0: unknown, the order table planned for "
     "every distinct key)")
    ("layout", po::value(&layout)->default_value(layout),
     "how dedup reads the inputs (docs/inputs.md \"The lockstep layout\"): tasks (whole inputs; "
     "the order table of --kept-copy first planned for the inputs being read: an upper bound) | "
     "lockstep (every input uncompressed, --kept-copy first: one round's order table, with or "
     "without --state)")
    ("json", po::bool_switch(&json), "print one JSON object");
  // clang-format on
  try {
    po::variables_map vm;
    po::store(parse_exact_command_line(args, desc), vm);
    if (vm.count("help")) {
      std::cout << "usage: bloomshard plan --records N --ranks R [options]\n\n" << desc;
      return kExitOk;
    }
    po::notify(vm);
    in.disk_bandwidth = bandwidth_gb * 1e9;
    check_unit_options(unit, vm);
    const bool minhash = unit == "minhash";
    if (kept_copy != "arrival" && kept_copy != "first") {
      throw std::invalid_argument("--kept-copy must be arrival or first, not '" + kept_copy + "'");
    }
    in.input_order = kept_copy == "first" && !(minhash && vm["kept-copy"].defaulted());
    if (minhash && in.input_order) {
      throw std::invalid_argument(
          "--kept-copy first does not apply with --unit minhash (dedup refuses it)");
    }
    if (!in.input_order && !vm["inputs"].defaulted()) {
      throw std::invalid_argument("--inputs applies with --kept-copy first only");
    }
    if (layout != "tasks" && layout != "lockstep") {
      throw std::invalid_argument("--layout must be tasks or lockstep, not '" + layout + "'");
    }
    if (layout == "lockstep" && (!in.input_order || minhash)) {
      throw std::invalid_argument(
          "--layout lockstep applies with --kept-copy first and --unit record only");
    }
    in.lockstep = layout == "lockstep";
    if (minhash) {
      const MinHashPlan m = make_minhash_plan(in, bands, rows);
      if (json) {
        std::cout << plan_json(m.plain, &m);
      } else {
        print_minhash_table(m);
      }
      return kExitOk;
    }
    const core::SizingPlan p = core::make_plan(in);
    if (json) {
      std::cout << plan_json(p, nullptr);
    } else {
      print_table(p, "records");
    }
  } catch (const std::exception& e) {
    std::cerr << "bloomshard plan: " << e.what() << '\n';
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace bloomshard::app
