// This rank's share of the corpus: reads its files in order, turns lines
// into keys (extract, normalize, encode, digest, hash: core::KeyBuilder), sends bad lines to the
// reject file, writes the kept records of each round to the mirrored outputs, and at a checkpoint
// cut makes its outputs durable and reports where it stands. Under --unit paragraph a record's
// keys are its paragraphs' and its output is decided by app/feed/paragraph_records.hpp; under
// --unit minhash its keys are its text's band keys (app/feed/minhash_records.hpp). Not
// collective; one per rank.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/feed/annotation_writer.hpp"
#include "app/feed/minhash_records.hpp"
#include "app/feed/paragraph_records.hpp"
#include "app/feed/skipped_inputs.hpp"
#include "app/options/dedup_options.hpp"  // callers build the feed from a DedupConfig
#include "app/options/feed_options.hpp"
#include "app/options/key_options.hpp"
#include "app/options/option_groups.hpp"
#include "app/options/output_options.hpp"
#include "app/round/retracted_paragraphs.hpp"
#include "app/round/round_batch.hpp"
#include "app/split/block_place.hpp"
#include "bloomshard/core/key_builder.hpp"
#include "core/order/output_offset_map.hpp"
#include "io/output/output_writer.hpp"
#include "io/output/positional_output.hpp"
#include "io/output/reject_writer.hpp"
#include "io/records/key_extractor.hpp"
#include "io/records/line_ranges.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {

/// Reject reason for keys that are not UTF-8 under a policy that needs it.
inline constexpr std::string_view kRejectInvalidUtf8 = "invalid UTF-8 for normalization";

/// The option groups an InputFeed reads: the feed (batch, line limit, what
/// a broken input does), the output (dir, filter or annotate) and the keys.
/// A DedupConfig or a QueryFeed converts to it.
using InputFeedConfig = OptionGroups<FeedOptions, OutputOptions, KeyOptions>;

/// The key extractor's options for `keys` and one input format: a digest
/// key has a fixed size, so no field is too long for it; without a digest
/// each field is held to --max-key-bytes (and a tuple as a whole).
/// `stream_long_values` says whether a long JSON string key may be digested
/// chunk by chunk from its escaped bytes (the feed allows it for one-field
/// record keys under a streaming scheme).
io::KeyExtractorOptions extractor_options(const KeyOptions& keys, io::Format format,
                                          bool stream_long_values);

/// Counters of the read side (this rank, this process).
struct FeedCounters {
  std::uint64_t records = 0;  ///< lines read, rejects included
  std::uint64_t rejected = 0;
  std::uint64_t kept = 0;
  std::uint64_t dropped = 0;
  /// On-disk bytes consumed (compressed bytes for compressed inputs):
  /// finished files whole, the open one up to its reader's position
  /// (RecordReader::on_disk_offset), so progress moves from the first
  /// round; never decreases. Counts a resumed input from its start.
  std::uint64_t input_bytes_done = 0;
  std::uint64_t output_bytes = 0;  ///< uncompressed bytes written
  /// Input bytes this rank consumed in this segment (decompressed bytes for
  /// compressed inputs), counted as each task ends: read_bytes_by_rank.
  std::uint64_t read_bytes = 0;
  /// Kept records (and their bytes) that the join of a split input or the
  /// end pass left out (in annotate mode: flagged a duplicate), retracted
  /// for an earlier copy (core/order/file_order.hpp). kept,
  /// dropped and output_bytes already count them as left out; the join is
  /// done by another rank than the one that wrote them, so a rank's kept
  /// may fall below zero modulo 2^64: only sums over ranks are meaningful.
  std::uint64_t retracted = 0;
  /// Later copies of a key in one batch of split-input keys that stayed
  /// home (app/split/order_tag_wire.hpp combine_in_file_order): duplicates the
  /// router did not see, counted with its batch_duplicates.
  std::uint64_t combined_in_file_order = 0;
};

