// The run manifest: what a checkpoint generation says about the job besides
// the filter — every input with its cursor and its output's committed
// length, the reject files with theirs, and the job-wide counters. Stored as
// JSON in the checkpoint's /manifest_json dataset (docs/checkpoint-format.md)
// so `h5dump` shows it as text.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/order/file_order.hpp"
#include "io/records/input_file.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {

/// One line-aligned byte range of a split input at the cut
/// (io/records/line_ranges.hpp): read as its own task, by any rank.
struct RangeProgress {
  std::uint64_t begin = 0;  ///< byte offset of its first line
  std::uint64_t end = 0;    ///< byte offset after its last line
  /// Records of this range consumed (line numbers count from its start) and
  /// the absolute byte offset after them; {0, begin} before it is read.
  io::InputCursor cursor;
  bool done = false;                ///< read to `end`, output closed
  std::uint64_t output_length = 0;  ///< committed bytes of its output part
  std::uint64_t reject_length = 0;  ///< committed bytes of its reject part (ranges k > 0)
  std::optional<std::uint64_t> prefix_digest;  ///< of the range's records before cursor
  /// Byte offsets (absolute, ascending) of records this range kept and wrote
  /// whose key turned out to have an earlier copy in another range of the
  /// input (core/order/file_order.hpp): the join leaves them out. Ranges k > 0
  /// only; offsets inside [begin, cursor offset).
  std::vector<std::uint64_t> retracted;
};

/// A digest of bounded windows of an input's raw (compressed, for .gz/.zst)
/// bytes, taken when a checkpoint is written (app/feed/input_windows.hpp): the
/// file's first bytes and the bytes just before `end`. A resume compares it
/// where size and mtime alone would call the file unchanged.
struct InputWindow {
  std::uint64_t end = 0;     ///< raw byte offset the second window ends at
  std::uint64_t digest = 0;  ///< XXH3-64 of both windows' bytes
  friend bool operator==(const InputWindow&, const InputWindow&) = default;
};

/// One input at the cut.
struct InputProgress {
  io::InputFile file;
  io::InputCursor cursor;           ///< records consumed, decompressed offset, frame start
  bool done = false;                ///< read to its end, output closed
  std::uint64_t output_length = 0;  ///< committed bytes of the mirrored output
  /// Non-empty: the input broke at `cursor` (--on-input-error skip) and the
  /// rest of it, from record cursor.records + 1 at decompressed byte
  /// cursor.decompressed_offset, was skipped for this reason. Such an input
  /// is done: no resume reads it again.
  std::string skipped;
  /// RecordReader::prefix_digest() at `cursor` (absent in manifests of
  /// older versions): lets --revalidate-inputs check a changed input.
  std::optional<std::uint64_t> prefix_digest;
  /// Non-empty: the input is split and read as these ranges, in
  /// file order; `done` then means every range was read and the parts were
  /// joined into the mirrored output, whose joined length `output_length`
  /// is (cursor and prefix_digest are not used).
  std::vector<RangeProgress> ranges;
  /// Window digest of a started input (absent before it is started, and in
  /// manifests without `input_windows`).
  std::optional<InputWindow> window = std::nullopt;
};

/// One reject file (name inside OUTPUT/_rejects) with its committed length.
struct RejectSegment {
  std::string name;
  std::uint64_t length = 0;
};

