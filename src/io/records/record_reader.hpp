// The hot read path: splits one input's decompressed stream into lines with
// memchr over a large reused buffer (1 MiB, grown only for longer lines, at
// most max_line_bytes + 2 + 64 KiB). A Record's views point into that buffer
// and stay valid only until the next call; nothing is allocated per record.
// The buffer is malloc'd and grown with realloc, never zero-filled, and each
// read asks for at most the initial buffer size: a grown buffer's unused
// capacity is address space, not resident memory (glibc moves large blocks
// with mremap), so a 100 MB line costs about 100 MB. Every line returned
// (a too-long line's prefix aside) has kLinePaddingBytes readable bytes
// after it, so a JSON parser that reads past its input (simdjson) can parse
// it where it lies.
//
// Batched reading: peek_lines() lists the complete lines already
// buffered without consuming them and consume() takes the first of them, so
// a caller can parse a run of lines in one call and still stop after any
// record. share_buffer() lets the caller keep the records it was given
// (the round batch keeps its lines there instead of copying them): while
// it is held, the reader never moves or overwrites those bytes and goes on
// in another buffer (buffers given back are reused).
//
// Line rules: the terminator is "\n" or "\r\n" (the '\r' is not part of the
// line); a last line without a newline has terminator "". An empty line is a
// record like any other (for plain lines it is the valid empty key). A line
// longer than max_line_bytes is returned with too_long set and only its first
// kTooLongPrefixBytes bytes, after skipping the rest without buffering it;
// reading continues on the next line. A UTF-8 BOM is not stripped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/errors.hpp"
#include "io/records/byte_source.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::io {

/// Default longest line accepted: 16 MiB.
inline constexpr std::size_t kDefaultMaxLineBytes = std::size_t{16} << 20;
/// Bytes of a too-long line kept for the reject file.
inline constexpr std::size_t kTooLongPrefixBytes = 4096;
/// Readable bytes after the end of every line a reader returns (not a
/// too-long line's prefix): simdjson's SIMDJSON_PADDING (64).
inline constexpr std::size_t kLinePaddingBytes = 64;

/// Where a reader stands: `records` lines consumed and the decompressed byte
/// offset just after the last consumed terminator. Saved in checkpoints;
/// RecordReader::skip_to() resumes from it.
struct InputCursor {
  std::uint64_t records = 0;
  std::uint64_t decompressed_offset = 0;
  /// Optional: for a gzip/zstd input, a frame or member start
  /// before the offset (ByteSource::frame_start_before) where a resume can
  /// start decoding instead of at byte 0. Absent: plain files, single-frame
  /// files, offsets inside the first noted frame, and cursors saved by older
  /// builds; a resume then decompresses from byte 0.
  std::optional<FrameStart> frame{};
  friend bool operator==(const InputCursor&, const InputCursor&) = default;
};

/// One line. Views are valid until the next next()/skip_to()/open() call.
struct Record {
  std::string_view line;          // bytes without terminator (prefix only if too_long)
  std::string_view terminator;    // "\n", "\r\n" or "" (last line without newline)
  std::uint64_t line_number = 0;  // 1-based; also the records consumed after this one
  std::uint64_t end_offset = 0;   // decompressed offset just after the terminator
  std::uint64_t line_bytes = 0;   // full line length without terminator (> line.size() if too_long)
  bool too_long = false;          // longer than max_line_bytes: reject "line too long"
};

struct ReaderOptions {
  std::size_t max_line_bytes = kDefaultMaxLineBytes;  // in [1, 2^40]
  std::size_t buffer_bytes = std::size_t{1} << 20;    // initial buffer, at least 64 KiB used
  /// Keep prefix_digest(): one XXH3 pass over the input, ~10% of a JSONL
  /// read phase. A reader whose cursors are never saved (a job without
  /// --state) goes without; prefix_digest() is then 0, and skip_to() checks
  /// no digest.
  bool prefix_digest = true;
  /// Blocks of buffer_bytes read and decoded ahead of the caller on a thread
  /// of the reader's own (io/records/prefetch_source.hpp: same bytes, same
  /// errors at the same lines; blocks x buffer_bytes more memory per open
  /// input). 0: none, every read on the caller's thread. It starts at the
  /// first read after open()/skip_to(), never past an open_range() end.
  std::size_t prefetch_blocks = 0;
};

