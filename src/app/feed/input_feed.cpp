#include "app/feed/input_feed.hpp"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "app/split/split_inputs.hpp"
#include "bloomshard/core/normalize.hpp"
#include "core/bloom/sizing_plan.hpp"
#include "io/durable/durable_file.hpp"
#include "io/records/json_long_string.hpp"
#include "io/records/prefetch_source.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::app {
namespace {

// Pieces in which a long escaped value is unescaped into its digest.
constexpr std::size_t kUnescapeChunkBytes = std::size_t{64} << 10;

// A long JSON string key is digested from its escaped bytes, chunk by chunk,
// when the key is one field of a record under a streaming scheme (a digest,
// text none or ws, --normalize none); annotate and paragraph mode need the
// value itself and get it unescaped.
bool streams_long_values(const InputFeedConfig& config) {
  return config.key.unit == core::KeyUnit::kRecord && config.annotate.mode != RunMode::kAnnotate &&
         config.key.fields.size() == 1 && core::KeyBuilder(config.key).streams_one_value();
}

}  // namespace

io::KeyExtractorOptions extractor_options(const KeyOptions& config, io::Format format,
                                          bool stream_long_values) {
  return {.format = format,
          .key_path = config.key.fields.front(),
          // A digest key has a fixed size; a minhash text is sketched, never stored.
          .max_key_bytes = config.key.digest == core::KeyDigest::kNone &&
                                   config.key.unit != core::KeyUnit::kMinHash
                               ? config.max_key_bytes
                               : std::numeric_limits<std::size_t>::max(),
          .key_paths = config.key.fields,
          .missing_is_empty = config.key.missing == core::MissingField::kEmpty,
          .stream_long_values = stream_long_values};
}

namespace {

// `plan` counts the read-ahead the feed asks for (core/bloom/sizing_plan.hpp).
static_assert(static_cast<double>(io::kDefaultPrefetchBlocks * io::ReaderOptions{}.buffer_bytes) ==
              core::kReadAheadBytes);

// Whether the tasks are the lockstep layout's blocks. Their reads go
// without the read-ahead thread: it starts with each opened block and
// allocates its 4 MiB of buffers anew, which cost more than it saved on
// the 10M-record benchmark (read phase 1.36-1.43 s with it against
// 1.04-1.24 s without, 4 MiB blocks; docs/inputs.md "The lockstep layout").
bool reads_blocks(const std::vector<FileTask>& tasks) {
  return std::any_of(tasks.begin(), tasks.end(), [](const FileTask& t) { return t.block; });
}

// Progress counts a range of a split input by its own bytes, not the file's.
std::uint64_t on_disk_bytes(const FileTask& task) {
  return task.range || task.block ? task.bytes.end - task.bytes.begin : task.file.size;
}

}  // namespace

InputFeed::InputFeed(const InputFeedConfig& config, std::vector<FileTask> tasks,
                     const std::filesystem::path& reject_path, bool durable)
    : config_(config),
      durable_(durable),
      tasks_(std::move(tasks)),
      // Cursors and their prefix digests are saved only by a durable run. The
      // next blocks are read and decoded while the round is exchanged and
      // decided (cursors stay the consumed position).
      reader_(io::ReaderOptions{
          .max_line_bytes = config.max_line_bytes,
          .prefix_digest = durable && !reads_blocks(tasks_),  // a block's cut saves none
          .prefetch_blocks = reads_blocks(tasks_) ? 0 : io::kDefaultPrefetchBlocks}),
      plain_keys_(extractor_options(config, io::Format::kPlainLines, streams_long_values(config))),
      json_keys_(extractor_options(config, io::Format::kJsonLines, streams_long_values(config))),
      outputs_(tasks_.size()),
      // A checkpoint records the reject file's length: its entry goes first.
      rejects_(io::RejectWriter::create(reject_path, io::kDefaultMaxRawBytes,
                                        {.sync_entries = durable})),
      range_rejects_(tasks_.size()),
      keys_(config.key) {
  // 0 ("automatic") is resolved by the job, which knows the rank count.
  if (config.batch_bytes == 0) throw std::invalid_argument("InputFeed: batch_bytes is 0");
  if (config.annotate.mode == RunMode::kAnnotate) {
    annotations_.emplace(config.annotate.format, config.key.digest != core::KeyDigest::kNone);
  }
  if (config.key.unit == core::KeyUnit::kParagraph) {
    paragraphs_.emplace(config.key, config.hash_seed);
  }
  if (config.key.unit == core::KeyUnit::kMinHash) {
    // Annotate mode with confirmation names the record each match points at.
    minhash_.emplace(
        config.key, config.hash_seed,
        wire_keys_carry_positions(config.key, config.annotate.mode == RunMode::kAnnotate));
  }
  offset_maps_.resize(tasks_.size());
  lockstep_ = reads_blocks(tasks_);
  states_.reserve(tasks_.size());
  for (const FileTask& t : tasks_) {
    states_.push_back(
        {t.index, t.cursor, false, t.output_length, t.prefix_digest, t.range, t.reject_length});
  }
}