/// Job-wide counters, summed over ranks and over earlier segments of a
/// resumed run.
struct JobCounters {
  std::uint64_t records = 0;
  std::uint64_t kept = 0;
  std::uint64_t dropped = 0;
  std::uint64_t rejected = 0;
  std::uint64_t decided = 0;
  std::uint64_t tier1_absent = 0;
  std::uint64_t tier1_maybe = 0;
  std::uint64_t tier2_lookups = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t false_positives = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t bytes_exchanged = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t rounds = 0;
  // Added after format 1 shipped: absent in older manifests, read as 0.
  std::uint64_t batch_duplicates = 0;  ///< later copies in one rank's batch (never routed)
  std::uint64_t subrounds = 0;         ///< exchanges of all rounds (> rounds: split rounds)
  /// Records of split inputs written as kept, then left out by the join for
  /// an earlier copy in the same input (core/order/file_order.hpp; in `dropped`).
  std::uint64_t retracted = 0;
  // --unit paragraph (app/feed/paragraph_records.hpp); absent
  // in older manifests, read as 0.
  std::uint64_t paragraphs = 0;
  std::uint64_t paragraphs_keyed = 0;
  std::uint64_t paragraphs_removed = 0;
  std::uint64_t records_changed = 0;
  std::uint64_t records_dropped = 0;
  std::uint64_t paragraph_bytes_removed = 0;
  // --unit minhash (app/feed/minhash_records.hpp); absent in older
  // manifests, read as 0.
  std::uint64_t minhash_records = 0;
  std::uint64_t minhash_empty_texts = 0;
  std::uint64_t near_duplicates = 0;
  std::uint64_t band_keys = 0;
  std::uint64_t band_keys_new = 0;
  std::uint64_t minhash_candidates = 0;  ///< records with a band hit
  std::uint64_t confirmed_hits = 0;      ///< band hits that count
  std::uint64_t unconfirmed_hits = 0;    ///< band hits below --confirm-jaccard
  std::map<std::string, std::uint64_t> rejected_by_reason;
  JobCounters& operator+=(const JobCounters& o);
};

/// One numeric counter of JobCounters: its manifest name, its member, how
/// ranks combine it, and whether a manifest may lack it.
struct CounterField {
  std::string_view name;
  std::uint64_t JobCounters::*member;
  bool same_on_every_rank;  ///< combined by max (rounds), not summed
  bool optional;            ///< added after format 1 shipped: absent reads as 0
};

/// Every numeric counter, once: the manifest's JSON (both ways), operator+=
/// and the reduction over ranks walk this table, so a new counter is one
/// line here (plus the metrics JSON, which orders its fields for readers).
inline constexpr CounterField kCounterFields[] = {
    {"records", &JobCounters::records, false, false},
    {"kept", &JobCounters::kept, false, false},
    {"dropped", &JobCounters::dropped, false, false},
    {"rejected", &JobCounters::rejected, false, false},
    {"decided", &JobCounters::decided, false, false},
    {"tier1_absent", &JobCounters::tier1_absent, false, false},
    {"tier1_maybe", &JobCounters::tier1_maybe, false, false},
    {"tier2_lookups", &JobCounters::tier2_lookups, false, false},
    {"duplicates", &JobCounters::duplicates, false, false},
    {"false_positives", &JobCounters::false_positives, false, false},
    {"output_bytes", &JobCounters::output_bytes, false, false},
    {"bytes_exchanged", &JobCounters::bytes_exchanged, false, false},
    {"payload_bytes", &JobCounters::payload_bytes, false, false},
    {"rounds", &JobCounters::rounds, true, false},
    {"batch_duplicates", &JobCounters::batch_duplicates, false, true},
    {"subrounds", &JobCounters::subrounds, true, true},
    {"retracted", &JobCounters::retracted, false, true},
    {"paragraphs", &JobCounters::paragraphs, false, true},
    {"paragraphs_keyed", &JobCounters::paragraphs_keyed, false, true},
    {"paragraphs_removed", &JobCounters::paragraphs_removed, false, true},
    {"records_changed", &JobCounters::records_changed, false, true},
    {"records_dropped", &JobCounters::records_dropped, false, true},
    {"paragraph_bytes_removed", &JobCounters::paragraph_bytes_removed, false, true},
    {"minhash_records", &JobCounters::minhash_records, false, true},
    {"minhash_empty_texts", &JobCounters::minhash_empty_texts, false, true},
    {"near_duplicates", &JobCounters::near_duplicates, false, true},
    {"band_keys", &JobCounters::band_keys, false, true},
    {"band_keys_new", &JobCounters::band_keys_new, false, true},
    {"minhash_candidates", &JobCounters::minhash_candidates, false, true},
    {"confirmed_hits", &JobCounters::confirmed_hits, false, true},
    {"unconfirmed_hits", &JobCounters::unconfirmed_hits, false, true},
};

/// An output that the end pass of the one input order cut into
/// `<output>.retracted-tmp` (`length` bytes) before a checkpoint recorded
/// it; the rename over the output may not have happened yet.
struct CutOutput {
  std::size_t input = 0;
  std::uint64_t length = 0;
  friend bool operator==(const CutOutput&, const CutOutput&) = default;
};

