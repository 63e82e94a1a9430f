// Line splitting over a ByteSource: memchr over one large buffer that is
// compacted (memmove of the partial line) rather than reallocated, and grown
// only while a single line does not fit. A buffer a caller shares is never
// compacted or grown: reading goes on after its data or in another buffer.
// A resume seeks plain files, starts compressed ones at a saved frame start
// when it has one, and re-reads the rest from byte 0.
#include "io/records/record_reader.hpp"

#include "io/records/prefetch_source.hpp"

#define XXH_INLINE_ALL  // the prefix digest runs once per line
#include <xxhash.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace bloomshard::io {
namespace {

constexpr std::size_t kMinReadBytes = std::size_t{64} << 10;
constexpr std::string_view kLf = "\n";
constexpr std::string_view kCrLf = "\r\n";
constexpr std::string_view kNoTerminator;
// Initial-size buffers kept for reuse after a share ends: a round batch of
// 8 MiB holds about 9 of the default 1 MiB.
constexpr std::size_t kMaxRetiredBlocks = 32;

// Bit j set where p[j] == '\n', for j < min(64, valid); p[0..63] must be
// readable.
std::uint64_t newline_bits(const char* p, std::size_t valid) noexcept {
  std::uint64_t bits = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    const auto m = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
    bits |= std::uint64_t{m} << (16 * i);
  }
#else
  for (int i = 0; i < 64; ++i) bits |= std::uint64_t{p[i] == '\n'} << i;
#endif
  return valid >= 64 ? bits : bits & ((std::uint64_t{1} << valid) - 1);
}

}  // namespace

// One reader buffer: `cap` bytes to read into, then kLinePaddingBytes that
// are never read into, so that every line has readable padding after it
// (zeroed: a parser's reads past a line never see uninitialized bytes there).
struct RecordReader::Block {
  explicit Block(std::size_t capacity)
      : data(static_cast<char*>(std::malloc(capacity + kLinePaddingBytes))), cap(capacity) {
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data + cap, 0, kLinePaddingBytes);
  }
  ~Block() { std::free(data); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  void grow(std::size_t capacity) {
    // realloc: a large block is remapped, not copied, and its new pages
    // stay untouched until a read fills them.
    auto* bigger = static_cast<char*>(std::realloc(data, capacity + kLinePaddingBytes));
    if (bigger == nullptr) throw std::bad_alloc();
    data = bigger;
    cap = capacity;
    std::memset(data + cap, 0, kLinePaddingBytes);
  }
  char* data;
  std::size_t cap;
};

RecordReader::RecordReader(ReaderOptions options) : options_(options) {
  if (options_.max_line_bytes == 0 || options_.max_line_bytes > (std::size_t{1} << 40)) {
    throw std::invalid_argument("ReaderOptions::max_line_bytes must be in [1, 2^40]");
  }
  options_.buffer_bytes = std::max(options_.buffer_bytes, kMinReadBytes);
  // A line of max_line_bytes plus "\r\n" must fit, with room for a read.
  max_cap_ = std::max(options_.buffer_bytes, options_.max_line_bytes + 2 + kMinReadBytes);
  long_prefix_.reserve(kTooLongPrefixBytes);
}

RecordReader::~RecordReader() = default;
RecordReader::RecordReader(RecordReader&&) noexcept = default;
RecordReader& RecordReader::operator=(RecordReader&&) noexcept = default;

void RecordReader::reset_position() noexcept {
  begin_ = scan_ = end_ = 0;
  eof_ = false;
  offset_ = 0;
  long_line_start_.reset();
  start_ = 0;
  limit_ = UINT64_MAX;
  records_ = 0;
  digest_ = 0;
}

void RecordReader::open(const InputFile& file) {
  source_.reset();
  file_ = file;
  reset_position();
  resume_method_ = ResumeMethod::kStart;
  resume_fallback_.clear();
  read_ahead_ = false;
  if (!block_) {
    block_ = std::make_shared<Block>(options_.buffer_bytes);
    buf_ = block_->data;
    cap_ = block_->cap;
  }
  try {
    source_ = open_byte_source(file.absolute_path, file.compression);
  } catch (const InputError& e) {
    throw InputError(file_.absolute_path.string(), 0, 0, e.reason());
  }
}

void RecordReader::open_range(const InputFile& file, std::uint64_t begin, std::uint64_t end) {
  if (file.compression != Compression::kNone) {
    throw std::invalid_argument("RecordReader::open_range: '" + file.absolute_path.string() +
                                "' is compressed; only plain files are read by range");
  }
  if (begin > end) throw std::invalid_argument("RecordReader::open_range: begin > end");
  open(file);
  if (begin > 0) source_->seek(begin);
  offset_ = start_ = begin;
  limit_ = end;
}