/// One input given to this rank, and where to start it: a fresh file has a
/// zero cursor and output length; a resumed one continues at its cursor and
/// appends to its output truncated to output_length.
struct FileTask {
  io::InputFile file;
  std::size_t index = 0;  ///< position in the job's input list
  io::InputCursor cursor;
  std::uint64_t output_length = 0;
  std::optional<std::uint64_t> prefix_digest;  ///< of the records before cursor, if known
  /// Set for one range of a split input: the task reads only
  /// `bytes`; range 0 writes the mirrored output, range k > 0 an output part
  /// and a reject part (app/split/split_inputs.hpp) whose committed length is
  /// `reject_length`.
  std::optional<std::size_t> range;
  io::ByteRange bytes;
  std::uint64_t reject_length = 0;
  /// Set for one block of the lockstep layout (app/split/lockstep_layout.hpp):
  /// its global number; the task reads the lines that start in `bytes` and
  /// its kept lines are staged for write_staged(), not appended.
  std::optional<std::size_t> block;
};

/// Where one file stands at a cut.
struct FileState {
  std::size_t index = 0;
  io::InputCursor cursor;
  bool done = false;
  std::uint64_t output_length = 0;
  std::optional<std::uint64_t> prefix_digest;  ///< RecordReader::prefix_digest() at cursor
  std::optional<std::size_t> range;            ///< FileTask::range
  std::uint64_t reject_length = 0;             ///< committed bytes of a range's reject part
};

class InputFeed {
 public:
  /// `tasks` are this rank's inputs in reading order; `reject_path` is this
  /// rank's reject file (created empty). With `durable`, outputs are fsynced
  /// when closed (a checkpoint may count on them) and the reader keeps the
  /// prefix digest a checkpoint saves; without it FileState::prefix_digest
  /// is 0 (nothing saves it). Throws io::OutputError.
  InputFeed(const InputFeedConfig& config, std::vector<FileTask> tasks,
            const std::filesystem::path& reject_path, bool durable);

  /// Reads records into `batch` (cleared first) until about batch_bytes
  /// were taken or this rank's input ends; in the lockstep layout (block
  /// tasks), exactly the next block, whatever its size (none once all are
  /// read). An input that cannot be read on
  /// is held at its last good record (its output keeps what came before,
  /// and closes without being done); under --on-input-error fail the
  /// io::InputError is rethrown, under skip fill() returns early with the
  /// batch so far and the hold waits for resolve_held_input().
  void fill(RoundBatch& batch);

  /// True while an input broke under skip and the job has not decided yet.
  [[nodiscard]] bool skip_pending() const noexcept {
    return held_.has_value() && config_.on_input_error == OnInputError::kSkip;
  }
  /// After the round's reduction: `skip` marks the held input done and
  /// skipped (reading goes on with the next one); otherwise reading stops
  /// and the held input stays unfinished at its cursor, for a later resume.
  void resolve_held_input(bool skip);
  /// Inputs this rank skipped in this segment.
  [[nodiscard]] std::span<const SkippedInput> skipped() const noexcept { return skipped_; }

  /// Writes the kept records of `batch` (verdicts in batch order), or in
  /// annotate mode every line read in the round, and closes the outputs of
  /// files read to their end. `answers`: in annotate mode with
  /// --confirm-jaccard, the owners' core::BandMatch of each key (else empty).
  void write_kept(const RoundBatch& batch, std::span<const core::Verdict> verdicts,
                  std::span<const std::uint8_t> answers = {});

  /// The lockstep layout: the block taken by the last fill() (none: none
  /// left), the bytes write_kept() staged for it and the lines read.
  [[nodiscard]] StagedBlock staged() const noexcept {
    return {staged_block_, staged_bytes_, staged_lines_};
  }
  /// The lockstep layout, after write_kept() and before the next fill():
  /// writes the staged lines at `place.offset` of the block's mirrored
  /// output (created empty by the job), and the block's rejects, held back
  /// until now, with their line numbers in the input (block line +
  /// place.lines_before; 0, unknown, after a block of the input broke).
  /// Throws io::OutputError.
  /// The write runs in the background (the next round reads on; `batch`'s
  /// buffers, which hold the lines, are kept until it ends); the next
  /// write_staged(), wait_for_writes() or finish() waits for it.
  void write_staged(const BlockPlace& place, const RoundBatch& batch);
  /// Waits for the lockstep layout's write in the background (before
  /// anything reads the outputs). Throws its io::OutputError.
  void wait_for_writes() { block_output_.wait(); }

