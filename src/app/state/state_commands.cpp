#include "app/state/state_commands.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "app/cli/exit_codes.hpp"
#include "app/options/exact_options.hpp"
#include "app/report/job_metrics.hpp"
#include "app/report/json_writer.hpp"
#include "app/report/state_window_report.hpp"
#include "app/run/input_order_manifest.hpp"
#include "app/run/run_manifest.hpp"
#include "app/state/state_key_scheme.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "comm/communicator.hpp"
#include "comm/environment.hpp"
#include "io/checkpoint/checkpoint_forms.hpp"
#include "io/checkpoint/checkpoint_key_sample.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace {

struct StateArgs {
  std::string state;
  bool json = false;
  bool all = false;
};

// Parses --state [--json] [--all]; returns an exit code to stop with, or -1.
// Only a `speaker` prints (one rank of an MPI command: every rank parses
// the same arguments and comes to the same answer).
int parse_state_args(const std::vector<std::string>& args, const char* command, bool with_all,
                     StateArgs& out, bool speaker = true) {
  po::options_description desc(std::string("bloomshard ") + command + " options");
  desc.add_options()("help,h", "show this help")("state", po::value(&out.state)->required(),
                                                 "the job's --state dir");
  if (with_all) {
    desc.add_options()("all", po::bool_switch(&out.all), "check every generation, not just LATEST");
  } else {
    desc.add_options()("json", po::bool_switch(&out.json), "print one JSON object");
  }
  try {
    po::variables_map vm;
    po::store(parse_exact_command_line(args, desc), vm);
    if (vm.count("help")) {
      if (speaker) std::cout << desc;
      return kExitOk;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    if (speaker) std::cerr << "bloomshard " << command << ": " << e.what() << '\n';
    return kExitUsage;
  }
  return -1;
}

// The generation a resume would start from: LATEST's, else the newest.
std::optional<std::uint64_t> current_generation(const fs::path& state) {
  const std::vector<std::uint64_t> candidates = io::resume_candidates(state);
  if (candidates.empty()) return std::nullopt;
  return candidates.front();
}

// A --state that names no state at all (no such dir, or a dir without any
// checkpoint file or LATEST) is a usage error, exit 2, as in dedup and
// query; returns the message, or "" when `state` may hold one.
std::string missing_state(const fs::path& state) {
  std::error_code ec;
  if (!fs::is_directory(state, ec)) {
    return "no state dir: --state '" + state.string() + "' " +
           (fs::exists(state, ec) ? "is not a directory" : "does not exist");
  }
  if (io::list_generations(state).empty() && !io::read_latest(state)) {
    return "no checkpoint in '" + state.string() + "' (no ckpt-<g>.h5, no LATEST)";
  }
  return {};
}

// What info does not check, said plainly (text; JSON: checksums_verified).
std::string not_verified_note(const std::string& state) {
  return "not verified: info reads the header, the run list and the manifest (whose checksum it "
         "checks) and the few slices of the header check below, no other slice of either tier; "
         "run `bloomshard verify --state " +
         state + "` to check them";
}

// The header check info does (io::stored_key_sample_problem): "" when the
// header's names, layer geometry and sampled stored keys agree, else why.
std::string header_problem(const fs::path& file) {
  try {
    if (std::string e = io::stored_key_sample_problem(file); !e.empty()) return e;
    const std::string e = io::normalization_problem(io::read_checkpoint_summary(file).header);
    return e.empty() ? e : file.string() + ": " + e;
  } catch (const std::exception& e) {
    return std::string("cannot check the header against the stored keys: ") + e.what();
  }
}

constexpr const char* kHeaderCheckedNote =
    "checked: hash scheme, Bloom layout, key encoding, normalization and layer geometry known to "
    "this build; the first keys of up to 16 slices per run hash back to their slice and "
    "fingerprint under hash_seed, are held by the Bloom layers and keep their normalization";

// One tier-2 run as info reports it (format 2: a run file; format 1: the
// generation's own tier 2, so the generation file).
struct RunFacts {
  std::string file_name;
  std::uint32_t level = 0;
  std::uint64_t keys = 0;
  std::uint64_t key_bytes = 0;
  std::uint64_t file_bytes = 0;  // 0 when the file cannot be sized
};

// Everything info reports about the current generation, read once; the
// JSON and the text form both render it.
struct InfoFacts {
  std::string state;
  fs::path file;
  io::CheckpointSummary summary;
  RunManifest manifest;
  std::string header_check;  // "" when the header check passed
  std::vector<RunFacts> runs;
  std::vector<std::uint64_t> run_file_bytes;  // per run, for the window report
  std::uint64_t total_run_file_bytes = 0;
  double cardinality = 0;        // summed over the layers
  double fpr = 0;                // summed over the layers
  std::uint64_t form_bytes = 0;  // of one confirmation form (0: none, or an unreadable scheme)
  bool origins = false;          // the forms keep their origins (confirm-origins)
};

// The record counters info shows, in order: their JSON names and the words
// of the text line ("records  N read, N kept, ...").
struct RecordCountField {
  const char* json_name;
  const char* text_word;
  std::uint64_t JobCounters::*member;
};
constexpr RecordCountField kRecordCountFields[] = {
    {"records", "read", &JobCounters::records},
    {"kept", "kept", &JobCounters::kept},
    {"duplicates", "duplicates", &JobCounters::duplicates},
    {"rejected", "rejected", &JobCounters::rejected},
};

std::vector<RunFacts> run_facts(const InfoFacts& f) {
  std::vector<RunFacts> runs;
  for (const io::CheckpointRunRef& r : f.summary.runs) {
    const fs::path p = f.summary.header.format_version >= 2 ? io::run_path(f.state, r.id) : f.file;
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(p, ec);
    runs.push_back({p.filename().string(), r.level, r.keys, r.bytes,
                    ec ? 0 : static_cast<std::uint64_t>(size)});
  }
  return runs;
}

InfoFacts read_info_facts(const std::string& state, std::uint64_t generation) {
  InfoFacts f;
  f.state = state;
  f.file = io::generation_path(state, generation);
  f.summary = io::read_checkpoint_summary(f.file);
  f.manifest = manifest_from_json(f.summary.header.manifest_json);
  // Printed with everything else (the attributes show what is wrong); the
  // exit code says the state cannot be used (1).
  f.header_check = header_problem(f.file);
  f.runs = run_facts(f);
  for (const RunFacts& r : f.runs) {
    f.run_file_bytes.push_back(r.file_bytes);
    f.total_run_file_bytes += r.file_bytes;
  }
  for (const LayerSummary& l : saved_layers(f.summary)) {
    f.cardinality += l.cardinality_estimate;
    f.fpr += l.fpr_estimate;
  }
  try {  // an unreadable scheme is shown as such by describe_key_scheme
    if (const auto forms = io::form_scheme_of(f.summary.header)) {
      f.form_bytes = forms->form_bytes;
      f.origins = forms->origins;
    }
  } catch (const std::exception&) {
  }
  return f;
}

void add_identity_json(JsonWriter& j, const InfoFacts& f) {
  const io::CheckpointHeader& h = f.summary.header;
  j.value("file", f.file.string());
  j.value("generation", h.generation);
  j.value("run_id", h.run_id);
  j.value("state", h.finished ? "finished" : "unfinished");
  j.value("format_version", static_cast<std::uint64_t>(h.format_version));
  j.value("tool_version", h.tool_version);
  j.value("hash_scheme", h.hash_scheme);
  j.value("normalization", h.normalization);
  j.value("key_field", h.key_field);
  // The whole key scheme, also for states without the attribute.
  j.value("key_scheme", describe_key_scheme(h));
  j.value("slices", static_cast<std::uint64_t>(h.params.num_slices));
  j.value("written_by_ranks", static_cast<std::uint64_t>(f.summary.written_by_ranks));
  j.value("exact_keys", f.summary.tier2_keys);
  j.value("exact_key_bytes", f.summary.tier2_bytes);
  // A confirming minhash state keeps one form per key (0 and 0 otherwise).
  j.value("confirmation_forms", f.form_bytes != 0 ? f.summary.tier2_keys : 0);
  j.value("confirmation_form_bytes", f.form_bytes);
  // And one origin (run, position) per key when the state keeps them.
  j.value("confirmation_form_origins", f.origins ? f.summary.tier2_keys : 0);
  // --kept-copy first: the owners' saved memory (docs/checkpoint-format.md).
  j.value("kept_copy", f.manifest.input_order ? "first" : "arrival");
  if (f.manifest.input_order) {
    const InputOrderProgress& o = *f.manifest.input_order;
    const std::uint64_t remembered = kept_as_rows(o.version) ? o.kept_rows : o.kept.size();
    const std::uint64_t retracted =
        retracted_as_rows(o.version) ? o.retracted_rows : o.retracted.size();
    j.value("input_order_version", o.version);
    j.value("input_order_remembered", remembered);
    // Where they are saved: "rows" (the generation's /input_order datasets,
    // 24 bytes a copy) or "manifest" (version 1, a JSON list); the
    // retractions the same (rows since version 3).
    j.value("input_order_saved_as", kept_as_rows(o.version) ? "rows" : "manifest");
    j.value("input_order_retracted_saved_as", retracted_as_rows(o.version) ? "rows" : "manifest");
    j.value("input_order_row_bytes", ((kept_as_rows(o.version) ? remembered : 0) +
                                      (retracted_as_rows(o.version) ? retracted : 0)) *
                                         sizeof(store::InputOrderRow));
    j.value("input_order_retracted", retracted);
    j.value("input_order_cut_outputs", f.manifest.input_order->cut_outputs.size());
  }
}

void add_runs_json(JsonWriter& j, const InfoFacts& f) {
  j.value("run_count", static_cast<std::uint64_t>(f.runs.size()));
  j.value("run_file_bytes", f.total_run_file_bytes);
  j.begin_array("runs");
  for (const RunFacts& r : f.runs) {
    j.begin_object();
    j.value("file", r.file_name);
    j.value("level", static_cast<std::uint64_t>(r.level));
    j.value("keys", r.keys);
    j.value("key_bytes", r.key_bytes);
    j.value("file_bytes", r.file_bytes);
    j.end_object();
  }
  j.end_array();
}

void add_layers_json(JsonWriter& j, const InfoFacts& f) {
  j.begin_array("layers");
  for (const LayerSummary& l : saved_layers(f.summary)) {
    j.begin_object();
    j.value("capacity", l.capacity);
    j.value("inserted", l.inserted);
    j.value("k", static_cast<std::uint64_t>(l.k));
    j.value("bits", l.bits);
    j.value("fill_estimate", l.fill_ratio);
    j.value("fpr_target", l.fpr_target);
    j.value("fpr_estimate", l.fpr_estimate);
    j.end_object();
  }
  j.end_array();
}

void add_inputs_json(JsonWriter& j, const InfoFacts& f) {
  j.begin_array("inputs");
  for (const InputProgress& p : f.manifest.inputs) {
    j.begin_object();
    j.value("path", p.file.relative_path);
    j.value("size", p.file.size);
    j.value("records_done", p.cursor.records);
    j.value("bytes_done", p.cursor.decompressed_offset);
    if (p.cursor.frame) {  // where a resume starts decoding this input
      j.value("resume_compressed_offset", p.cursor.frame->compressed_offset);
      j.value("resume_decompressed_offset", p.cursor.frame->decompressed_offset);
    }
    j.value("done", p.done);
    j.value("output_length", p.output_length);
    j.end_object();
  }
  j.end_array();
}

std::string info_json(const InfoFacts& f) {
  JsonWriter j;
  j.begin_object();
  add_identity_json(j, f);
  add_runs_json(j, f);
  add_layers_json(j, f);
  add_window_json(j, f.summary, f.run_file_bytes);  // the slots of a windowed state
  j.value("cardinality_estimate", f.cardinality);
  j.value("fpr_estimate", f.fpr);
  j.value("checksums_verified", false);  // see not_verified_note
  j.value("header_checked", f.header_check.empty());
  if (!f.header_check.empty()) j.value("header_problem", f.header_check);
  for (const RecordCountField& c : kRecordCountFields) {
    j.value(c.json_name, f.manifest.counters.*c.member);
  }
  add_inputs_json(j, f);
  j.end_object();
  return j.str();
}

void print_identity_text(const InfoFacts& f) {
  const io::CheckpointSummary& s = f.summary;
  std::printf("checkpoint  %s\ngeneration  %llu (%s), run %s, written by %u ranks\n",
              f.file.c_str(), static_cast<unsigned long long>(s.header.generation),
              s.header.finished ? "finished" : "unfinished", s.header.run_id.c_str(),
              s.written_by_ranks);
  std::printf("format      %u\n", s.header.format_version);
  std::printf("checksums   %s\n", not_verified_note(f.state).c_str());
  std::printf("header      %s\n",
              f.header_check.empty() ? kHeaderCheckedNote : ("FAILED: " + f.header_check).c_str());
  std::printf("scheme      %s, normalization %s, key field '%s', %u slices\n",
              s.header.hash_scheme.c_str(), s.header.normalization.c_str(),
              s.header.key_field.c_str(), s.header.params.num_slices);
  std::printf("key scheme  %s\n", describe_key_scheme(s.header).c_str());
  if (const auto& order = f.manifest.input_order) {
    const auto where = [](bool rows, std::uint64_t n, const char* dataset) {
      return rows ? std::to_string(n) + " rows of " + dataset + ", " +
                        std::to_string(n * sizeof(store::InputOrderRow)) + " bytes"
                  : std::string("in the manifest");
    };
    const std::uint64_t kept = kept_as_rows(order->version) ? order->kept_rows : order->kept.size();
    const std::uint64_t retracted =
        retracted_as_rows(order->version) ? order->retracted_rows : order->retracted.size();
    std::printf(
        "kept copy   first in input order (input_order version %llu): %llu kept copies "
        "remembered (%s), %llu retracted copies waiting for the end pass (%s), %zu cut outputs "
        "to rename\n",
        static_cast<unsigned long long>(order->version), static_cast<unsigned long long>(kept),
        where(kept_as_rows(order->version), kept, store::kInputOrderRows).c_str(),
        static_cast<unsigned long long>(retracted),
        where(retracted_as_rows(order->version), retracted, store::kInputOrderRetractedRows)
            .c_str(),
        order->cut_outputs.size());
  }
  std::printf("keys        %llu exact (%.1f MiB), estimated %.0f; filter FPR estimate %.3g\n",
              static_cast<unsigned long long>(s.tier2_keys),
              static_cast<double>(s.tier2_bytes) / 1048576.0, f.cardinality, f.fpr);
  if (f.form_bytes != 0) {
    std::printf("forms       %llu confirmation forms of %llu bytes (%.1f MiB), one per key\n",
                static_cast<unsigned long long>(s.tier2_keys),
                static_cast<unsigned long long>(f.form_bytes),
                static_cast<double>(s.tier2_keys * f.form_bytes) / 1048576.0);
    if (f.origins) {
      std::printf("origins     %llu form origins (run, position; %.1f MiB), one per key\n",
                  static_cast<unsigned long long>(s.tier2_keys),
                  static_cast<double>(s.tier2_keys * 16) / 1048576.0);
    } else {
      std::printf(
          "origins     none (a state written before them, or merged: annotate mode "
          "cannot continue it)\n");
    }
  }
}

void print_runs_and_layers_text(const InfoFacts& f) {
  std::printf("runs        %zu tier-2 runs, %llu keys, %.1f MiB of run files\n", f.runs.size(),
              static_cast<unsigned long long>(f.summary.tier2_keys),
              static_cast<double>(f.total_run_file_bytes) / 1048576.0);
  for (std::size_t i = 0; i < f.runs.size(); ++i) {
    const RunFacts& r = f.runs[i];
    std::printf("  run %-4zu  level %s, %llu keys, %.1f MiB (%s)\n", i,
                r.level == core::kLegacyRunLevel ? "format-1" : std::to_string(r.level).c_str(),
                static_cast<unsigned long long>(r.keys),
                static_cast<double>(r.file_bytes) / 1048576.0, r.file_name.c_str());
  }
  const std::vector<io::CheckpointLayerInfo>& layers = f.summary.layers;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::printf("layer %-4zu  capacity %llu, inserted %llu, k %u, FPR target %.3g\n", i,
                static_cast<unsigned long long>(layers[i].geometry.capacity),
                static_cast<unsigned long long>(layers[i].inserted), layers[i].geometry.k,
                layers[i].geometry.fpr_target);
  }
}