void RecordReader::rethrow_with_location(const InputError& e) const {
  throw InputError(file_.absolute_path.string(), records_ + 1, offset_ + (end_ - begin_),
                   e.reason());
}

InputCursor RecordReader::cursor() const noexcept {
  const std::uint64_t at = long_line_start_.value_or(offset_);
  InputCursor c{records_, at, std::nullopt};
  if (source_ && at > 0) c.frame = source_->frame_start_before(at);
  return c;
}

std::uint64_t RecordReader::on_disk_offset() const noexcept {
  if (!source_) return 0;
  if (file_.compression == Compression::kNone) return offset_;
  // The decoder's input covers the buffered bytes too: take the cursor's
  // share of it.
  const std::uint64_t decoded = offset_ + (end_ - begin_);
  const std::uint64_t compressed = source_->compressed_offset();
  if (decoded == 0) return 0;
  return static_cast<std::uint64_t>(static_cast<double>(compressed) *
                                    (static_cast<double>(offset_) / static_cast<double>(decoded)));
}

BufferRef RecordReader::share_buffer() const { return block_; }

// An unshared initial-size block from the retired ones, or a new one.
std::shared_ptr<RecordReader::Block> RecordReader::spare_block(std::size_t cap) {
  if (cap == options_.buffer_bytes) {
    for (auto it = retired_.begin(); it != retired_.end(); ++it) {
      if (it->use_count() == 1) {
        std::shared_ptr<Block> b = std::move(*it);
        retired_.erase(it);
        return b;
      }
    }
  }
  return std::make_shared<Block>(cap);
}

// Leaves a shared block for another one holding the unconsumed bytes, grown
// while they leave less than a read's room (as refill() grows its own).
void RecordReader::switch_block() {
  const std::size_t pending = end_ - begin_;
  std::size_t cap = options_.buffer_bytes;
  while (cap - std::min(cap, pending) < kMinReadBytes && cap < max_cap_) {
    cap = std::min(max_cap_, cap * 2);
  }
  std::shared_ptr<Block> fresh = spare_block(cap);
  std::memcpy(fresh->data, buf_ + begin_, pending);
  if (block_->cap == options_.buffer_bytes && retired_.size() < kMaxRetiredBlocks) {
    retired_.push_back(std::move(block_));
  }
  block_ = std::move(fresh);
  buf_ = block_->data;
  cap_ = block_->cap;
  scan_ -= begin_;
  begin_ = 0;
  end_ = written_ = pending;
}

void RecordReader::mix(const char* bytes, std::size_t n, std::uint64_t extra) noexcept {
  if (!options_.prefix_digest) return;
  digest_ = XXH3_64bits_withSeed(bytes, n, digest_ ^ extra);
}

// Makes room after end_ (compacting, then growing up to max_cap_) and reads
// one block. Returns false at EOF.
bool RecordReader::refill() {
  // Compacting also once the consumed bytes are half the buffer keeps a
  // line that follows a long one at the front: without it, the reads after
  // a 100 MB line would walk on through the rest of its 128 MiB buffer.
  const bool far_in = begin_ >= cap_ / 2;
  if (block_.use_count() > 1) {
    // Shared: bytes below written_ may be a caller's. Read on after them,
    // or move to another block where this one has no room, where a reset
    // (open, a skipped long line) went back below them, or where a grown
    // block would have been compacted.
    if (cap_ - end_ < kMinReadBytes || end_ < written_ ||
        (far_in && cap_ > options_.buffer_bytes)) {
      switch_block();
    }
  } else {
    written_ = end_;  // nobody holds bytes of this block
    if (begin_ > 0 && (cap_ - end_ < kMinReadBytes || far_in)) {
      const std::size_t pending = end_ - begin_;
      std::memmove(buf_, buf_ + begin_, pending);
      scan_ -= begin_;
      begin_ = 0;
      end_ = written_ = pending;
    }
    if (cap_ - end_ < kMinReadBytes && cap_ < max_cap_) {
      block_->grow(std::min(max_cap_, cap_ * 2));
      buf_ = block_->data;
      cap_ = block_->cap;
    }
  }
  if (!read_ahead_ && options_.prefetch_blocks > 0) start_read_ahead();
  // No cursor before offset_ (or the start of the too-long line being
  // skipped) will be asked for again.
  source_->forget_frames_before(long_line_start_.value_or(offset_));
  std::size_t got = 0;
  // At most the initial buffer per read, so that a grown buffer is only
  // resident as far as its longest line reached; and never past a range's
  // end: the source stands at offset_ + (end_ - begin_), a range ends at
  // limit_.
  const std::uint64_t room = limit_ - (offset_ + (end_ - begin_));
  const std::size_t want = static_cast<std::size_t>(
      std::min<std::uint64_t>(std::min(cap_ - end_, options_.buffer_bytes), room));
  try {
    got = want == 0 ? 0 : source_->read(std::span<char>(buf_ + end_, want));
  } catch (const InputError& e) {
    rethrow_with_location(e);
  }
  end_ += got;
  written_ = std::max(written_, end_);
  if (got == 0) eof_ = true;
  return got != 0;
}