bool InputFeed::open_next_file() {
  if (next_ >= tasks_.size()) return false;
  const FileTask& task = tasks_[next_];
  if (task.block) return open_block();
  // Range k > 0 of a split input writes parts that the join puts in place.
  const bool part = task.range.value_or(0) > 0;
  const std::filesystem::path out =
      part ? range_output_path(config_.output_dir, task.file.relative_path, *task.range)
           : io::output_path_for(config_.output_dir, task.file.relative_path);
  const bool resumed = task.cursor.records > 0 ||
                       task.cursor.decompressed_offset > (task.range ? task.bytes.begin : 0);
  // The output exists from the start, so an input whose records are all
  // duplicates still has its (empty) mirror. A resumed file continues
  // after its committed length; whatever a killed run wrote past it goes.
  // A checkpoint fsyncs the outputs of a durable run: start writing them
  // back as they grow (io::OutputOptions::writeback_bytes). It records their
  // lengths too, so their entries (and new mirrored directories) are made
  // durable when they are created, once per file.
  const int level = task.file.compression == io::Compression::kGzip   ? config_.gzip_level
                    : task.file.compression == io::Compression::kZstd ? config_.zstd_level
                                                                      : 0;
  // Deferred: the end pass compresses the output once, at `level`.
  const bool stored = defer_compression_ && task.file.compression != io::Compression::kNone &&
                      !resumed && !task.range && !annotations_ && !minhash_;
  const io::OutputOptions options{.level = level == 0 ? std::nullopt : std::optional<int>(level),
                                  .writeback_bytes = durable_ ? io::kDurableWritebackBytes : 0,
                                  .sync_entries = durable_,
                                  .stored = stored};
  outputs_[next_] = resumed ? io::OutputWriter::open_for_resume(out, task.file.compression,
                                                                task.output_length, options)
                            : io::OutputWriter::create(out, task.file.compression, options);
  if (part) {
    const std::filesystem::path rejects =
        range_reject_path(config_.output_dir, task.file.relative_path, *task.range);
    range_rejects_[next_] = resumed
                                ? io::RejectWriter::open_for_resume(rejects, task.reject_length, {})
                                : io::RejectWriter::create(rejects, io::kDefaultMaxRawBytes,
                                                           {.sync_entries = durable_});
  }
  // Only an output written whole from its first byte, by the records' own
  // tags, is the input with ranges left out (offset_map()).
  drop_offset_map(next_);
  if (tag_scope_ == core::OrderScope::kAcrossInputs && !resumed && !task.range &&
      task.file.compression == io::Compression::kNone && !annotations_ && !paragraphs_ &&
      !minhash_) {
    offset_maps_[next_].emplace();
  }
  // The task counts as opened before the reader touches it, so that an
  // input that cannot be opened or resumed is held like a broken one.
  ++next_;
  open_ = true;
  positioned_ = false;
  tag_base_ = 0;
  if (tag_scope_ == core::OrderScope::kAcrossInputs) {
    // Positions of a compressed input are decompressed offsets: the same
    // in every run, whatever the frames.
    const std::uint64_t positions = task.file.compression == io::Compression::kNone
                                        ? task.file.size
                                        : core::kOrderMaxOffset + 1;
    tag_base_ = core::order_tag_base(task.index, positions, task.range.value_or(0) > 0).value_or(0);
  }
  if (task.range) {
    if (tag_scope_ == core::OrderScope::kWithinInput) {
      tag_base_ = core::order_tag_base(task.index, task.file.size, *task.range > 0).value_or(0);
    }
    reader_.open_range(task.file, task.bytes.begin, task.bytes.end);
  } else {
    reader_.open(task.file);
  }
  if (resumed) {
    reader_.skip_to(task.cursor, task.prefix_digest);
    // A saved frame start that did not work cost a re-read from byte 0.
    if (!reader_.resume_fallback().empty()) {
      std::cerr << "bloomshard dedup: warning: input '" << task.file.relative_path
                << "': " << reader_.resume_fallback() << '\n';
    }
  }
  positioned_ = true;
  return true;
}

