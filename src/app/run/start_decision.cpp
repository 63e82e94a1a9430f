// decide_start (run_state.hpp), by case: no state, no checkpoint yet, an
// unfinished run, a finished run started again, and an incremental run on a
// finished filter. Rank 0 alone; user errors come back as refusals.
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "app/cli/exit_codes.hpp"
#include "app/feed/input_windows.hpp"
#include "app/guard/output_guard.hpp"
#include "app/guard/output_presence.hpp"
#include "app/run/input_order_manifest.hpp"
#include "app/run/run_manifest.hpp"
#include "app/run/run_state.hpp"
#include "app/state/state_key_scheme.hpp"
#include "app/state/window_slots.hpp"
#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/normalize.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/durable/durable_file.hpp"

namespace bloomshard::app {
namespace fs = std::filesystem;
namespace {

StartDecision refuse(std::string message, int code = kExitUsage) {
  StartDecision d;
  d.error = std::move(message);
  d.exit_code = code;
  return d;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_identity(const fs::path& state_dir, const std::string& run_id) {
  // Checked, then renamed over the old one: a full disk fails the start with
  // a message and never leaves an empty RUN.json that reads as another run.
  const fs::path tmp = state_dir / (std::string(kRunIdentityName) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "{\"run_id\":\"" << run_id << "\"}\n";
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw std::runtime_error("cannot write '" + tmp.string() + "' (disk full?)");
    }
  }
  io::fsync_path(tmp);
  fs::rename(tmp, state_dir / kRunIdentityName);
  io::fsync_path(state_dir);
}

std::string stored_identity(const fs::path& state_dir) {
  const std::string text = read_text(state_dir / kRunIdentityName);
  const std::size_t at = text.find("\"run_id\":\"");
  if (at == std::string::npos) return {};
  const std::size_t begin = at + 10;
  return text.substr(begin, text.find('"', begin) - begin);
}

// First difference between the inputs a checkpoint describes and today's,
// or empty if they are the same files.
std::string input_difference(const RunManifest& m, std::span<const io::InputFile> inputs) {
  if (m.inputs.size() != inputs.size()) {
    return "the checkpoint lists " + std::to_string(m.inputs.size()) +
           " input files, now there are " + std::to_string(inputs.size());
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const io::InputFile& then = m.inputs[i].file;
    const io::InputFile& now = inputs[i];
    if (then.relative_path != now.relative_path) {
      return "input #" + std::to_string(i) + " was '" + then.relative_path + "', now '" +
             now.relative_path + "'";
    }
    if (then.size != now.size || then.mtime_ns != now.mtime_ns) {
      return "input '" + now.relative_path + "' changed since the checkpoint (" +
             describe_file_change(then, now) + ")";
    }
  }
  return {};
}

// A state keeps the rules it was saved with: a bare --normalize name
// takes the state's version of that policy (nfc-casefold/v1 states stay
// v1); a version named on the command line that differs is refused, since
// one filter never mixes the keys of two versions. Returns an error or "".
std::string adopt_state_normalization(const std::string& stored, DedupConfig& c) {
  const std::string label = stored.substr(0, stored.find(' '));
  core::NormalizePolicy saved{};
  try {
    saved = core::parse_policy(label);
  } catch (const std::invalid_argument&) {
    return {};  // unknown to this build: header_difference names it
  }
  if (saved == c.key.normalize) return {};
  if (core::policy_name(saved) != core::policy_name(c.key.normalize)) return {};
  if (!c.normalize_pinned) {
    c.key.normalize = saved;
    return {};
  }
  return "the state was saved with " + label + " rules and this job asks for " +
         core::policy_label(c.key.normalize) +
         "; one state never mixes versions (give --normalize " +
         std::string(core::policy_name(saved)) +
         " to keep the state's rules, or use a new --state for the new ones)";
}

// What in a checkpoint's header makes it unusable for this job, or empty.
std::string header_difference(const io::CheckpointHeader& h, const DedupConfig& c) {
  const auto differs = [](const char* what, const std::string& then, const std::string& now) {
    return std::string(what) + " differs: checkpoint '" + then + "', this job '" + now + "'";
  };
  if (h.hash_scheme != core::kHashSchemeName) {
    return differs("hash scheme", h.hash_scheme, std::string(core::kHashSchemeName));
  }
  if (h.hash_seed != c.hash_seed) {
    return differs("hash seed", std::to_string(h.hash_seed), std::to_string(c.hash_seed));
  }
  if (h.bloom_layout != core::kBloomLayoutName) {
    return differs("Bloom layout", h.bloom_layout, std::string(core::kBloomLayoutName));
  }
  // The key scheme first: its message names the option that differs
  // (--key-digest, --text-normalize, ...) with the state's and the job's value.
  core::KeyScheme saved;
  try {
    saved = key_scheme_of(h);
  } catch (const std::invalid_argument& e) {
    return std::string("key scheme unreadable: ") + e.what();
  }
  if (std::string diff = core::key_scheme_difference(saved, c.key); !diff.empty()) return diff;
  if (h.normalization != normalization_identity(c)) {
    return differs("normalization", h.normalization, normalization_identity(c));
  }
  return window_refusal(h, c.window);
}

// A refusal when the outputs the checkpoint records are gone or shorter
// than committed: neither a resume nor "already finished" may stand on them.
std::string lost_outputs_refusal(const fs::path& state, const RunManifest& m,
                                 const DedupConfig& c) {
  const fs::path out = m.output_dir.empty() ? fs::path(c.output_dir) : fs::path(m.output_dir);
  const std::string lost = missing_or_short_output(m, out);
  if (lost.empty()) return {};
  return "the run in '" + state.string() + "' cannot be used: its output " + lost +
         " (deleted, truncated, or lost to a crash). Rebuild the outputs: run again with a new "
         "--state (and --overwrite for '" +
         out.string() + "'), or put the original files back";
}

// A finished run started again with the same command: the same output
// dir and mode, the same inputs by path (some may have changed). Anything
// else is an incremental run (new inputs against the finished filter).
bool same_run_started_again(const RunManifest& m, const DedupConfig& c,
                            std::span<const io::InputFile> inputs) {
  if (m.output_dir != fs::absolute(c.output_dir).lexically_normal().string()) return false;
  if (m.mode != run_mode_label(c.annotate) || m.inputs.size() != inputs.size()) return false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (m.inputs[i].file.relative_path != inputs[i].relative_path) return false;
  }
  return true;
}

}  // namespace