  /// At a cut (after write_kept): ends the open output's frame, flushes it
  /// and the reject file (and fsyncs them when durable), and returns every
  /// task's state. In the lockstep layout it first waits for the write in
  /// the background and, when durable, fsyncs every output this rank wrote
  /// a block to since the last commit (the block states it returns are not
  /// a cut: LockstepOutputs::cut_states() is). Throws io::OutputError.
  [[nodiscard]] std::vector<FileState> commit();
  /// Committed length of the reject file (valid after commit()).
  [[nodiscard]] std::uint64_t reject_length() const noexcept { return reject_length_; }

  /// Closes every output and the reject file. Throws io::OutputError.
  void finish();

  /// True once every file was read to its end (or reading failed).
  [[nodiscard]] bool exhausted() const noexcept { return next_ >= tasks_.size() && !open_; }
  /// Stops reading after an input error.
  void abandon() noexcept;

  [[nodiscard]] const FeedCounters& counters() const noexcept { return counters_; }
  /// --unit paragraph counters (all zero under --unit record).
  [[nodiscard]] ParagraphCounters paragraph_counters() const noexcept {
    return paragraphs_ ? paragraphs_->counters() : ParagraphCounters{};
  }
  /// --unit minhash counters (all zero under the other units).
  [[nodiscard]] MinHashCounters minhash_counters() const noexcept {
    return minhash_ ? minhash_->counters() : MinHashCounters{};
  }
  /// Rejects of this segment by reason, the reject parts of ranges included.
  [[nodiscard]] io::RejectCounts reject_counts() const;

  /// Tags every key it adds with its order tag (core/order/file_order.hpp): a
  /// key from a split input gets its input and record offset, any other 0.
  /// Call before the first fill(); --unit record only.
  void tag_keys_in_file_order() noexcept { tag_keys_ = true; }
  /// Tags every key with its place in the one order of all inputs (input
  /// index and record offset; decompressed offset for .gz/.zst), for
  /// OrderScope::kAcrossInputs. Call before the first fill(); --unit record only.
  void tag_keys_in_input_order() noexcept {
    tag_keys_ = true;
    tag_scope_ = core::OrderScope::kAcrossInputs;
  }
  /// The order_position() of the first record of this rank's tasks not read
  /// yet (~0 once all are read): every record of this rank before it was
  /// handed to a round. Tasks are read in the one order, so a minimum over
  /// the ranks after a round is a watermark (FileOrder::forget_before).
  [[nodiscard]] std::uint64_t unread_position() const;
  /// Adds retracted kept copies (order tags) decided by this rank as owner
  /// in this segment; merge_cut() saves them in the manifest.
  void note_retracted(std::span<const core::OrderTag> tags) {
    retracted_.insert(retracted_.end(), tags.begin(), tags.end());
  }
  /// The key hash fill() gives `line` (terminator included or not) of an
  /// input of `format` under --unit record, or nullopt for a line fill()
  /// rejects. For rebuilding an owner's FileOrder at a resume.
  [[nodiscard]] std::optional<core::KeyHash> key_hash_of(io::Format format, std::string_view line);
  /// Under --unit paragraph: the text field's value (unescaped; a plain
  /// line's text is the line) of `line` (terminator included or not), or
  /// nullopt when fill() rejects the line before splitting it (the
  /// paragraph checks of ParagraphRecords::add are the caller's). For the
  /// end pass that cuts retracted paragraphs.
  [[nodiscard]] std::optional<std::string> paragraph_text_of(io::Format format,
                                                             std::string_view line);
  /// The offset map of input `input_index`'s output (core/order/
  /// output_offset_map.hpp), or null: kept only for an uncompressed whole
  /// input of a run tagged in input order (tag_keys_in_input_order()),
  /// --unit record, filter mode, whose output this process wrote whole from
  /// its first byte (not resumed) and closed done, every kept record placed
  /// by its tag, within kOutputOffsetMapMaxBytes for the rank's maps. For
  /// the end pass (app/round/retracted_line_place.hpp).
  [[nodiscard]] const core::OutputOffsetMap* offset_map(std::size_t input_index) const noexcept;
  /// Bytes the offset maps hold now.
  [[nodiscard]] std::size_t offset_map_bytes() const noexcept { return offset_map_bytes_; }
  /// Writes the compressed outputs of this rank's whole, fresh inputs in
  /// filter mode stored (io::OutputOptions::stored: gzip members of stored
  /// blocks, zstd frames of raw blocks), for the end pass to compress once
  /// at the run's level: in input order on more than one rank most outputs
  /// get retractions and are compressed again there, so compressing them in
  /// the rounds as well would do that work twice. The end pass finds them
  /// by their first block (io::output_starts_stored), whatever attempt
  /// wrote them: a resumed output continues at its codec's level, and is
  /// still compressed again whole (app/round/retracted_copies.hpp). Call
  /// before the first fill().
  void defer_compression() noexcept { defer_compression_ = true; }
  /// This segment's retractions decided by this rank, in decision order.
  [[nodiscard]] std::span<const core::OrderTag> retracted() const noexcept { return retracted_; }
  /// Adds combine_in_file_order()'s count of this round.
  void count_combined(std::uint64_t keys) noexcept { counters_.combined_in_file_order += keys; }
  /// The join left `records` retracted kept records (`bytes` bytes) out of
  /// a joined output: they count as dropped.
  void count_left_out(std::uint64_t records, std::uint64_t bytes) noexcept {
    counters_.kept -= records;  // modulo 2^64, see FeedCounters::retracted
    counters_.dropped += records;
    counters_.output_bytes -= bytes;
    counters_.retracted += records;
  }