bool InputFeed::open_block() {
  // A block of the lockstep layout: no output of its own (write_staged()
  // places its lines), no offset map (several ranks write the output), no
  // resume (runs without --state only). Its tags are its input's: the
  // owners remember every copy after the watermark (FileOrder, shared
  // inputs), since other ranks read the input's other blocks.
  const FileTask& task = tasks_[next_];
  staged_slot_ = next_;
  staged_block_ = task.block;
  block_taken_ = true;
  ++next_;
  open_ = true;
  positioned_ = false;
  tag_base_ = core::order_tag_base(task.index, task.file.size, false).value_or(0);
  reader_.open_range(task.file, task.bytes.begin, task.bytes.end);
  positioned_ = true;
  return true;
}

void InputFeed::hold(const io::InputError& e) {
  const std::size_t slot = next_ - 1;
  states_[slot].cursor = positioned_ ? reader_.cursor() : tasks_[slot].cursor;
  states_[slot].prefix_digest =
      positioned_ ? std::optional(reader_.prefix_digest()) : tasks_[slot].prefix_digest;
  counters_.read_bytes +=
      states_[slot].cursor.decompressed_offset - tasks_[slot].cursor.decompressed_offset;
  held_ = slot;
  drop_offset_map(slot);  // its output ends where the read broke
  held_reason_ = e.reason().empty() ? std::string(e.what()) : e.reason();
  open_ = false;
  positioned_ = false;
  if (lockstep_) staged_lines_ = kUnknownLines;  // the rest of the block is not read
}

void InputFeed::resolve_held_input(bool skip) {
  if (!held_) return;
  const std::size_t slot = *held_;
  held_.reset();
  if (!skip) {
    abandon();
    return;
  }
  FileState& state = states_[slot];
  state.done = true;
  io::InputCursor at = state.cursor;
  // A block's records count from its first line: the report counts from
  // the input's (the round placed the block before this decision).
  if (lockstep_) {
    at.records = block_lines_before_ == kUnknownLines ? 0 : block_lines_before_ + at.records;
  }
  skipped_.push_back({state.index, tasks_[slot].file.relative_path, at, held_reason_});
  finish_input_bytes(tasks_[slot]);
}

void InputFeed::abandon() noexcept {
  open_ = false;
  next_ = tasks_.size();
}

void InputFeed::reject(const io::Record& record, std::string_view reason,
                       std::optional<std::span<const std::string_view>> values) {
  ++counters_.rejected;
  const io::InputFile& file = tasks_[next_ - 1].file;
  const auto slot = static_cast<std::uint32_t>(next_ - 1);
  // A range k > 0 does not know its first line's number yet: its rejects
  // carry range-relative numbers until the join rewrites them.
  if (lockstep_) {  // its line number in the input is known once the round places the block
    held_rejects_.push_back({file.absolute_path.native(), record.line_number, std::string(reason),
                             std::string(record.line), record.too_long});
    return;
  }
  io::RejectWriter& to = range_rejects_[slot] ? *range_rejects_[slot] : rejects_;
  to.write(file.absolute_path.native(), record.line_number, reason, record.line, record.too_long);
  // In annotate mode a reject gets its line in the attribute file too (in
  // input order).
  if (annotations_) annotations_->add_reject(slot, file.format, record.line, values, reason);
}

void InputFeed::take(const io::Record& record, RoundBatch& batch) {
  if (record.too_long) {
    ++counters_.records;
    reject(record, io::reason::kLineTooLong, std::nullopt);
    return;
  }
  const io::InputFile& file = tasks_[next_ - 1].file;
  io::KeyExtractor& extractor = file.format == io::Format::kJsonLines ? json_keys_ : plain_keys_;
  take_fields(record, extractor.extract_fields(record.line), batch);
}