namespace {

// What every case of the decision reads.
struct StartInputs {
  const DedupConfig& config;
  std::span<const fs::path> input_args;
  std::span<const io::InputFile> inputs;
  fs::path state;
};

// The newest checkpoint whose header reads (the collective load verifies
// checksums and may still fall back to older generations); `unreadable`
// gets why the newer ones did not read.
std::optional<io::CheckpointSummary> newest_readable(const fs::path& state,
                                                     std::span<const std::uint64_t> candidates,
                                                     std::string& unreadable) {
  for (const std::uint64_t g : candidates) {
    try {
      return io::read_checkpoint_summary(io::generation_path(state, g));
    } catch (const std::exception& e) {
      unreadable += std::string("\n  ") + e.what();
    }
  }
  return std::nullopt;
}

// The output dir's refusal, checked before RUN.json names this run: a
// refused start that rewrote it would make the same command's next start
// an "own restart", allowed to overwrite the outputs it was refused.
StartDecision refuse_output_dir(const StartInputs& in, bool overwrite) {
  const OutputCheck check =
      check_output_dir(in.config.output_dir, in.input_args, in.inputs, overwrite, in.state);
  if (!check.error.empty()) return refuse(check.error, check.exit_code);
  return {};
}

// No checkpoint. A RUN.json of this same run means it was killed before
// its first checkpoint: its partial outputs are ours to replace.
StartDecision decide_without_checkpoint(const StartInputs& in, StartDecision d) {
  const fs::path& state = in.state;
  const bool own_restart =
      fs::exists(state / kRunIdentityName) && stored_identity(state) == d.plan.run_id;
  if (fs::exists(state / kRunIdentityName) && !own_restart) {
    return refuse("state dir '" + state.string() + "' belongs to another run (" + kRunIdentityName +
                  " run_id " + stored_identity(state) + ", this run " + d.plan.run_id +
                  ") that wrote no checkpoint; use another --state or remove it");
  }
  const bool overwrite = in.config.overwrite || own_restart;
  if (StartDecision r = refuse_output_dir(in, overwrite); !r.error.empty()) return r;
  write_identity(state, d.plan.run_id);
  const OutputCheck check =
      prepare_output_dir(in.config.output_dir, in.input_args, in.inputs, overwrite);
  if (!check.error.empty()) return refuse(check.error, check.exit_code);
  return d;
}

// Whether the state's forms keep their origins is the state's, not the
// job's: a confirming state written before them (or merged) goes on
// without them in filter mode. Annotate mode names each match's first
// record, which such a state cannot tell: refused before any work.
std::string origins_refusal(const io::CheckpointHeader& h, const DedupConfig& c, StartPlan& plan) {
  const core::KeyScheme saved = key_scheme_of(h);  // readable: header_difference read it
  plan.origins = saved.confirm_origins;
  if (c.key.confirm_jaccard == 0.0 || saved.confirm_origins ||
      c.annotate.mode == RunMode::kFilter) {
    return {};
  }
  return "--confirm-jaccard with --mode annotate needs a state whose confirmation forms keep "
         "their origins (the run and position of each band key's first record, "
         "/tier2/form_origins); this state's have none (written by a build before them, or by "
         "merge), so the records it matched could not be named. Continue it in filter mode, or "
         "annotate into a new --state";
}

// Why the saved header cannot serve this job (normalization, hash and key
// scheme, window, origins for annotate mode), or "". Sets the plan's
// normalization, slices and origins.
std::string header_refusal(const StartInputs& in, const io::CheckpointHeader& h, StartPlan& plan) {
  DedupConfig adopted = in.config;
  if (std::string diff = adopt_state_normalization(h.normalization, adopted); !diff.empty()) {
    return diff;
  }
  plan.normalize = adopted.key.normalize;
  if (std::string diff = header_difference(h, adopted); !diff.empty()) return diff;
  plan.num_slices = h.params.num_slices;
  return origins_refusal(h, in.config, plan);
}

// Why the manifest and the header's split-input marks disagree, or "".
std::string split_marks_refusal(const io::CheckpointHeader& h, const RunManifest& manifest) {
  if (has_split_inputs(manifest) != h.split_inputs) {
    return std::string("its manifest ") + (h.split_inputs ? "lacks" : "has") +
           " split inputs but its normalization text " + (h.split_inputs ? "has" : "lacks") +
           " the split-inputs mark";
  }
  if (has_retracted_records(manifest) && !h.retracted_records) {
    return "its manifest has retracted records but its normalization text lacks "
           "the split-inputs/v2 mark";
  }
  return input_order_mark_problem(h, manifest);
}

// Why a resume cannot keep the copy the run it goes on keeps, or "": the
// rule is the state's (an input_order object in its manifest) for the
// whole run. An arrival-order state has no owners' memory to go on with,
// and an input-order state's pending retractions must leave the outputs.
// Without --kept-copy the resume takes the state's rule (DedupJob's start).
std::string kept_copy_refusal(const DedupConfig& c, const RunManifest& manifest) {
  if (!kept_copy_chosen(c)) return {};
  const bool first = c.kept_copy == KeptCopy::kFirstInInputOrder;
  if (manifest.input_order.has_value() == first) return {};
  return first ? "was started with --kept-copy arrival (or by a build before --kept-copy first "
                 "could resume), this job asks for --kept-copy first; finish it with "
                 "--kept-copy arrival, or use another --state"
               : "was started with --kept-copy first, this job asks for --kept-copy arrival; "
                 "finish it with --kept-copy first (its retracted copies still wait to leave "
                 "the outputs), or use another --state";
}

// A resume of the run that wrote `h`, finished or not: only its own
// generations may be loaded.
StartDecision resume(const io::CheckpointHeader& h, bool finished, StartDecision d) {
  d.plan.kind = StartKind::kResume;
  d.plan.run_id = h.run_id;
  d.plan.base_run_id = h.run_id;
  d.plan.base_finished = finished;
  return d;
}

// An unfinished run goes on with the same inputs (changes as
// reconcile_inputs accepts them), output dir and mode.
StartDecision decide_unfinished(const StartInputs& in, const io::CheckpointHeader& h,
                                const RunManifest& manifest, const RevalidateFn* revalidate,
                                StartDecision d) {
  const std::string where = "the unfinished run in '" + in.state.string() + "'";
  const WindowCheckFn windows = window_difference;
  RunManifest changed = manifest;
  const InputChanges ch = reconcile_inputs(changed, in.inputs, revalidate, &windows);
  if (!ch.refusal.empty()) {
    return refuse(where + " cannot go on: " + ch.refusal +
                  "; finish it with its own inputs, or use another --state");
  }
  const std::string out_now = fs::absolute(in.config.output_dir).lexically_normal().string();
  if (manifest.output_dir != out_now) {
    return refuse(where + " writes to '" + manifest.output_dir + "', not '" + out_now + "'");
  }
  if (const std::string mode = run_mode_label(in.config.annotate); manifest.mode != mode) {
    return refuse(where + " was started with " + run_mode_options(manifest.mode) +
                  ", this job asks for " + run_mode_options(mode) +
                  "; finish it with the same mode (its outputs are half written in it), "
                  "or use another --state");
  }
  if (std::string why = kept_copy_refusal(in.config, manifest); !why.empty()) {
    return refuse(where + " " + why);
  }
  if (std::string lost = lost_outputs_refusal(in.state, manifest, in.config); !lost.empty()) {
    return refuse(lost, kExitFailure);
  }
  return resume(h, false, std::move(d));
}

// The same command again on a finished run: "finished" when nothing
// changed; inputs that changed since (grown, shrunk, replaced) are
// refused, or with --revalidate-inputs read on after what was read: a
// resume of the finished run that appends to their outputs.
StartDecision decide_finished_again(const StartInputs& in, const io::CheckpointHeader& h,
                                    const RunManifest& manifest, const RevalidateFn* revalidate,
                                    bool same_inputs, StartDecision d) {
  const WindowCheckFn windows = window_difference;
  RunManifest changed = manifest;
  const InputChanges ch = reconcile_inputs(changed, in.inputs, revalidate, &windows);
  if (!ch.refusal.empty()) {
    return refuse("the run in '" + in.state.string() +
                  "' finished, and its inputs changed since: " + ch.refusal +
                  "; use another --state (or --output) for other inputs");
  }
  if (std::string lost = lost_outputs_refusal(in.state, manifest, in.config); !lost.empty()) {
    return refuse(lost, kExitFailure);
  }
  if (same_inputs && std::all_of(changed.inputs.begin(), changed.inputs.end(),
                                 [](const InputProgress& p) { return p.done; })) {
    // A job killed between its finishing generation's rename and LATEST's
    // left LATEST naming the generation before (or nothing): LATEST names
    // the finished one again, so that info, query and a reader of the state
    // see what this start saw. One killed between LATEST and pruning left
    // an extra generation.
    if (io::read_latest(in.state) != h.generation) io::write_latest(in.state, h.generation);
    (void)io::prune_generations(in.state, h.generation, in.config.keep_generations);
    d.plan.kind = StartKind::kFinished;
    return d;
  }
  return resume(h, true, std::move(d));
}

// A finished filter and new inputs: today's crawl against history. Killed
// before its first checkpoint, an incremental run starts again like a
// fresh one: its own RUN.json says the partial outputs are its.
StartDecision decide_incremental(const StartInputs& in, const io::CheckpointHeader& h,
                                 StartDecision d) {
  d.plan.kind = StartKind::kIncremental;
  d.plan.base_run_id = h.run_id;
  d.plan.base_finished = true;
  const bool own_restart = stored_identity(in.state) == d.plan.run_id;
  const bool overwrite = in.config.overwrite || own_restart;
  if (StartDecision r = refuse_output_dir(in, overwrite); !r.error.empty()) return r;
  write_identity(in.state, d.plan.run_id);
  const OutputCheck check =
      prepare_output_dir(in.config.output_dir, in.input_args, in.inputs, overwrite);
  if (!check.error.empty()) return refuse(check.error, check.exit_code);
  return d;
}

// A state with a readable checkpoint: which of the three cases, or why not.
StartDecision decide_from_checkpoint(const StartInputs& in, const io::CheckpointSummary& summary,
                                     StartDecision d) {
  const io::CheckpointHeader& h = summary.header;
  const std::string cannot = "cannot use the checkpoint in '" + in.state.string() + "': ";
  if (std::string why = header_refusal(in, h, d.plan); !why.empty()) return refuse(cannot + why);
  RunManifest manifest;
  try {  // a manifest that does not read (e.g. a damaged input_order) names its generation
    manifest = manifest_from_json(h.manifest_json);
  } catch (const std::runtime_error& e) {
    return refuse(cannot + "generation " + std::to_string(h.generation) + ": " + e.what(),
                  kExitFailure);
  }
  if (std::string why = split_marks_refusal(h, manifest); !why.empty()) {
    return refuse(cannot + why);
  }
  const std::string input_diff = input_difference(manifest, in.inputs);
  const RevalidateFn prefix_check = revalidate_consumed_prefix;
  const RevalidateFn* revalidate = in.config.revalidate_inputs ? &prefix_check : nullptr;
  if (!h.finished) return decide_unfinished(in, h, manifest, revalidate, std::move(d));
  if (input_diff.empty()) {
    // Its outputs exist once, where it wrote them: a new dir would get
    // nothing (every key is in the filter), so the start says where they are.
    const std::string out_now = fs::absolute(in.config.output_dir).lexically_normal().string();
    if (!manifest.output_dir.empty() && manifest.output_dir != out_now) {
      return refuse("the run in '" + in.state.string() + "' already finished for these inputs; " +
                    "its outputs are in '" + manifest.output_dir + "', not '" + out_now +
                    "'. Use them there (copy or move them), or run without this --state (or "
                    "with a new one) to deduplicate again into '" +
                    out_now + "'");
    }
  }
  if (input_diff.empty() || same_run_started_again(manifest, in.config, in.inputs)) {
    return decide_finished_again(in, h, manifest, revalidate, input_diff.empty(), std::move(d));
  }
  return decide_incremental(in, h, std::move(d));
}

}  // namespace