// Wraps the source once the reader has been positioned (open, skip_to's
// probes and seeks are done by then): from here on it only reads forward.
// The thread may read up to a range's end, never past it.
void RecordReader::start_read_ahead() {
  const std::uint64_t at = offset_ + (end_ - begin_);  // where the source stands
  const std::uint64_t limit = limit_ == UINT64_MAX ? UINT64_MAX : (limit_ > at ? limit_ - at : 0);
  source_ = std::make_unique<PrefetchSource>(std::move(source_),
                                             PrefetchOptions{.blocks = options_.prefetch_blocks,
                                                             .block_bytes = options_.buffer_bytes,
                                                             .read_limit = limit});
  read_ahead_ = true;
}

void RecordReader::take_line(Record& out, std::size_t len, std::size_t next) {
  const char* const line = buf_ + begin_;
  out.line_bytes = len;
  out.too_long = len > options_.max_line_bytes;
  if (out.too_long) {
    long_prefix_.assign(line, std::min(len, kTooLongPrefixBytes));
    out.line = long_prefix_;
    mix_too_long(len, out.terminator);
  } else {
    out.line = std::string_view(line, len);
    mix(line, next - begin_, 0);
  }
  offset_ += next - begin_;
  begin_ = scan_ = next;
  out.line_number = ++records_;
  out.end_offset = offset_;
}

bool RecordReader::next(Record& out) {
  if (!source_) throw std::logic_error("RecordReader::next before open");
  for (;;) {
    const char* base = buf_;
    const void* nl = scan_ < end_ ? std::memchr(base + scan_, '\n', end_ - scan_) : nullptr;
    if (nl != nullptr) {
      const auto nl_pos = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
      std::size_t line_end = nl_pos;
      out.terminator = kLf;
      if (line_end > begin_ && base[line_end - 1] == '\r') {
        --line_end;
        out.terminator = kCrLf;
      }
      take_line(out, line_end - begin_, nl_pos + 1);
      return true;
    }
    scan_ = end_;
    const std::size_t pending = end_ - begin_;
    if (eof_) {
      if (pending == 0) return false;
      // Last line without a newline; a lone trailing '\r' stays in the line.
      out.terminator = kNoTerminator;
      take_line(out, pending, end_);
      return true;
    }
    // max_line_bytes + 2 bytes without '\n' cannot be a line within the
    // limit even if the last of them is the '\r' of a "\r\n".
    if (pending >= options_.max_line_bytes + 2) return skip_long_line(out);
    refill();
  }
}

std::size_t RecordReader::peek_lines(std::span<Record> out) {
  if (!source_) throw std::logic_error("RecordReader::peek_lines before open");
  const char* base = buf_;
  std::size_t pos = begin_;
  std::size_t search = std::max(scan_, begin_);  // [begin_, scan_) holds no '\n'
  std::uint64_t offset = offset_;
  std::uint64_t records = records_;
  std::size_t n = 0;
  // The newlines of 64 bytes at a time, as a bit mask walked line by line:
  // a memchr call per line costs more than the ~180 bytes of a typical
  // JSONL line it scans. Windows start before end_ <= cap, so their 64
  // bytes lie within the block and its padding; bits from end_ on are
  // dropped (those bytes are stale).
  std::size_t window = search;
  std::uint64_t bits = search < end_ ? newline_bits(base + window, end_ - window) : 0;
  while (n < out.size()) {
    while (bits == 0 && window + 64 < end_) {
      window += 64;
      bits = newline_bits(base + window, end_ - window);
    }
    if (bits == 0) {
      if (n == 0) scan_ = end_;
      break;
    }
    const std::size_t nl_pos = window + static_cast<std::size_t>(std::countr_zero(bits));
    bits &= bits - 1;
    std::size_t line_end = nl_pos;
    Record& r = out[n];
    r.terminator = kLf;
    if (line_end > pos && base[line_end - 1] == '\r') {
      --line_end;
      r.terminator = kCrLf;
    }
    const std::size_t len = line_end - pos;
    if (len > options_.max_line_bytes) break;  // next() sets it apart
    r.line = std::string_view(base + pos, len);
    r.line_bytes = len;
    r.too_long = false;
    offset += nl_pos + 1 - pos;
    r.line_number = ++records;
    r.end_offset = offset;
    pos = nl_pos + 1;
    ++n;
  }
  return n;
}

