// Plain, gzip (igzip inflate, multi-member) and zstd (streaming, multi-frame)
// byte sources over POSIX file descriptors. A compressed source that meets
// damage returns whatever it decoded before it, and throws on the next
// read, so a broken input gives up every complete line before the damage.
// Both codecs note frame starts as they pass them (CompressedInput) and can
// restart at one (seek_frame) for a resume.
#include "io/records/byte_source.hpp"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/errors.hpp"

namespace bloomshard::io {
namespace {

// Owns a read-only descriptor and reads with EINTR retry.
class InputFd {
 public:
  explicit InputFd(const std::filesystem::path& path) : path_(path.string()) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail("cannot open");
#ifdef POSIX_FADV_SEQUENTIAL
    (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  }
  ~InputFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  InputFd(const InputFd&) = delete;
  InputFd& operator=(const InputFd&) = delete;

  std::size_t read(char* dst, std::size_t n) {
    for (;;) {
      const ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) fail("read failed");
    }
  }

  void seek(std::uint64_t offset) {
    if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) fail("seek failed");
  }

  [[noreturn]] void fail(const char* what) const {
    throw InputError(path_, 0, 0, std::string(what) + ": " + std::strerror(errno));
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

class PlainSource final : public ByteSource {
 public:
  explicit PlainSource(const std::filesystem::path& path) : fd_(path) {}

  std::size_t read(std::span<char> dst) override {
    std::size_t total = 0;
    // Fill the whole span unless EOF: fewer, larger blocks for the caller.
    while (total < dst.size()) {
      const std::size_t got = fd_.read(dst.data() + total, dst.size() - total);
      if (got == 0) break;
      total += got;
    }
    offset_ += total;
    return total;
  }
  bool seekable() const noexcept override { return true; }
  void seek(std::uint64_t offset) override {
    fd_.seek(offset);
    offset_ = offset;
  }
  std::uint64_t compressed_offset() const noexcept override { return offset_; }

 private:
  InputFd fd_;
  std::uint64_t offset_ = 0;
};

// Compressed input staging shared by both codecs, and the frame-start notes.
class CompressedInput {
 public:
  explicit CompressedInput(const std::filesystem::path& path)
      : fd_(path), buf_(std::make_unique<char[]>(kCompressedBlockBytes)) {}

  // A frame or member ended just before consumed(), after `decompressed`
  // bytes of the stream: note where the next one starts, if far enough
  // from the last note (the spacing rule of byte_source.hpp, which depends
  // on the file alone, so a resumed read notes what a straight one does).
  void note_frame_start(std::uint64_t decompressed) {
    if (decompressed < last_noted_ + kFrameStartSpacing) return;
    const std::lock_guard lock(frames_mutex_);
    frames_.push_back({consumed(), decompressed});
    last_noted_ = decompressed;
  }
  std::optional<FrameStart> frame_start_before(std::uint64_t decompressed) const {
    const std::lock_guard lock(frames_mutex_);
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      if (it->decompressed_offset < decompressed) return *it;
    }
    return std::nullopt;
  }
  void forget_frames_before(std::uint64_t decompressed) {
    const std::lock_guard lock(frames_mutex_);
    std::size_t keep_from = 0;
    while (keep_from + 1 < frames_.size() &&
           frames_[keep_from + 1].decompressed_offset < decompressed) {
      ++keep_from;
    }
    frames_.erase(frames_.begin(), frames_.begin() + static_cast<std::ptrdiff_t>(keep_from));
  }
  // Drops the staged block and reads on from `start`, which becomes the
  // only note (the notes before it belong to bytes this read never sees).
  void seek(FrameStart start) {
    fd_.seek(start.compressed_offset);
    read_total_ = start.compressed_offset;
    size_ = pos_ = 0;
    pending_ = nullptr;
    const std::lock_guard lock(frames_mutex_);
    frames_.assign(1, start);
    last_noted_ = start.decompressed_offset;
  }

  // Reads the next block; false at EOF.
  bool fill() {
    size_ = fd_.read(buf_.get(), kCompressedBlockBytes);
    pos_ = 0;
    read_total_ += size_;
    return size_ != 0;
  }
  std::uint64_t consumed() const noexcept { return read_total_ - (size_ - pos_); }
  // True for a file of zero bytes (a seek to a frame start reads on at
  // its offset, so it never counts as empty).
  bool empty_file() const noexcept { return read_total_ == 0; }
  [[noreturn]] void fail(const std::string& reason) const {
    throw InputError(fd_.path(), 0, 0,
                     reason + " at compressed byte " + std::to_string(consumed()));
  }

  // Runs one decode step loop; if it fails after producing `produced()`
  // bytes, those are returned first and the error is thrown by the next
  // call, so every line before the damage reaches the reader.
  template <typename Step, typename Produced>
  std::size_t decode(Step&& step, Produced&& produced) {
    if (pending_) std::rethrow_exception(pending_);
    try {
      step();
    } catch (const InputError&) {
      if (produced() == 0) throw;
      pending_ = std::current_exception();
    }
    return produced();
  }

  std::unique_ptr<char[]>& buf() noexcept { return buf_; }
  std::size_t size_ = 0;
  std::size_t pos_ = 0;

 private:
  InputFd fd_;
  std::unique_ptr<char[]> buf_;
  std::uint64_t read_total_ = 0;
  std::exception_ptr pending_;  // damage found after some output was produced
  // The notes are read and trimmed by the reader while a read-ahead thread
  // (prefetch_source.hpp) decodes and adds to them: under a lock of their own.
  mutable std::mutex frames_mutex_;
  std::vector<FrameStart> frames_;  // noted starts, decompressed offsets ascending
  std::uint64_t last_noted_ = 0;    // decompressed offset of the last note (0: the file start)
};

// The frame-start part of ByteSource for both codecs: forwards to the notes
// of `in_` and counts the decompressed bytes handed out.
class FramedSource : public ByteSource {
 public:
  explicit FramedSource(const std::filesystem::path& path) : in_(path) {}
  std::uint64_t compressed_offset() const noexcept override { return in_.consumed(); }
  bool frame_seekable() const noexcept override { return true; }
  std::optional<FrameStart> frame_start_before(std::uint64_t decompressed) const override {
    return in_.frame_start_before(decompressed);
  }
  void forget_frames_before(std::uint64_t decompressed) override {
    in_.forget_frames_before(decompressed);
  }
  void seek_frame(FrameStart start) override {
    restart_decoder();
    in_.seek(start);
    decompressed_ = start.decompressed_offset;
  }