void print_progress_text(const InfoFacts& f) {
  std::string counts;
  for (const RecordCountField& c : kRecordCountFields) {
    if (!counts.empty()) counts += ", ";
    counts += std::to_string(f.manifest.counters.*c.member) + " " + c.text_word;
  }
  std::printf("records     %s\n", counts.c_str());
  const std::vector<InputProgress>& inputs = f.manifest.inputs;
  const auto done =
      std::count_if(inputs.begin(), inputs.end(), [](const InputProgress& p) { return p.done; });
  std::printf("inputs      %zu of %zu done\n", static_cast<std::size_t>(done), inputs.size());
  for (const InputProgress& p : inputs) {
    if (p.done || p.cursor.records == 0) continue;
    std::printf("  in progress: %s at record %llu\n", p.file.relative_path.c_str(),
                static_cast<unsigned long long>(p.cursor.records));
  }
}

void print_info_text(const InfoFacts& f) {
  print_identity_text(f);
  print_runs_and_layers_text(f);
  print_window_text(f.summary, f.run_file_bytes);
  print_progress_text(f);
}

}  // namespace

int run_info(const std::vector<std::string>& args) {
  StateArgs a;
  if (const int rc = parse_state_args(args, "info", false, a); rc >= 0) return rc;
  if (const std::string missing = missing_state(a.state); !missing.empty()) {
    std::cerr << "bloomshard info: " << missing << '\n';
    return kExitUsage;
  }
  const std::optional<std::uint64_t> g = current_generation(a.state);
  if (!g) {
    std::cerr << "bloomshard info: no checkpoint in '" << a.state << "'\n";
    return kExitFailure;
  }
  const InfoFacts f = read_info_facts(a.state, *g);
  if (a.json) {
    std::cout << info_json(f);
    return f.header_check.empty() ? kExitOk : kExitFailure;
  }
  print_info_text(f);
  if (!f.header_check.empty()) {
    std::fflush(stdout);
    std::cerr << "bloomshard info: " << f.header_check << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

int run_verify(const std::vector<std::string>& args) {
  comm::Environment env;
  comm::Communicator world;
  StateArgs a;
  if (const int rc = parse_state_args(args, "verify", true, a, world.rank() == 0); rc >= 0) {
    return rc;
  }
  if (const std::string missing = missing_state(a.state); !missing.empty()) {
    if (world.rank() == 0) std::cerr << "bloomshard verify: " << missing << '\n';
    return kExitUsage;
  }
  std::vector<std::uint64_t> generations;
  if (a.all) {
    generations = io::list_generations(a.state);
  } else if (const auto g = current_generation(a.state)) {
    generations.push_back(*g);
  }
  if (const auto latest = io::read_latest(a.state);
      latest && !a.all && !fs::exists(io::generation_path(a.state, *latest))) {
    if (world.rank() == 0) {
      std::cout << "LATEST names generation " << *latest << ", whose file is missing\n";
    }
    return kExitFailure;
  }
  if (generations.empty()) {
    if (world.rank() == 0) std::cerr << "bloomshard verify: no checkpoint in '" << a.state << "'\n";
    return kExitFailure;
  }
  bool ok = true;
  for (const std::uint64_t g : generations) {
    const fs::path file = io::generation_path(a.state, g);
    io::VerifyReport report = io::verify_checkpoint(world, file);
    // The policy name too (the store's verify checks what it stores, not
    // what the app reads it as); a file verify could not open is named above.
    if (world.rank() == 0 && report.ok) {
      try {
        const io::CheckpointHeader h = io::read_checkpoint_summary(file).header;
        if (std::string e = io::normalization_problem(h); !e.empty()) {
          report.problems.push_back(file.string() + ": " + e);
          report.ok = false;
        }
        // The manifest as a resume reads it: the input order's saved memory
        // is checked entry by entry, and against its mark.
        const RunManifest m = manifest_from_json(h.manifest_json);
        if (std::string e = input_order_mark_problem(h, m); !e.empty()) {
          report.problems.push_back(file.string() + ": " + e);
          report.ok = false;
        } else if (m.input_order && kept_as_rows(m.input_order->version) &&
                   m.input_order->kept_rows != report.input_order_rows) {
          report.problems.push_back(file.string() + ": dataset " + store::kInputOrderRows +
                                    " holds " + std::to_string(report.input_order_rows) +
                                    " rows, the manifest's input_order " +
                                    std::to_string(m.input_order->kept_rows));
          report.ok = false;
        } else if (m.input_order && retracted_as_rows(m.input_order->version) &&
                   m.input_order->retracted_rows != report.input_order_retracted_rows) {
          report.problems.push_back(file.string() + ": dataset " + store::kInputOrderRetractedRows +
                                    " holds " + std::to_string(report.input_order_retracted_rows) +
                                    " rows, the manifest's input_order " +
                                    std::to_string(m.input_order->retracted_rows));
          report.ok = false;
        }
      } catch (const std::exception& e) {
        report.problems.push_back(e.what());
        report.ok = false;
      }
    }
    ok = world.all(report.ok) && ok;
    if (world.rank() != 0) continue;
    std::cout << file.string() << ": " << (report.ok ? "ok" : "FAILED");
    if (report.form_bytes != 0) {
      std::cout << " (" << report.forms << " confirmation forms of " << report.form_bytes
                << " bytes checked";
      if (report.origins != 0) std::cout << "; " << report.origins << " form origins checked";
      std::cout << ')';
    }
    if (report.input_order_rows != 0 || report.input_order_retracted_rows != 0) {
      std::cout << " (" << report.input_order_rows << " input-order rows checked";
      if (report.input_order_retracted_rows != 0) {
        std::cout << ", " << report.input_order_retracted_rows << " retracted rows checked";
      }
      std::cout << ')';
    }
    std::cout << '\n';
    for (const std::string& p : report.problems) std::cout << "  " << p << '\n';
  }
  return ok ? kExitOk : kExitFailure;
}

}  // namespace bloomshard::app