void RecordReader::consume(std::span<const Record> records) {
  if (records.empty()) return;
  if (records.front().line.data() != buf_ + begin_ || records.front().line_number != records_ + 1) {
    throw std::logic_error("RecordReader::consume: not the next peeked records");
  }
  if (options_.prefix_digest) {
    for (const Record& r : records) mix(r.line.data(), r.line.size() + r.terminator.size(), 0);
  }
  const Record& last = records.back();
  begin_ = scan_ =
      static_cast<std::size_t>(last.line.data() + last.line.size() + last.terminator.size() - buf_);
  offset_ = last.end_offset;
  records_ = last.line_number;
}

// A too-long line enters the digest as its first kTooLongPrefixBytes bytes
// (long_prefix_), its length and its terminator, never as its full bytes:
// skip_long_line does not have them, and the digest must not depend on
// which of the two paths (whole line buffered, or skipped) a line took,
// since that depends on where the buffer's refills happened to fall.
void RecordReader::mix_too_long(std::uint64_t length, std::string_view terminator) noexcept {
  mix(long_prefix_.data(), long_prefix_.size(), length * 4 + terminator.size() + 1);
}

// Called with at least max_line_bytes + 2 bytes of one line buffered and no
// '\n' among them: discards blocks until the newline, keeping the line's
// first kTooLongPrefixBytes bytes. The prefix is collected across refills:
// how much of the line was buffered on entry (at least max_line_bytes + 2
// bytes, often less than the prefix) depends on the buffer's history (its
// size, earlier files, a resume), and the prefix goes to the reject file and
// into the prefix digest, which must be the same on every read.
bool RecordReader::skip_long_line(Record& out) {
  const char* base = buf_;
  long_prefix_.assign(base + begin_, std::min(end_ - begin_, kTooLongPrefixBytes));
  const auto keep = [this](const char* bytes, std::size_t n) {
    if (long_prefix_.size() >= kTooLongPrefixBytes) return;
    long_prefix_.append(bytes, std::min(n, kTooLongPrefixBytes - long_prefix_.size()));
  };
  std::uint64_t length = end_ - begin_;
  bool last_was_cr = base[end_ - 1] == '\r';
  long_line_start_ = offset_;
  offset_ += end_ - begin_;
  begin_ = scan_ = end_ = 0;
  out.terminator = kNoTerminator;
  for (;;) {
    if (!refill()) break;  // EOF: the long line was the last, without newline
    base = buf_;
    const void* nl = std::memchr(base, '\n', end_);
    if (nl == nullptr) {
      keep(base, end_);
      length += end_;
      offset_ += end_;
      last_was_cr = base[end_ - 1] == '\r';
      begin_ = scan_ = end_ = 0;
      continue;
    }
    const auto nl_pos = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
    keep(base, nl_pos);
    const bool cr = nl_pos > 0 ? base[nl_pos - 1] == '\r' : last_was_cr;
    length += nl_pos;
    out.terminator = kLf;
    if (cr) {
      --length;
      out.terminator = kCrLf;
    }
    offset_ += nl_pos + 1;
    begin_ = scan_ = nl_pos + 1;
    break;
  }
  // A line shorter than the prefix may have taken the '\r' of its "\r\n".
  if (long_prefix_.size() > length) long_prefix_.resize(static_cast<std::size_t>(length));
  out.line = long_prefix_;
  out.line_bytes = length;
  out.too_long = true;
  mix_too_long(length, out.terminator);
  long_line_start_.reset();
  out.line_number = ++records_;
  out.end_offset = offset_;
  return true;
}