void InputFeed::take_lines(std::span<const io::Record> records, RoundBatch& batch) {
  const io::InputFile& file = tasks_[next_ - 1].file;
  io::KeyExtractor& extractor = file.format == io::Format::kJsonLines ? json_keys_ : plain_keys_;
  lines_.resize(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) lines_[i] = records[i].line;
  const std::size_t taken =
      extractor.extract_lines(lines_, [&](std::size_t i, const io::FieldsResult& result) {
        take_fields(records[i], result, batch);
        return lockstep_ || batch.bytes() < config_.batch_bytes;
      });
  reader_.consume(records.first(taken));
}

std::optional<core::OrderTag> InputFeed::record_tag(const io::Record& record) const {
  if (!tag_keys_) return std::nullopt;
  const std::uint64_t start = record.end_offset - record.line.size() - record.terminator.size();
  // Past the tag's offset bits (4 TiB) a record keeps the arrival order.
  return tag_base_ == 0 || start > core::kOrderMaxOffset ? 0 : tag_base_ | start;
}

void InputFeed::take_fields(const io::Record& record, const io::FieldsResult& result,
                            RoundBatch& batch) {
  ++counters_.records;
  if (!result.ok()) {
    reject(record, result.reject_reason, std::nullopt);
    return;
  }
  if (minhash_) {  // the text is sketched, not a key
    take_minhash(record, result.values.front(), batch);
    return;
  }
  const io::InputFile& file = tasks_[next_ - 1].file;
  const auto slot = static_cast<std::uint32_t>(next_ - 1);
  std::string_view key;
  try {
    key = result.escaped.empty() ? keys_.build(result.values) : stream_key(result.escaped.front());
  } catch (const core::InvalidUtf8Error&) {
    reject(record, kRejectInvalidUtf8, result.values);
    return;
  }
  if (paragraphs_) {
    std::string_view why;
    try {
      why = paragraphs_->add(batch, slot, record.line, record.terminator, result.values.front(),
                             file.format == io::Format::kJsonLines, record_tag(record));
    } catch (const core::InvalidUtf8Error&) {
      why = kRejectInvalidUtf8;
    }
    if (!why.empty()) {
      reject(record, why, result.values);
    } else if (annotations_) {
      annotations_->add_paragraph_record(slot, file.format, record.line);
    }
    return;
  }
  if (result.values.size() > 1 && config_.key.digest == core::KeyDigest::kNone &&
      key.size() > config_.max_key_bytes) {
    reject(record, io::reason::kKeyTooLong, result.values);  // each field fit, the tuple does not
    return;
  }
  // The line stays in the reader's buffer, which the batch keeps.
  batch.add_kept(slot, record.line, record.terminator, core::hash_key(key, config_.hash_seed), key,
                 file.format == io::Format::kJsonLines ? RoundBatch::InLineKey::kCharged
                                                       : RoundBatch::InLineKey::kFree);
  if (const std::optional<core::OrderTag> tag = record_tag(record)) batch.tag_last_key(*tag);
  if (annotations_) annotations_->add_record(slot, file.format, record.line, result.values, key);
}

namespace {

// order_position() of a record of input `index` at `offset`, clamped to the
// tag's limits (inputs beyond them keep the arrival order anyway).
std::uint64_t position_of(std::size_t index, std::uint64_t offset) {
  const std::uint64_t input = std::min<std::uint64_t>(index, core::kOrderMaxInput);
  return core::order_position(*core::order_tag_base(input, 0, false) |
                              std::min(offset, core::kOrderMaxOffset));
}

}  // namespace

void InputFeed::take_minhash(const io::Record& record, std::string_view text, RoundBatch& batch) {
  const io::InputFile& file = tasks_[next_ - 1].file;
  const std::uint64_t start = record.end_offset - record.line.size() - record.terminator.size();
  const std::string_view why = minhash_->add(
      batch, static_cast<std::uint32_t>(next_ - 1), record.line, record.terminator, text,
      file.format == io::Format::kJsonLines, position_of(tasks_[next_ - 1].index, start));
  if (!why.empty()) {
    reject(record, why, std::nullopt);
  } else if (annotations_) {
    annotations_->add_minhash_record(static_cast<std::uint32_t>(next_ - 1), file.format,
                                     record.line);
  }
}

