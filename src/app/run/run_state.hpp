// How a dedup run starts, given its --state dir: fresh, resumed from the
// newest checkpoint that verifies, incremental (a finished filter plus new
// inputs), or already finished. Rank 0 decides from the files alone (the
// run identity file and the checkpoint headers) and prepares the output
// dir; every rank then follows the plan. Nothing is guessed: a state that
// belongs to another run, another hash scheme, normalization, key field or
// format version is refused with a message naming what differs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "app/options/dedup_options.hpp"
#include "app/run/run_manifest.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

enum class StartKind : std::uint8_t {
  kFresh = 0,        ///< no usable checkpoint: start from scratch
  kResume = 1,       ///< unfinished run of the same inputs: continue it
  kIncremental = 2,  ///< finished filter + new inputs: dedup them against history
  kFinished = 3,     ///< this run already finished: nothing to do
};

struct StartPlan {
  StartKind kind = StartKind::kFresh;
  std::string run_id;
  std::uint32_t num_slices = 0;  ///< of the checkpoints (resume, incremental)
  /// The rules the keys are normalized with: the job's, or the state's
  /// version of the same policy (see --normalize in docs/keys.md).
  core::NormalizePolicy normalize = core::NormalizePolicy::kNone;
  /// --confirm-jaccard with --state: the state's forms keep their origins
  /// (core::KeyScheme::confirm_origins): true for a new state, the saved
  /// scheme's for a resume or an incremental run.
  bool origins = false;
  std::vector<std::uint64_t> candidates;  ///< generations to try, newest first
  /// The only checkpoints this start may load (resume, incremental): those
  /// of run `base_run_id` with finished flag `base_finished`, i.e. what the
  /// newest readable header said. Fallback never adopts another run's state.
  std::string base_run_id;
  bool base_finished = false;
};

/// Why generation `g` whose header names run `run_id` (finished or not)
/// may not be loaded under `plan`, or empty if it may.
[[nodiscard]] std::string foreign_generation(const StartPlan& plan, std::uint64_t g,
                                             const std::string& run_id, bool finished);

/// The first line of an error text, with "(+N more lines)" when it had more:
/// a fallback explains itself in one line, not thousands.
[[nodiscard]] std::string one_line(std::string_view text);

/// Result of rank 0's decision: a plan, or an error with its exit code.
struct StartDecision {
  StartPlan plan;
  std::string error;
  int exit_code = 0;
};

/// Name of the run identity file in the state dir, written before any
/// output so a run killed before its first checkpoint knows its outputs.
inline constexpr const char* kRunIdentityName = "RUN.json";

/// The normalization identity stored in checkpoints, e.g.
/// "nfc/v1 unicode 15.0.0".
[[nodiscard]] std::string normalization_identity(const DedupConfig& config);

/// Deterministic identity of a run: its inputs (path, size, mtime), output
/// dir, key field, normalization and hash seed.
[[nodiscard]] std::string run_identity(const DedupConfig& config,
                                       std::span<const io::InputFile> inputs);

/// Rank 0 only: decides how to start and prepares the output dir (and the
/// state dir's identity file). Never throws for user errors.
[[nodiscard]] StartDecision decide_start(const DedupConfig& config,
                                         std::span<const std::filesystem::path> input_args,
                                         std::span<const io::InputFile> inputs);

/// How today's inputs differ from those a checkpoint describes, and
/// whether the run may go on (docs/inputs.md): an input removed before it
/// was started leaves the run; one removed while unfinished counts what was
/// read and is recorded as skipped; one that changed before it was started
/// is read with its new content. A started input (finished or not) that
/// changed (size or mtime) or was replaced (same size and mtime, other
/// window digest) is a refusal naming it and what changed, unless
/// revalidated; so is a new input, and any change of a split input.
struct InputChanges {
  std::string refusal;             ///< empty: the run may go on
  std::vector<std::string> notes;  ///< one line per accepted change
};

/// Checks that a changed input still starts with the records a run read
/// from it: "" if so, else why not (--revalidate-inputs).
using RevalidateFn = std::function<std::string(const InputProgress&, const io::InputFile&)>;

/// Checks that an input of unchanged size and mtime still has the saved
/// window digest: "" if so, else what differs (app/feed/input_windows.hpp).
using WindowCheckFn = std::function<std::string(const InputProgress&, const io::InputFile&)>;

/// Applies the accepted changes to `m` (its inputs). With `revalidate`, a
/// changed or replaced started input is accepted when it returns "": an
/// unfinished one is read on from its cursor, a finished (or skipped) one
/// becomes unfinished and its appended records are read. With `windows`,
/// every started input of unchanged size and mtime is checked with it
/// (rank 0's plan; the other ranks follow it without reading files).
[[nodiscard]] InputChanges reconcile_inputs(RunManifest& m, std::span<const io::InputFile> inputs,
                                            const RevalidateFn* revalidate = nullptr,
                                            const WindowCheckFn* windows = nullptr);

/// `ns` since the Unix epoch as UTC ISO-8601 with nanoseconds,
/// e.g. "2026-12-05T01:17:56.123456789Z".
[[nodiscard]] std::string iso_utc(std::int64_t ns);

/// How a file changed, for messages: "size 100 -> 160 bytes (grew by 60),
/// mtime 2026-...Z -> 2026-...Z".
[[nodiscard]] std::string describe_file_change(const io::InputFile& then, const io::InputFile& now);

/// Reads the first cursor.records records of `now` and compares offset and
/// prefix digest with those saved in `then` (RecordReader::prefix_digest).
[[nodiscard]] std::string revalidate_consumed_prefix(const InputProgress& then,
                                                     const io::InputFile& now);

/// Plan to bytes and back, for the broadcast to every rank.
[[nodiscard]] std::string encode_plan(const StartPlan& plan);
[[nodiscard]] StartPlan decode_plan(std::string_view bytes);

}  // namespace bloomshard::app
