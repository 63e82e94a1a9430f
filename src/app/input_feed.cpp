#include "bloomshard/app/input_feed.hpp"

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/io/reject_reasons.hpp"

namespace bloomshard::app {

InputFeed::InputFeed(const DedupConfig& config, std::vector<io::InputFile> files,
                     const std::filesystem::path& reject_path)
    : config_(config),
      files_(std::move(files)),
      reader_(io::ReaderOptions{.max_line_bytes = config.max_line_bytes}),
      plain_keys_(io::KeyExtractorOptions{.format = io::Format::kPlainLines,
                                          .key_path = config.key_field,
                                          .max_key_bytes = config.max_key_bytes}),
      json_keys_(io::KeyExtractorOptions{.format = io::Format::kJsonLines,
                                         .key_path = config.key_field,
                                         .max_key_bytes = config.max_key_bytes}),
      outputs_(files_.size()),
      rejects_(io::RejectWriter::create(reject_path)) {}

bool InputFeed::open_next_file() {
  if (next_file_ >= files_.size()) return false;
  const io::InputFile& file = files_[next_file_];
  // The output exists from the start, so an input whose records are all
  // duplicates still has its (empty) mirror.
  outputs_[next_file_] = io::OutputWriter::create(
      io::output_path_for(config_.output_dir, file.relative_path), file.compression);
  reader_.open(file);
  ++next_file_;
  open_ = true;
  return true;
}

void InputFeed::abandon() noexcept {
  open_ = false;
  next_file_ = files_.size();
}

void InputFeed::take(const io::Record& record, RoundBatch& batch) {
  ++counters_.records;
  const io::InputFile& file = files_[next_file_ - 1];
  if (record.too_long) {
    ++counters_.rejected;
    rejects_.write(file.absolute_path.native(), record.line_number, io::reason::kLineTooLong,
                   record.line, true);
    return;
  }
  io::KeyExtractor& extractor = file.format == io::Format::kJsonLines ? json_keys_ : plain_keys_;
  const io::KeyResult result = extractor.extract(record.line);
  if (!result.ok()) {
    ++counters_.rejected;
    rejects_.write(file.absolute_path.native(), record.line_number, result.reject_reason,
                   record.line);
    return;
  }
  std::string_view key;
  try {
    key = core::normalize_key(config_.normalize, result.key, normalized_);
  } catch (const core::InvalidUtf8Error&) {
    ++counters_.rejected;
    rejects_.write(file.absolute_path.native(), record.line_number, kRejectInvalidUtf8,
                   record.line);
    return;
  }
  batch.add(static_cast<std::uint32_t>(next_file_ - 1), record.line, record.terminator,
            core::hash_key(key, config_.hash_seed), key);
}

void InputFeed::fill(RoundBatch& batch) {
  batch.clear();
  io::Record record;
  while (batch.bytes() < config_.batch_bytes) {
    if (!open_ && !open_next_file()) return;
    if (reader_.next(record)) {
      take(record, batch);
      continue;
    }
    open_ = false;  // end of this file; its output closes after the round's writes
    counters_.input_bytes_done += files_[next_file_ - 1].size;
  }
}

void InputFeed::write_kept(const RoundBatch& batch, std::span<const core::Verdict> verdicts) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!core::is_kept(verdicts[i])) {
      ++counters_.dropped;
      continue;
    }
    ++counters_.kept;
    const std::string_view bytes = batch.record_bytes(i);
    counters_.output_bytes += bytes.size();
    outputs_[batch.file_slot(i)].write_bytes(bytes);
  }
  close_finished_outputs();
}

void InputFeed::close_finished_outputs() {
  // Files below the one being read are finished; so is the last one once
  // the reader let go of it.
  const std::size_t finished = open_ ? next_file_ - 1 : next_file_;
  for (; first_unclosed_ < finished; ++first_unclosed_) {
    outputs_[first_unclosed_].close();
    outputs_[first_unclosed_] = io::OutputWriter();  // free the codec buffers
  }
}

void InputFeed::finish() {
  for (auto& out : outputs_) {
    if (out.is_open()) out.close();
  }
  rejects_.close();
}

}  // namespace bloomshard::app