std::uint64_t InputFeed::unread_position() const {
  // Tasks are read in list order, which is the one order: the first record
  // not read yet is at the open task's cursor, or at the next task's.
  if (open_) return position_of(tasks_[next_ - 1].index, reader_.cursor().decompressed_offset);
  if (next_ < tasks_.size() && !held_) {
    return position_of(tasks_[next_].index, tasks_[next_].cursor.decompressed_offset);
  }
  return ~std::uint64_t{0};
}

std::optional<core::KeyHash> InputFeed::key_hash_of(io::Format format, std::string_view line) {
  if (line.ends_with('\n')) line.remove_suffix(line.ends_with("\r\n") ? 2 : 1);
  io::KeyExtractor& extractor = format == io::Format::kJsonLines ? json_keys_ : plain_keys_;
  const io::FieldsResult result = extractor.extract_fields(line);
  if (!result.ok()) return std::nullopt;
  std::string_view key;
  try {
    key = result.escaped.empty() ? keys_.build(result.values) : stream_key(result.escaped.front());
  } catch (const core::InvalidUtf8Error&) {
    return std::nullopt;
  }
  if (result.values.size() > 1 && config_.key.digest == core::KeyDigest::kNone &&
      key.size() > config_.max_key_bytes) {
    return std::nullopt;
  }
  return core::hash_key(key, config_.hash_seed);
}

void InputFeed::count_recut_paragraphs(const ParagraphRecut& recut) noexcept {
  counters_.kept -= recut.lines_dropped;  // modulo 2^64, see FeedCounters::retracted
  counters_.dropped += recut.lines_dropped;
  counters_.output_bytes -= recut.bytes_removed;
  counters_.retracted += recut.lines_changed;
  if (paragraphs_) paragraphs_->count_recut(recut);
}

std::optional<std::string> InputFeed::paragraph_text_of(io::Format format, std::string_view line) {
  if (!key_hash_of(format, line)) return std::nullopt;  // fill() rejects it before the split
  if (line.ends_with('\n')) line.remove_suffix(line.ends_with("\r\n") ? 2 : 1);
  io::KeyExtractor& extractor = format == io::Format::kJsonLines ? json_keys_ : plain_keys_;
  const io::FieldsResult result = extractor.extract_fields(line);
  return std::string(result.values.front());
}

std::string_view InputFeed::stream_key(std::string_view escaped) {
  keys_.stream_begin();
  io::for_each_unescaped_chunk(escaped, kUnescapeChunkBytes, unescape_chunk_,
                               [this](std::string_view chunk) { keys_.stream_piece(chunk); });
  return keys_.stream_finish();
}

// A task's on-disk bytes count whole once it is done; until then its
// reader's position counts (held there when the read broke).
void InputFeed::finish_input_bytes(const FileTask& task) {
  finished_input_bytes_ += on_disk_bytes(task);
  open_input_bytes_ = 0;
  counters_.input_bytes_done = finished_input_bytes_;
}

void InputFeed::count_open_input_bytes() {
  if (open_ && positioned_) {
    const FileTask& task = tasks_[next_ - 1];
    const std::uint64_t begin = task.range || task.block ? task.bytes.begin : 0;
    const std::uint64_t at = reader_.on_disk_offset();
    // An estimate for compressed inputs: held from going back.
    open_input_bytes_ =
        std::max(open_input_bytes_, std::min(at > begin ? at - begin : 0, on_disk_bytes(task)));
  }
  counters_.input_bytes_done = finished_input_bytes_ + open_input_bytes_;
}

void InputFeed::fill(RoundBatch& batch) {
  fill_batch(batch);
  count_open_input_bytes();
}