void RecordReader::skip_to(InputCursor cursor, std::optional<std::uint64_t> prefix_digest) {
  if (!source_) throw std::logic_error("RecordReader::skip_to before open");
  if (records_ != 0 || offset_ != start_ || end_ != 0) {
    throw std::logic_error("RecordReader::skip_to after records were read");
  }
  const auto mismatch = [&](const std::string& what) {
    return InputError(file_.absolute_path.string(), records_, offset_,
                      "resume cursor mismatch: " + what +
                          " (cursor: " + std::to_string(cursor.records) + " records, offset " +
                          std::to_string(cursor.decompressed_offset) + ")");
  };
  if ((cursor.records == 0) != (cursor.decompressed_offset == start_)) {
    throw mismatch("records and offset disagree");
  }
  if (cursor.records == 0) return;
  if (source_->seekable()) {
    // Plain file: seek, after checking the offset is a line boundary.
    const std::uint64_t off = cursor.decompressed_offset;
    if (off < start_ || off > limit_) throw mismatch("offset outside the range being read");
    source_->seek(off - 1);
    char probe[2] = {0, 0};
    std::size_t got = 0;
    try {
      got = source_->read(std::span<char>(probe, 2));
    } catch (const InputError& e) {
      rethrow_with_location(e);
    }
    if (got == 0) throw mismatch("offset beyond the end of the file");
    // The end of the file is a boundary too (a last line without newline).
    if (probe[0] != '\n' && got == 2) throw mismatch("offset is not at a line boundary");
    source_->seek(off);
    records_ = cursor.records;
    offset_ = off;
    // Not re-read: the saved chain goes on.
    if (prefix_digest && options_.prefix_digest) digest_ = *prefix_digest;
    resume_method_ = ResumeMethod::kSeek;
    return;
  }
  // A frame start is used only with a digest to carry on (without one the
  // chain would restart at 0 and describe nothing).
  if (cursor.frame && prefix_digest && source_->frame_seekable()) {
    if (resume_at_frame(cursor, *prefix_digest)) {
      resume_method_ = ResumeMethod::kFrame;
      return;
    }
    // The saved start is only a shortcut: read from byte 0 as without one.
    source_.reset();
    reset_position();
    read_ahead_ = false;
    try {
      source_ = open_byte_source(file_.absolute_path, file_.compression);
    } catch (const InputError& e) {
      throw InputError(file_.absolute_path.string(), 0, 0, e.reason());
    }
  }
  resume_method_ = ResumeMethod::kReread;
  Record r;
  while (records_ < cursor.records) {
    if (!next(r)) throw mismatch("input ended after " + std::to_string(records_) + " records");
  }
  if (offset_ != cursor.decompressed_offset) {
    throw mismatch("offset after " + std::to_string(records_) + " records is " +
                   std::to_string(offset_));
  }
  if (prefix_digest && options_.prefix_digest && *prefix_digest != digest_) {
    throw mismatch("the records before the cursor are not the ones read before");
  }
}

// Decodes from the cursor's frame start and discards up to the cursor's
// offset; false (with resume_fallback_ set) when that does not land on a
// line end, leaving the reader to be reopened.
bool RecordReader::resume_at_frame(const InputCursor& cursor, std::uint64_t prefix_digest) {
  const FrameStart start = *cursor.frame;
  const std::uint64_t target = cursor.decompressed_offset;
  const auto give_up = [&](const std::string& why) {
    resume_fallback_ = "the saved frame start (compressed byte " +
                       std::to_string(start.compressed_offset) + ", decompressed byte " +
                       std::to_string(start.decompressed_offset) +
                       ") does not lead to the cursor: " + why + "; read from the start instead";
    return false;
  };
  if (start.decompressed_offset >= target) return give_up("it is not before the cursor");
  try {
    source_->seek_frame(start);
    offset_ = start.decompressed_offset;
    // Invariant: offset_ < target, so the byte before the target is
    // buffered once offset_ + buffered bytes reach it.
    while (offset_ + (end_ - begin_) < target) {
      offset_ += end_ - begin_;
      begin_ = scan_ = end_ = 0;
      if (!refill()) return give_up("the stream ends before the cursor's offset");
    }
    const std::size_t at = begin_ + static_cast<std::size_t>(target - offset_);
    const bool line_end = buf_[at - 1] == '\n';
    begin_ = scan_ = at;
    offset_ = target;
    // The end of the stream is a boundary too (a last line without newline).
    if (!line_end && (at != end_ || refill())) {
      return give_up("the byte before the cursor is not a line end");
    }
  } catch (const InputError& e) {
    return give_up(e.reason());
  }
  records_ = cursor.records;
  if (options_.prefix_digest) digest_ = prefix_digest;  // not re-read: the saved chain goes on
  return true;
}

}  // namespace bloomshard::io