  /// The end pass cut retracted paragraphs out of written records
  /// (app/round/retracted_paragraphs.hpp): the dropped lines count as
  /// dropped, the lines it touched as retracted, and the paragraph
  /// counters move by its differences.
  void count_recut_paragraphs(const ParagraphRecut& recut) noexcept;

  /// The end pass flagged `records` retracted kept records' attribute lines
  /// a duplicate (annotate mode), the attribute bytes growing by `growth`:
  /// they count as dropped.
  void count_flagged(std::uint64_t records, std::int64_t growth) noexcept {
    counters_.kept -= records;  // modulo 2^64, see FeedCounters::retracted
    counters_.dropped += records;
    counters_.output_bytes += static_cast<std::uint64_t>(growth);  // modulo 2^64
    counters_.retracted += records;
  }

  /// Appends finished reject lines (JSONL) to this rank's reject file: the
  /// rejects of a joined range with absolute line numbers (app/range_join).
  /// They were counted when first written. Throws io::OutputError.
  void append_reject_lines(std::string_view lines) { rejects_.append_lines(lines); }

 private:
  bool open_next_file();
  bool open_block();
  void close_finished_outputs();
  void take(const io::Record& record, RoundBatch& batch);
  void take_lines(std::span<const io::Record> records, RoundBatch& batch);
  void take_fields(const io::Record& record, const io::FieldsResult& result, RoundBatch& batch);
  // The order tag of `record`'s key in a run that tags its keys (0 for a
  // record past the tag's limits); nullopt when keys are not tagged.
  [[nodiscard]] std::optional<core::OrderTag> record_tag(const io::Record& record) const;
  void reject(const io::Record& record, std::string_view reason,
              std::optional<std::span<const std::string_view>> values);
  std::string_view stream_key(std::string_view escaped);
  void hold(const io::InputError& e);
  void write_annotations(const RoundBatch& batch, std::span<const core::Verdict> verdicts,
                         std::span<const std::uint8_t> answers);
  void write_near_duplicates_removed(const RoundBatch& batch,
                                     std::span<const core::Verdict> verdicts);
  void take_minhash(const io::Record& record, std::string_view text, RoundBatch& batch);
  void fill_batch(RoundBatch& batch);
  void finish_input_bytes(const FileTask& task);
  void note_offset(std::uint32_t slot, const RoundBatch& batch, std::size_t i,
                   std::uint64_t length);
  void drop_offset_map(std::size_t slot) noexcept;
  void count_open_input_bytes();