void InputFeed::fill_batch(RoundBatch& batch) {
  batch.clear();
  if (annotations_) annotations_->clear();
  if (paragraphs_) paragraphs_->clear();
  io::Record record;
  if (lockstep_) {  // one block a round, whatever its size
    block_taken_ = false;
    staged_block_.reset();
    staged_bytes_ = 0;
    staged_lines_ = 0;
  }
  while (lockstep_ || batch.bytes() < config_.batch_bytes) {
    if (held_) return;  // a broken input waits for the job's decision
    try {
      if (!open_ && (block_taken_ || !open_next_file())) return;
      // Lines already buffered go through the extractor many at a time;
      // next() reads on, and takes too-long lines and a last line without
      // newline. Either way the batch keeps the reader's buffer.
      const std::size_t n = reader_.peek_lines(peeked_);
      if (n > 0) {
        batch.keep(reader_.share_buffer());
        take_lines(std::span<const io::Record>(peeked_).first(n), batch);
        continue;
      }
      if (reader_.next(record)) {
        batch.keep(reader_.share_buffer());
        take(record, batch);
        continue;
      }
    } catch (const io::InputError& e) {
      hold(e);
      if (config_.on_input_error == OnInputError::kFail) throw;
      return;
    }
    open_ = false;  // end of this file; its output closes after the round's writes
    states_[next_ - 1].cursor = reader_.cursor();
    states_[next_ - 1].prefix_digest = reader_.prefix_digest();
    counters_.read_bytes +=
        reader_.cursor().decompressed_offset - tasks_[next_ - 1].cursor.decompressed_offset;
    finish_input_bytes(tasks_[next_ - 1]);
    if (lockstep_) {  // its lines are placed this round
      states_[next_ - 1].done = true;
      staged_lines_ = reader_.cursor().records;
    }
  }
}

void InputFeed::write_kept(const RoundBatch& batch, std::span<const core::Verdict> verdicts,
                           std::span<const std::uint8_t> answers) {
  if (annotations_) {
    write_annotations(batch, verdicts, answers);
    return;
  }
  if (paragraphs_) {  // verdicts per paragraph key: the record is decided from its keys'
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const std::uint64_t before = outputs_[batch.file_slot(i)].bytes_in();
      if (paragraphs_->write(batch, i, verdicts, outputs_[batch.file_slot(i)]) ==
          ParagraphOutcome::kDropped) {
        ++counters_.dropped;
      } else {
        ++counters_.kept;
        counters_.output_bytes += outputs_[batch.file_slot(i)].bytes_in() - before;
      }
    }
    close_finished_outputs();
    return;
  }
  if (minhash_) {
    write_near_duplicates_removed(batch, verdicts);
    close_finished_outputs();
    return;
  }
  // Kept records go to their outputs straight from the batch (valid until
  // it is cleared, after this call): kept records adjacent in its memory
  // are one piece, so an uncompressed output takes a round's records of a
  // file in a few writev calls, without a user-space copy.
  std::uint32_t slot = 0;
  const auto write_pieces = [&] {
    if (pieces_.empty() || lockstep_) return;  // lockstep: write_staged() places them
    outputs_[slot].write_pieces(pieces_);
    pieces_.clear();
  };
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!core::is_kept(verdicts[i])) {
      ++counters_.dropped;
      continue;
    }
    ++counters_.kept;
    const std::string_view bytes = batch.record_bytes(i);
    counters_.output_bytes += bytes.size();
    if (lockstep_) staged_bytes_ += bytes.size();
    if (offset_maps_[batch.file_slot(i)]) note_offset(batch.file_slot(i), batch, i, bytes.size());
    if (batch.file_slot(i) != slot) {
      write_pieces();
      slot = batch.file_slot(i);
    }
    // Addresses as integers: the views may lie in different buffers.
    if (!pieces_.empty() &&
        reinterpret_cast<std::uintptr_t>(pieces_.back().data() + pieces_.back().size()) ==
            reinterpret_cast<std::uintptr_t>(bytes.data())) {
      pieces_.back() = {pieces_.back().data(), pieces_.back().size() + bytes.size()};
    } else {
      pieces_.push_back(bytes);
    }
  }
  write_pieces();
  close_finished_outputs();
}

