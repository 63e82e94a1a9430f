// This rank's share of the corpus: reads its files in order, turns lines
// into keys (extract, normalize, hash), sends bad lines to the reject file,
// and writes the kept records of each round to the mirrored outputs.
// Not collective; one per rank.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/app/dedup_options.hpp"
#include "bloomshard/app/round_batch.hpp"
#include "bloomshard/io/key_extractor.hpp"
#include "bloomshard/io/output_writer.hpp"
#include "bloomshard/io/record_reader.hpp"
#include "bloomshard/io/reject_writer.hpp"

namespace bloomshard::app {

/// Reject reason for keys that are not UTF-8 under a policy that needs it.
inline constexpr std::string_view kRejectInvalidUtf8 = "invalid UTF-8 for normalization";

/// Counters of the read side (this rank).
struct FeedCounters {
  std::uint64_t records = 0;  ///< lines read, rejects included
  std::uint64_t rejected = 0;
  std::uint64_t kept = 0;
  std::uint64_t dropped = 0;
  std::uint64_t input_bytes_done = 0;  ///< on-disk bytes of finished files
  std::uint64_t output_bytes = 0;      ///< uncompressed bytes written
};

class InputFeed {
 public:
  /// `files` are this rank's inputs in reading order; `reject_path` is
  /// this rank's reject file. Throws io::OutputError if it cannot be created.
  InputFeed(const DedupConfig& config, std::vector<io::InputFile> files,
            const std::filesystem::path& reject_path);

  /// Reads records into `batch` (cleared first) until about batch_bytes
  /// were taken or this rank's input ends. Throws io::InputError for an
  /// input that cannot be read on (the batch keeps what came before).
  void fill(RoundBatch& batch);

  /// Writes the kept records of `batch` (verdicts in batch order) and
  /// closes the outputs of files read to their end.
  void write_kept(const RoundBatch& batch, std::span<const core::Verdict> verdicts);

  /// Closes every output and the reject file. Throws io::OutputError.
  void finish();

  /// True once every file was read to its end (or reading failed).
  [[nodiscard]] bool exhausted() const noexcept { return next_file_ >= files_.size() && !open_; }
  /// Marks the feed as done after an input error, so the rank stops reading.
  void abandon() noexcept;

  [[nodiscard]] const FeedCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] const io::RejectCounts& reject_counts() const noexcept { return rejects_.counts(); }

 private:
  bool open_next_file();
  void close_finished_outputs();
  void take(const io::Record& record, RoundBatch& batch);

  DedupConfig config_;
  std::vector<io::InputFile> files_;
  std::size_t next_file_ = 0;       // next file to open
  bool open_ = false;               // reader holds files_[next_file_ - 1]
  std::size_t first_unclosed_ = 0;  // outputs below this slot are closed
  io::RecordReader reader_;
  io::KeyExtractor plain_keys_;
  io::KeyExtractor json_keys_;
  std::vector<io::OutputWriter> outputs_;  // one per file slot
  io::RejectWriter rejects_;
  std::string normalized_;
  FeedCounters counters_;
};

}  // namespace bloomshard::app