/// Keeps a reader buffer, and the bytes of the records read from it, alive
/// (RecordReader::share_buffer()).
using BufferRef = std::shared_ptr<const void>;

class RecordReader {
 public:
  explicit RecordReader(ReaderOptions options = {});
  ~RecordReader();
  RecordReader(RecordReader&&) noexcept;
  RecordReader& operator=(RecordReader&&) noexcept;
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  /// Starts reading `file` from its beginning (closing any previous file;
  /// the buffer is reused). Throws InputError if it cannot be opened.
  void open(const InputFile& file);

  /// Like open(), but reads only bytes [begin, end) of an uncompressed file
  /// (one line-aligned range of a split input, io/records/line_ranges.hpp):
  /// seeks to `begin`, which must be a line start, and ends the input at
  /// `end`. Cursor offsets stay absolute; records and line numbers count
  /// from the range's start (the first line of the range is line 1). Throws
  /// InputError if the file cannot be opened, std::invalid_argument if it is
  /// compressed or begin > end.
  void open_range(const InputFile& file, std::uint64_t begin, std::uint64_t end);

  /// Reads the next line into `out`; false at the end of the file. Throws
  /// InputError (file, line, offset, reason) for truncated/corrupt data.
  bool next(Record& out);

  /// Lists in `out` the complete lines already buffered after the cursor,
  /// at most out.size(), as next() would return them one by one, without
  /// consuming them or reading: they lie back to back in one buffer, each
  /// followed by its terminator and the last by kLinePaddingBytes readable
  /// bytes. Stops before a too-long line and before a line whose newline
  /// is not buffered yet (also the last line without newline): 0 then means
  /// "call next()". Views are valid until the next call other than
  /// consume() and share_buffer(). Cost: a memchr per line.
  std::size_t peek_lines(std::span<Record> out);

  /// Consumes `records`, the first records of the last peek_lines() (none
  /// consumed since): the cursor and prefix digest move past the last of
  /// them exactly as next() would have. Throws std::logic_error otherwise.
  void consume(std::span<const Record> records);

  /// The buffer holding the records returned and peeked so far: while the
  /// caller holds it, their bytes (terminators included) are never moved
  /// or overwritten; the reader goes on in another buffer when it needs
  /// room. Buffers of the initial size are reused once given back.
  [[nodiscard]] BufferRef share_buffer() const;

  /// Resumes a freshly opened file (or range: offsets are absolute, records
  /// count from the range's start) at `cursor`. Uncompressed files are seeked
  /// (verified: the byte before the offset must be '\n' or the offset must be
  /// the file size, and records == 0 iff offset == 0). A compressed file
  /// whose cursor has a frame start and that is given a prefix digest is
  /// frame-seeked: decoding starts afresh at that frame, the bytes up to the
  /// offset are discarded and the one before it must be '\n' (or the stream
  /// end there); the records before the frame are never read, so the digest
  /// is taken as the reader's own, as for a seeked plain file. If that
  /// fails (the frame start does not decode, or the byte is not a line end)
  /// the file is reopened and read from byte 0 as below, and
  /// resume_fallback() says why. Other compressed files are re-read and
  /// discarded up to `cursor.records` lines and the offset reached must
  /// equal the saved one, and so must the prefix digest if one is given.
  /// Throws InputError "resume cursor mismatch: ..." otherwise, or
  /// std::logic_error if records were already read.
  void skip_to(InputCursor cursor, std::optional<std::uint64_t> prefix_digest = std::nullopt);