void InputFeed::write_staged(const BlockPlace& place, const RoundBatch& batch) {
  const std::uint64_t offset = place.offset;
  block_lines_before_ = place.lines_before;
  if (staged_block_ && !pieces_.empty()) {
    const FileTask& task = tasks_[staged_slot_];
    // One output open at a time: a rank's blocks of one input come in a row.
    if (!block_output_.is_open() || block_output_input_ != task.index) {
      block_output_.close();
      block_output_ = io::PositionalOutput::open(
          io::output_path_for(config_.output_dir, task.file.relative_path), durable_);
      block_output_input_ = task.index;
    }
    if (durable_ &&
        (unsynced_outputs_.empty() || unsynced_outputs_.back() != block_output_.path())) {
      unsynced_outputs_.push_back(block_output_.path());
    }
    // The pieces lie in the reader's buffers the batch keeps (add_kept):
    // the write holds them while the next round reads on. A batch past
    // twice the batch bytes holds long lines: holding them would make the
    // reader take a second buffer as large for the next round's lines
    // (e2e.big_field: 278 MB against 143 for a 100 MB line), so it is
    // written in the round.
    if (batch.bytes() > 2 * config_.batch_bytes) {
      block_output_.wait();
      block_output_.write_at(offset, pieces_);
    } else {
      block_output_.write_in_background(offset, std::move(pieces_),
                                        {batch.kept_buffers().begin(), batch.kept_buffers().end()});
    }
  }
  pieces_.clear();
  for (const HeldReject& r : held_rejects_) {
    const std::uint64_t line =
        place.lines_before == kUnknownLines ? 0 : place.lines_before + r.line;
    rejects_.write(r.file, line, r.reason, r.raw, r.too_long);
  }
  held_rejects_.clear();
  // An exhausted feed is not filled again (read_round): nothing is staged
  // in the rounds after its last block.
  staged_block_.reset();
  staged_bytes_ = 0;
  staged_lines_ = 0;
}

void InputFeed::note_offset(std::uint32_t slot, const RoundBatch& batch, std::size_t i,
                            std::uint64_t length) {
  core::OutputOffsetMap& map = *offset_maps_[slot];
  offset_map_bytes_ -= map.memory_bytes();
  // The record's place is its key's order tag (0: past the tag's limits).
  const std::span<const core::OrderTag> tags = batch.tags();
  const std::size_t k = batch.first_key(i);
  const bool noted = batch.key_count(i) == 1 && k < tags.size() && tags[k] != 0 &&
                     map.note_written(core::order_offset(tags[k]), length);
  if (noted && offset_map_bytes_ + map.memory_bytes() <= core::kOutputOffsetMapMaxBytes) {
    offset_map_bytes_ += map.memory_bytes();
  } else {
    offset_maps_[slot].reset();  // its output goes by the walk
  }
}

void InputFeed::drop_offset_map(std::size_t slot) noexcept {
  if (slot >= offset_maps_.size() || !offset_maps_[slot]) return;
  offset_map_bytes_ -= offset_maps_[slot]->memory_bytes();
  offset_maps_[slot].reset();
}

const core::OutputOffsetMap* InputFeed::offset_map(std::size_t input_index) const noexcept {
  // Tasks come in ascending input index (tasks_of_rank keeps the list's
  // order): a binary search, not a scan per input of a many-file job.
  const auto first =
      std::lower_bound(tasks_.begin(), tasks_.end(), input_index,
                       [](const FileTask& t, std::size_t index) { return t.index < index; });
  for (auto j = static_cast<std::size_t>(first - tasks_.begin());
       j < tasks_.size() && tasks_[j].index == input_index; ++j) {
    if (tasks_[j].range || !offset_maps_[j]) continue;
    // Closed done, at the length the map wrote: nothing else touched it.
    if (!states_[j].done || states_[j].output_length != offset_maps_[j]->output_length()) {
      return nullptr;
    }
    return &*offset_maps_[j];
  }
  return nullptr;
}

// Verdicts per band key: a record is written when none of its keys was
// seen before.
void InputFeed::write_near_duplicates_removed(const RoundBatch& batch,
                                              std::span<const core::Verdict> verdicts) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!minhash_->decide(batch, i, verdicts)) {
      ++counters_.dropped;
      continue;
    }
    ++counters_.kept;
    const std::string_view bytes = batch.record_bytes(i);
    counters_.output_bytes += bytes.size();
    outputs_[batch.file_slot(i)].write_bytes(bytes);
  }
}