  InputFeedConfig config_;
  bool durable_;
  std::vector<FileTask> tasks_;
  std::vector<FileState> states_;   // per task
  std::size_t next_ = 0;            // next task to open
  bool open_ = false;               // reader holds tasks_[next_ - 1]
  std::size_t first_unclosed_ = 0;  // outputs below this task are closed
  io::RecordReader reader_;
  // fill(): lines peeked from the reader, parsed many at a time (~45 KB of
  // this corpus's lines; the extractor streams up to 64 KiB per call).
  std::array<io::Record, 256> peeked_{};
  std::vector<std::string_view> lines_;  // peeked_'s lines, for the extractor
  io::KeyExtractor plain_keys_;
  io::KeyExtractor json_keys_;
  std::vector<io::OutputWriter> outputs_;  // one per task
  io::RejectWriter rejects_;
  std::vector<std::optional<io::RejectWriter>> range_rejects_;  // per task; ranges k > 0 only
  std::vector<io::RejectCounts> range_reject_counts_;           // of closed reject parts
  std::uint64_t reject_length_ = 0;
  core::KeyBuilder keys_;                       // field values -> key bytes under config_.key
  std::string unescape_chunk_;                  // stream_key's chunk of a long value
  std::optional<ParagraphRecords> paragraphs_;  // --unit paragraph only
  std::optional<MinHashRecords> minhash_;       // --unit minhash only
  std::vector<core::Verdict> record_verdicts_;  // annotate mode of minhash: one per record
  std::vector<std::optional<NearMatch>> near_matches_;  // and, confirming, its best match
  FeedCounters counters_;
  std::uint64_t finished_input_bytes_ = 0;  // on-disk bytes of tasks done (read or skipped)
  std::uint64_t open_input_bytes_ = 0;      // of the task read last, up to its position
  bool positioned_ = false;          // the reader stands in tasks_[next_ - 1] (open, skipped to)
  std::optional<std::size_t> held_;  // task whose read broke, not done
  std::string held_reason_;
  std::vector<SkippedInput> skipped_;
  std::optional<RoundAnnotations> annotations_;  // annotate mode: this round's lines
  std::vector<std::string_view> pieces_;         // write_kept's runs of one output
  bool tag_keys_ = false;                        // tag_keys_in_file_order() or _input_order()
  core::OrderScope tag_scope_ = core::OrderScope::kWithinInput;
  core::OrderTag tag_base_ = 0;            // of the open task: 0 if it is not a range
  std::vector<core::OrderTag> retracted_;  // note_retracted()
  // Per task: its output's offset map while it is kept (offset_map()).
  std::vector<std::optional<core::OutputOffsetMap>> offset_maps_;
  std::size_t offset_map_bytes_ = 0;  // their memory_bytes(), summed
  bool defer_compression_ = false;    // defer_compression()
  // The lockstep layout (tasks are blocks): one block a fill(), its kept
  // lines staged in pieces_ until write_staged() places them.
  bool lockstep_ = false;
  bool block_taken_ = false;                 // this fill() opened its block
  std::optional<std::size_t> staged_block_;  // the block of the last fill()
  std::size_t staged_slot_ = 0;              // and its task
  std::uint64_t staged_bytes_ = 0;
  std::uint64_t staged_lines_ = 0;  // lines of the block read, kUnknownLines if it broke
  // A block's rejects, held until write_staged() knows their line numbers.
  struct HeldReject {
    std::string file;
    std::uint64_t line = 0;  // from the block's first line
    std::string reason;
    std::string raw;
    bool too_long = false;
  };
  std::vector<HeldReject> held_rejects_;
  std::uint64_t block_lines_before_ = 0;  // write_staged()'s place.lines_before
  io::PositionalOutput block_output_;     // the output of the last block written
  std::size_t block_output_input_ = 0;
  // Durable runs: the outputs this rank wrote blocks to since the last
  // commit(), which syncs them (several ranks write one file: each syncs
  // its own writes).
  std::vector<std::filesystem::path> unsynced_outputs_;
};

}  // namespace bloomshard::app