  /// How the last skip_to() got to its cursor: kStart (nothing to skip),
  /// kSeek (plain file), kFrame (compressed, decoding began at
  /// cursor.frame), kReread (compressed, decoded from byte 0).
  enum class ResumeMethod { kStart, kSeek, kFrame, kReread };
  [[nodiscard]] ResumeMethod resume_method() const noexcept { return resume_method_; }
  /// Why the last skip_to() could not use its cursor's frame start and
  /// re-read from byte 0 instead (empty otherwise).
  [[nodiscard]] const std::string& resume_fallback() const noexcept { return resume_fallback_; }

  /// Digest of every byte consumed so far (the lines and terminators before
  /// cursor()), chained record by record with XXH3-64; a too-long line
  /// stands in by its kept prefix, length and terminator. Saved with the
  /// cursor so that a resume can tell the consumed prefix is unchanged
  /// (--revalidate-inputs). Costs one XXH3 pass over the input bytes. 0
  /// without ReaderOptions::prefix_digest.
  [[nodiscard]] std::uint64_t prefix_digest() const noexcept { return digest_; }

  /// Records consumed and offset after the last one (also after an input
  /// error inside a too-long line: its start).
  [[nodiscard]] InputCursor cursor() const noexcept;

  /// On-disk bytes of the file read so far, for progress: the cursor's
  /// offset for an uncompressed file (absolute, also in a range); for a
  /// compressed one the cursor's share of the compressed bytes its decoder
  /// consumed (compressed x cursor / decoded bytes), off by at most about
  /// one codec block (zstd: 128 KiB decoded). 0 before open().
  [[nodiscard]] std::uint64_t on_disk_offset() const noexcept;

  /// The file being read (empty path before open()).
  [[nodiscard]] const InputFile& file() const noexcept { return file_; }

 private:
  struct Block;
  bool refill();
  void start_read_ahead();
  void switch_block();
  std::shared_ptr<Block> spare_block(std::size_t cap);
  bool resume_at_frame(const InputCursor& cursor, std::uint64_t prefix_digest);
  void reset_position() noexcept;
  bool skip_long_line(Record& out);
  void mix_too_long(std::uint64_t length, std::string_view terminator) noexcept;
  // next()'s last step for the line at begin_ of `len` bytes (its
  // terminator, already in out, excluded) whose successor starts at `next`:
  // the record's fields, the digest, and the reader past the line.
  void take_line(Record& out, std::size_t len, std::size_t next);
  void mix(const char* bytes, std::size_t n, std::uint64_t extra) noexcept;
  [[noreturn]] void rethrow_with_location(const InputError& e) const;

  ReaderOptions options_;
  InputFile file_;
  std::unique_ptr<ByteSource> source_;
  bool read_ahead_ = false;       // source_ is wrapped in a PrefetchSource
  std::shared_ptr<Block> block_;  // the buffer; shared with callers by share_buffer()
  std::vector<std::shared_ptr<Block>> retired_;  // initial-size blocks left while shared
  char* buf_ = nullptr;                          // block_'s bytes
  std::size_t cap_ = 0;                          // block_'s capacity (padding not counted)
  std::size_t written_ = 0;                      // high-water mark of bytes read into block_
  std::size_t max_cap_ = 0;
  std::size_t begin_ = 0;  // first unconsumed byte
  std::size_t scan_ = 0;   // bytes in [begin_, scan_) hold no '\n'
  std::size_t end_ = 0;    // end of valid data
  bool eof_ = false;
  std::uint64_t offset_ = 0;  // decompressed offset of buf_[begin_]
  // While skip_long_line reads past a too-long line's start: that start,
  // the end of the last record, which cursor() reports (offset_ follows the
  // source into the line, and an input error there must not save a cursor
  // whose offset is past the records it counts).
  std::optional<std::uint64_t> long_line_start_;
  std::uint64_t start_ = 0;           // where reading started: 0, or an open_range() begin
  std::uint64_t limit_ = UINT64_MAX;  // decompressed offset treated as the end
  std::uint64_t records_ = 0;
  std::uint64_t digest_ = 0;  // prefix_digest()
  std::string long_prefix_;   // prefix of the last too-long line (reserved once)
  ResumeMethod resume_method_ = ResumeMethod::kStart;
  std::string resume_fallback_;
};

}  // namespace bloomshard::io