void InputFeed::write_annotations(const RoundBatch& batch, std::span<const core::Verdict> verdicts,
                                  std::span<const std::uint8_t> answers) {
  if (paragraphs_) {  // a record is decided from its paragraph keys' verdicts
    counters_.output_bytes += annotations_->write_paragraphs(
        [&](std::size_t i) {
          ParagraphDecision d = paragraphs_->decide(batch, i, verdicts);
          ++(d.dropped ? counters_.dropped : counters_.kept);
          return d;
        },
        outputs_);
    close_finished_outputs();
    return;
  }
  if (minhash_) {  // one verdict per record, from its band keys'
    record_verdicts_.clear();
    near_matches_.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      record_verdicts_.push_back(minhash_->decide(batch, i, verdicts) ? core::Verdict::kNew
                                                                      : core::Verdict::kDuplicate);
      if (!answers.empty()) {  // --confirm-jaccard: the best match goes with the flag
        near_matches_.push_back(minhash_->best_match(batch, i, verdicts, answers));
      }
    }
    for (const core::Verdict v : record_verdicts_) {
      ++(core::is_kept(v) ? counters_.kept : counters_.dropped);
    }
    counters_.output_bytes += answers.empty()
                                  ? annotations_->write(record_verdicts_, outputs_)
                                  : annotations_->write_near_matches(near_matches_, outputs_);
    close_finished_outputs();
    return;
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    ++(core::is_kept(verdicts[i]) ? counters_.kept : counters_.dropped);
  }
  counters_.output_bytes += annotations_->write(verdicts.first(batch.size()), outputs_);
  close_finished_outputs();
}

void InputFeed::close_finished_outputs() {
  // Tasks below the one being read are finished; so is the last one once
  // the reader let go of it.
  const std::size_t finished = open_ ? next_ - 1 : next_;
  for (; first_unclosed_ < finished; ++first_unclosed_) {
    io::OutputWriter& out = outputs_[first_unclosed_];
    FileState& state = states_[first_unclosed_];
    if (out.is_open()) {  // not opened at all if reading failed before it
      out.close();        // may add an empty frame, so sync after it
      if (durable_) io::fsync_path(out.path());
      state.output_length = out.file_length();
      // A held input keeps its cursor: done only once it is skipped.
      if (held_ != first_unclosed_) state.done = true;
    }
    out = io::OutputWriter();  // free the codec buffers
    if (auto& part_rejects = range_rejects_[first_unclosed_]) {
      state.reject_length = durable_ ? part_rejects->flush_and_sync() : part_rejects->flush();
      part_rejects->close();
      range_reject_counts_.push_back(part_rejects->counts());
      part_rejects.reset();
    }
  }
}

std::vector<FileState> InputFeed::commit() {
  // Only a checkpoint needs the bytes on disk; a run without one (the join
  // of split inputs still takes a cut) only needs them in the files, and an
  // fsync costs a journal commit (~0.4 ms on this ext4, more on a busy or
  // network file system).
  const auto settle = [this](auto& writer) {
    return durable_ ? writer.flush_and_sync() : writer.flush();
  };
  if (open_) {
    FileState& state = states_[next_ - 1];
    state.output_length = settle(outputs_[next_ - 1]);
    state.cursor = reader_.cursor();
    state.prefix_digest = reader_.prefix_digest();
    if (auto& part_rejects = range_rejects_[next_ - 1]) {
      state.reject_length = settle(*part_rejects);
    }
  }
  if (lockstep_) {
    // A generation must never record a length whose bytes are not on disk.
    block_output_.wait();
    for (const std::filesystem::path& out : unsynced_outputs_) io::fsync_path(out);
    unsynced_outputs_.clear();
  }
  reject_length_ = settle(rejects_);
  return states_;
}

io::RejectCounts InputFeed::reject_counts() const {
  io::RejectCounts counts = rejects_.counts();
  for (const io::RejectCounts& part : range_reject_counts_) {
    for (const auto& [reason, n] : part) counts[reason] += n;
  }
  for (const auto& part : range_rejects_) {
    if (!part) continue;
    for (const auto& [reason, n] : part->counts()) counts[reason] += n;
  }
  return counts;
}

void InputFeed::finish() {
  for (auto& out : outputs_) {
    if (out.is_open()) out.close();
  }
  for (auto& part : range_rejects_) {
    if (part) part->close();
  }
  block_output_.close();
  rejects_.close();
}

}  // namespace bloomshard::app