/// What the owners of a `--kept-copy first` run know beyond tier 2 at the
/// cut (docs/checkpoint-format.md "input_order"): its presence marks the
/// run's rule (a manifest without it keeps the arrival order).
struct InputOrderProgress {
  /// Where the saved memory is: 3 (what this build writes) the kept copies
  /// and the retractions both rows of the generation (/input_order/rows,
  /// /input_order/retracted_rows), `kept_rows` and `retracted_rows` of them,
  /// `kept` and `retracted` empty in the manifest (a resume fills them with
  /// the owned slices' rows); 2 the kept copies rows, the retractions the
  /// manifest's `retracted` list; 1 both lists in the manifest.
  std::uint64_t version = 3;
  /// Version 2 and 3: the kept-copy rows the generation holds, all ranks together.
  std::uint64_t kept_rows = 0;
  /// Version 3: the retraction rows the generation holds, all ranks together.
  std::uint64_t retracted_rows = 0;
  /// The watermark (core::order_position) every rank had agreed on.
  std::uint64_t watermark = 0;
  /// Version 1: every owner's remembered kept copies (core::FileOrder::
  /// remembered()), sorted by tag; a resume gives each to the owner of its
  /// hash. Version 2, 3: empty in the manifest; at a resume, this rank's rows.
  std::vector<core::CrossInputRetraction> kept;
  /// Kept copies retracted for an earlier copy in another input, not yet
  /// left out of their outputs (the end pass does), sorted by tag. Version
  /// 3: empty in the manifest; at a resume, this rank's rows. A resume gives
  /// each to the owner of its hash.
  std::vector<core::CrossInputRetraction> retracted;
  /// The end pass in flight: the outputs cut into temporary files (their
  /// inputs' output_length is the cut length already); a resume renames
  /// those still there and checks the others. Ascending input.
  std::vector<CutOutput> cut_outputs;
  friend bool operator==(const InputOrderProgress&, const InputOrderProgress&) = default;
};

struct RunManifest {
  std::string run_id;
  std::string output_dir;  ///< absolute
  /// app::run_mode_label of the run; "filter" when the manifest
  /// has no "mode" (every manifest before it, and filter runs still).
  std::string mode = "filter";
  std::vector<InputProgress> inputs;
  std::vector<RejectSegment> rejects;
  JobCounters counters;
  /// Version of the inputs' window digests (kInputWindowsVersion in
  /// app/feed/input_windows.hpp); 0 for a manifest written before them, whose
  /// inputs a resume checks by size and mtime only.
  std::uint32_t input_windows_version = 0;
  /// Bytes per window the digests were taken with (with the version).
  std::uint64_t input_window_bytes = 0;
  /// Which run of its state this is: 0 for the run that created it, one
  /// more for each incremental run (kept by a resume). A position names an
  /// input of its own run, so a state's form origins pair the two
  /// (docs/near-duplicates.md section 6). Written only when nonzero
  /// ("run_ordinal"); absent: 0.
  std::uint64_t run_ordinal = 0;
  /// Present for a run that keeps the first copy in input order
  /// (`--kept-copy first`); "input_order", absent in every other manifest.
  std::optional<InputOrderProgress> input_order;
};

/// True when any input of the manifest is split into ranges.
[[nodiscard]] bool has_split_inputs(const RunManifest& m);
/// Whether `m` records the end pass's cut of input `input` with its rename
/// perhaps still to do (input_order.cut_outputs): until the rename the
/// output's committed bytes are in its temporary file, not in the output
/// (app/round/retracted_line_cut.hpp cut_output_temp_path).
[[nodiscard]] bool cut_recorded(const RunManifest& m, std::size_t input);
/// True when any range of the manifest has retracted records (saved with
/// the ` split-inputs/v2` mark, which builds before it refuse).
[[nodiscard]] bool has_retracted_records(const RunManifest& m);

/// JSON text of the manifest.
[[nodiscard]] std::string manifest_to_json(const RunManifest& m);

/// Parses manifest_to_json's output. Throws std::runtime_error naming the
/// missing or malformed field.
[[nodiscard]] RunManifest manifest_from_json(std::string_view json);

}  // namespace bloomshard::app