 protected:
  // Resets the codec to expect the first byte of a frame or member.
  virtual void restart_decoder() = 0;
  // Decompressed offset of the byte the current read() writes at `out`.
  std::uint64_t stream_offset(const void* out) const noexcept {
    return decompressed_ + static_cast<std::uint64_t>(static_cast<const char*>(out) - out_begin_);
  }
  // Runs one read() into dst through the codec step `step`; `produced`
  // says how many bytes it wrote.
  template <typename Step, typename Produced>
  std::size_t framed_read(std::span<char> dst, Step&& step, Produced&& produced) {
    out_begin_ = dst.data();
    const std::size_t n = in_.decode(step, produced);
    decompressed_ += n;
    return n;
  }

  CompressedInput in_;

 private:
  std::uint64_t decompressed_ = 0;  // stream bytes handed out before this read()
  const char* out_begin_ = nullptr;
};

// gzip through ISA-L's igzip inflate (several times zlib's speed); it
// parses each member's header and checks its CRC-32 and length trailer.
class GzipSource final : public FramedSource {
 public:
  explicit GzipSource(const std::filesystem::path& path)
      : FramedSource(path), state_(std::make_unique<inflate_state>()) {
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_GZIP;
  }

  std::size_t read(std::span<char> dst) override {
    const std::size_t want =
        std::min<std::size_t>(dst.size(), std::numeric_limits<std::uint32_t>::max());
    state_->next_out = reinterpret_cast<std::uint8_t*>(dst.data());
    state_->avail_out = static_cast<std::uint32_t>(want);
    return framed_read(
        dst, [&] { inflate_into(); }, [&] { return want - state_->avail_out; });
  }

 private:
  void restart_decoder() override {
    reset_member();
    in_member_ = member_ended_ = in_eof_ = done_ = false;
  }

  // isal_inflate_reset forgets the wrapper: gzip is asked for again.
  void reset_member() {
    isal_inflate_reset(state_.get());
    state_->crc_flag = ISAL_GZIP;
  }

  static std::string isal_error(int rc) {
    switch (rc) {
      case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
      case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
      case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
      case ISAL_INVALID_WRAPPER:
        return "incorrect gzip header";
      case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
      case ISAL_INCORRECT_CHECKSUM:
        return "incorrect data check (CRC-32 or length)";
      default:
        return "igzip error " + std::to_string(rc);
    }
  }