StartDecision decide_start(const DedupConfig& c, std::span<const fs::path> input_args,
                           std::span<const io::InputFile> inputs) {
  StartDecision d;
  d.plan.run_id = run_identity(c, inputs);
  d.plan.normalize = c.key.normalize;
  // A new confirming state keeps its forms' origins (a state's own
  // setting is adopted from its header below).
  d.plan.origins = !c.state_dir.empty() && c.key.confirm_jaccard > 0.0;
  try {
    if (c.state_dir.empty()) {
      const OutputCheck check = prepare_output_dir(c.output_dir, input_args, inputs, c.overwrite);
      if (!check.error.empty()) return refuse(check.error, check.exit_code);
      return d;
    }
    const StartInputs in{c, input_args, inputs, fs::path(c.state_dir)};
    fs::create_directories(in.state);
    d.plan.candidates = io::resume_candidates(in.state);
    std::string unreadable;
    const std::optional<io::CheckpointSummary> summary =
        newest_readable(in.state, d.plan.candidates, unreadable);
    if (!d.plan.candidates.empty() && !summary) {
      return refuse("no checkpoint in '" + in.state.string() + "' can be read:" + unreadable,
                    kExitFailure);
    }
    if (!summary) return decide_without_checkpoint(in, std::move(d));
    return decide_from_checkpoint(in, *summary, std::move(d));
  } catch (const std::exception& e) {
    return refuse(std::string("cannot prepare the run: ") + e.what(), kExitFailure);
  }
}

}  // namespace bloomshard::app