  void inflate_into() {
    inflate_state& st = *state_;
    while (st.avail_out > 0 && !done_) {
      if (in_.pos_ == in_.size_ && !in_eof_ && !in_.fill()) in_eof_ = true;
      const bool input_left = in_.pos_ != in_.size_;
      if (!input_left && in_eof_ && !in_member_) {
        // A zero-byte file has no member at all: truncated, as `gzip -t` says.
        if (in_.empty_file()) in_.fail("truncated gzip stream (empty file: no gzip member)");
        done_ = true;  // clean end: after the last member
        break;
      }
      if (member_ended_) {
        // Another member follows: concatenated gzip members form one stream.
        reset_member();
        member_ended_ = false;
      }
      st.next_in = reinterpret_cast<std::uint8_t*>(in_.buf().get() + in_.pos_);
      st.avail_in = static_cast<std::uint32_t>(in_.size_ - in_.pos_);
      in_member_ = true;
      const std::uint32_t out_before = st.avail_out;
      // At EOF inflate still runs with no input: it may hold output to flush.
      const int rc = isal_inflate(&st);
      const bool consumed = in_.pos_ != in_.size_ - st.avail_in;
      in_.pos_ = in_.size_ - st.avail_in;
      if (rc < 0) in_.fail("corrupt gzip data: " + isal_error(rc));
      if (st.block_state == ISAL_BLOCK_FINISH) {
        in_member_ = false;
        member_ended_ = true;
        in_.note_frame_start(stream_offset(st.next_out));
      } else if (!consumed && st.avail_out == out_before && st.avail_out > 0) {  // no progress
        if (st.avail_in != 0) in_.fail("corrupt gzip data (inflate made no progress)");
        if (in_eof_) in_.fail("truncated gzip stream (member not finished at end of file)");
      }
    }
  }

  std::unique_ptr<inflate_state> state_;  // ~100 KiB: on the heap
  bool in_member_ = false;
  bool member_ended_ = false;
  bool in_eof_ = false;
  bool done_ = false;
};

class ZstdSource final : public FramedSource {
 public:
  explicit ZstdSource(const std::filesystem::path& path)
      : FramedSource(path), dctx_(ZSTD_createDCtx()) {
    if (dctx_ == nullptr) in_.fail("cannot create zstd context");
  }
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }

  std::size_t read(std::span<char> dst) override {
    ZSTD_outBuffer out{dst.data(), dst.size(), 0};
    return framed_read(
        dst, [&] { decompress_into(out); }, [&] { return out.pos; });
  }

 private:
  void restart_decoder() override {
    if (ZSTD_isError(ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only)) != 0) {
      in_.fail("zstd context reset failed");
    }
    in_frame_ = in_eof_ = done_ = false;
  }

  void decompress_into(ZSTD_outBuffer& out) {
    while (out.pos < out.size && !done_) {
      if (in_.pos_ == in_.size_ && !in_eof_ && !in_.fill()) in_eof_ = true;
      const bool input_left = in_.pos_ != in_.size_;
      if (!input_left && in_eof_ && !in_frame_) {
        // A zero-byte file has no frame at all: truncated, as `zstd -t` says.
        if (in_.empty_file()) in_.fail("truncated zstd stream (empty file: no zstd frame)");
        done_ = true;  // clean end: after the last frame
        break;
      }
      const std::size_t before = out.pos;
      const std::size_t in_before = in_.pos_;
      ZSTD_inBuffer in{in_.buf().get(), in_.size_, in_.pos_};
      const std::size_t rc = ZSTD_decompressStream(dctx_, &out, &in);
      in_.pos_ = in.pos;
      if (ZSTD_isError(rc) != 0) {
        in_.fail(std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc));
      }
      // 0 = a frame is complete and fully flushed (the input stands just
      // after it); more frames may follow.
      // (A frame may begin and end within one call: then in_frame_ was false.)
      if (rc == 0 && (in_frame_ || in.pos != in_before)) {
        in_.note_frame_start(stream_offset(static_cast<const char*>(out.dst) + out.pos));
      }
      in_frame_ = rc != 0;
      if (in_eof_ && !input_left && in_frame_ && out.pos == before) {
        in_.fail("truncated zstd stream (frame not finished at end of file)");
      }
    }
  }

  ZSTD_DCtx* dctx_;
  bool in_frame_ = false;
  bool in_eof_ = false;
  bool done_ = false;
};

}  // namespace

void ByteSource::seek(std::uint64_t /*offset*/) {
  throw std::logic_error("ByteSource::seek on a compressed stream");
}

std::optional<FrameStart> ByteSource::frame_start_before(std::uint64_t /*offset*/) const {
  return std::nullopt;
}

void ByteSource::forget_frames_before(std::uint64_t /*offset*/) {}

void ByteSource::seek_frame(FrameStart /*start*/) {
  throw std::logic_error("ByteSource::seek_frame on a source without frames");
}

std::unique_ptr<ByteSource> open_byte_source(const std::filesystem::path& path,
                                             Compression compression) {
  switch (compression) {
    case Compression::kGzip:
      return std::make_unique<GzipSource>(path);
    case Compression::kZstd:
      return std::make_unique<ZstdSource>(path);
    case Compression::kNone:
      break;
  }
  return std::make_unique<PlainSource>(path);
}

}  // namespace bloomshard::io
