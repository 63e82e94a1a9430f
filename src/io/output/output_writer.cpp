// Output writer: a staging buffer drained either straight to the file or
// through libdeflate (one gzip member per drained stage) or zlib deflate (gzip
// wrapper) / zstd streaming compression; each end_frame() finishes the
// current gzip member or zstd frame. Pieces of an
// uncompressed output bypass the stage (writev). A compressed output drains
// through a BackgroundDrain where OutputOptions::background_buffers asks for
// one: the same codec calls in the same order, on the drain's thread.
#include "io/output/output_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "io/durable/durable_entries.hpp"
#include "io/errors.hpp"
#include "io/output/background_drain.hpp"
#include "io/output/gzip_member_compressor.hpp"
#include "io/output/stored_output.hpp"

namespace bloomshard::io {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMinBufferBytes = 4096;
constexpr std::size_t kMaxBufferBytes = std::size_t{1} << 30;  // zlib counts in 32 bits
// iovecs per writev call (IOV_MAX on Linux).
constexpr std::size_t kMaxIovecs = 1024;
}  // namespace

struct OutputWriter::Impl {
  fs::path path;
  Compression compression = Compression::kNone;
  int fd = -1;
  std::unique_ptr<char[]> own_stage;  // the stage when there is no drain
  char* stage = nullptr;              // the buffer being filled (own_stage or the drain's)
  std::size_t stage_cap = 0;
  std::size_t stage_len = 0;
  std::unique_ptr<char[]> zbuf;
  std::size_t zcap = 0;
  z_stream z{};
  bool z_ready = false;
  std::unique_ptr<GzipMemberCompressor> gzip;  // gzip unless gzip_with_zlib
  ZSTD_CCtx* zc = nullptr;
  bool zstd_raw = false;  // OutputOptions::stored for zstd: raw frames, no zc
  bool frame_has_data = false;
  // Bytes in the file. Written by whoever runs the codec: with a drain its
  // thread, so the caller reads it only after drain->wait() (settle()).
  std::uint64_t file_len = 0;
  std::uint64_t writeback_bytes = 0;  // OutputOptions::writeback_bytes
  std::uint64_t writeback_from = 0;   // bytes below this were handed to writeback
  std::uint64_t bytes_in = 0;
  bool zstd_content_size = true;  // OutputOptions::zstd_content_size
  // Owns the codec state above (z, gzip, zc, zbuf) and file_len while it
  // exists: the caller only fills `stage` and hands it off.
  std::unique_ptr<BackgroundDrain> drain_thread;

  Impl(fs::path p, Compression c) : path(std::move(p)), compression(c) {}
  ~Impl() {
    drain_thread.reset();  // joins: the thread uses the codec and the fd below
    if (z_ready) deflateEnd(&z);
    if (zc != nullptr) ZSTD_freeCCtx(zc);
    if (fd >= 0) ::close(fd);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  [[noreturn]] void fail(const std::string& what, int err) const {
    throw OutputError(path.string(), what + ": " + std::strerror(err));
  }
  [[noreturn]] void fail(const std::string& what) const { throw OutputError(path.string(), what); }

  static std::string level_problem(const char* codec, int level, const std::string& range) {
    return std::string("compression level ") + std::to_string(level) + " is out of " + codec +
           "'s range " + range;
  }

  void start(const OutputOptions& options) {
    stage_cap = std::clamp(options.buffer_bytes, kMinBufferBytes, kMaxBufferBytes);
    writeback_bytes = options.writeback_bytes;
    zstd_content_size = options.zstd_content_size;
    if (compression == Compression::kGzip && !options.gzip_with_zlib) {
      const int level = options.level.value_or(kDefaultGzipLevel);
      if (level < kGzipMinLevel || level > kGzipMaxLevel) {
        fail(level_problem("gzip (libdeflate)", level, "1-12"));
      }
      gzip = std::make_unique<GzipMemberCompressor>(options.stored ? kGzipStoredLevel : level);
      zcap = gzip->bound(stage_cap);
    } else if (compression == Compression::kGzip) {
      const int level = options.level.value_or(kDefaultGzipLevel);
      if (level < 1 || level > 9) fail(level_problem("zlib", level, "1-9"));
      // 15 + 16: gzip wrapper (header mtime 0, so output is reproducible).
      if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        fail("cannot start zlib deflate (level " + std::to_string(level) + ")");
      }
      z_ready = true;
      zcap = stage_cap;
    } else if (compression == Compression::kZstd) {
      const int level = options.level.value_or(kDefaultZstdLevel);
      if (level < 1 || level > ZSTD_maxCLevel()) {
        fail(level_problem("zstd", level, "1-" + std::to_string(ZSTD_maxCLevel())));
      }
      if (options.stored) {  // raw frames (stored_output.hpp), no libzstd context
        zstd_raw = true;
        zcap = zstd_raw_frame_bound(stage_cap);
      } else {
        zc = ZSTD_createCCtx();
        if (zc == nullptr) fail("cannot create zstd context");
        if (ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, level)) != 0 ||
            ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1)) != 0) {
          fail("cannot set zstd parameters (level " + std::to_string(level) + ")");
        }
        zcap = std::max(stage_cap, ZSTD_CStreamOutSize());
      }
    }
    if (zcap != 0) zbuf = std::make_unique<char[]>(zcap);
    if (compression != Compression::kNone && options.background_buffers > 0) {
      drain_thread = std::make_unique<BackgroundDrain>(
          path.string(), options.background_buffers + 1, stage_cap,
          [this](std::span<const char> data, bool finish) { compress_and_write(data, finish); });
      stage = drain_thread->stage();
    } else {
      own_stage = std::make_unique<char[]>(stage_cap);
      stage = own_stage.get();
    }
  }

  void write_fd(const char* data, std::size_t n) {
    while (n > 0) {
      const ssize_t put = ::write(fd, data, n);
      if (put < 0) {
        if (errno == EINTR) continue;
        fail("write failed", errno);
      }
      data += put;
      n -= static_cast<std::size_t>(put);
      file_len += static_cast<std::uint64_t>(put);
    }
    start_writeback();
  }

  // writev of all `iov` (advanced past partial writes).
  void writev_fd(iovec* iov, std::size_t count) {
    while (count > 0) {
      const ssize_t put = ::writev(fd, iov, static_cast<int>(count));
      if (put < 0) {
        if (errno == EINTR) continue;
        fail("write failed", errno);
      }
      if (put == 0) fail("write failed: no progress");
      file_len += static_cast<std::uint64_t>(put);
      auto left = static_cast<std::size_t>(put);
      while (count > 0 && left >= iov->iov_len) {
        left -= iov->iov_len;
        ++iov;
        --count;
      }
      if (count > 0) {
        iov->iov_base = static_cast<char*>(iov->iov_base) + left;
        iov->iov_len -= left;
      }
    }
    start_writeback();
  }

  // Every writeback_bytes, asks the kernel to start writing what was
  // written so far (sync_file_range WRITE: returns without waiting),
  // RocksDB's bytes_per_sync: the fsync at a checkpoint then finds most
  // pages clean instead of flushing a round's worth at once, and dirty pages
  // do not pile up to the kernel's throttling limit between checkpoints. A
  // hint: a failure is ignored here, fsync reports real ones.
  void start_writeback() noexcept {
    if (writeback_bytes == 0 || file_len - writeback_from < writeback_bytes) return;
    (void)::sync_file_range(fd, static_cast<off_t>(writeback_from),
                            static_cast<off_t>(file_len - writeback_from), SYNC_FILE_RANGE_WRITE);
    writeback_from = file_len;
  }

  // Pushes the staged bytes into the file (through the codec, on the
  // drain's thread if there is one); with `finish`, also ends the current
  // member/frame.
  void drain(bool finish) {
    if (drain_thread) {
      stage = drain_thread->hand_off(stage_len, finish);
    } else {
      compress_and_write({stage, stage_len}, finish);
    }
    stage_len = 0;
  }

  // Waits until everything handed to the drain's thread is in the file (and
  // file_len says so); throws its pending error.
  void settle() {
    if (drain_thread) drain_thread->wait();
  }

  // Throws the drain thread's pending error: every call of the writer
  // checks first, so an error in the background surfaces at the next one.
  void check() const {
    if (fd < 0) fail("written after close");
    if (drain_thread) drain_thread->rethrow_if_failed();
  }

  // `data` through the codec into the file; with `finish`, also ends the
  // current member/frame.
  void compress_and_write(std::span<const char> data, bool finish) {
    if (compression == Compression::kNone) {
      write_fd(data.data(), data.size());
    } else if (gzip) {
      // Each drained stage is a whole member; `finish` only matters for an
      // empty stage, which makes a member only when asked to (close()).
      if (!data.empty() || finish) {
        write_fd(zbuf.get(), gzip->compress(data, {zbuf.get(), zcap}));
      }
    } else if (compression == Compression::kGzip) {
      // deflate reads through a non-const pointer but does not write.
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      z.avail_in = static_cast<uInt>(data.size());
      for (;;) {
        z.next_out = reinterpret_cast<Bytef*>(zbuf.get());
        z.avail_out = static_cast<uInt>(zcap);
        const int rc = deflate(&z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
          fail("zlib deflate failed (" + std::to_string(rc) + ")");
        }
        write_fd(zbuf.get(), zcap - z.avail_out);
        if (finish ? rc == Z_STREAM_END : (z.avail_in == 0 && z.avail_out != 0)) break;
      }
      if (finish && deflateReset(&z) != Z_OK) fail("zlib deflateReset failed");
    } else if (zstd_raw) {
      // As libdeflate's members: each drained stage a whole frame.
      if (!data.empty() || finish) {
        write_fd(zbuf.get(), write_zstd_raw_frame(data, {zbuf.get(), zcap}));
      }
    } else {
      ZSTD_inBuffer in{data.data(), data.size(), 0};
      // Streamed first, so that ZSTD_e_end never sees the whole frame at once.
      if (finish && !zstd_content_size && !data.empty()) pump_zstd(in, false);
      pump_zstd(in, finish);
    }
  }

  // Feeds `in` to the zstd stream (with `finish`, to the frame's end) and
  // writes what comes out.
  void pump_zstd(ZSTD_inBuffer& in, bool finish) {
    for (;;) {
      ZSTD_outBuffer out{zbuf.get(), zcap, 0};
      const std::size_t rem =
          ZSTD_compressStream2(zc, &out, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(rem) != 0)
        fail(std::string("zstd compression failed: ") + ZSTD_getErrorName(rem));
      write_fd(zbuf.get(), out.pos);
      if (finish ? rem == 0 : in.pos == in.size) break;
    }
  }

  void append(std::string_view data) {
    check();
    if (data.empty()) return;
    bytes_in += data.size();
    if (compression != Compression::kNone) frame_has_data = true;
    while (!data.empty()) {
      if (stage_len == stage_cap) drain(false);
      const std::size_t n = std::min(data.size(), stage_cap - stage_len);
      std::memcpy(stage + stage_len, data.data(), n);
      stage_len += n;
      data.remove_prefix(n);
    }
  }

  void append_pieces(std::span<const std::string_view> pieces) {
    check();
    if (compression != Compression::kNone) {
      for (const std::string_view piece : pieces) append(piece);
      return;
    }
    if (stage_len != 0) drain(false);
    std::array<iovec, kMaxIovecs> iov{};
    std::size_t used = 0;
    for (const std::string_view piece : pieces) {
      if (piece.empty()) continue;
      bytes_in += piece.size();
      // writev reads the bytes only: the cast drops no real constness.
      iov[used++] = {const_cast<char*>(piece.data()), piece.size()};
      if (used == iov.size()) {
        writev_fd(iov.data(), used);
        used = 0;
      }
    }
    if (used != 0) writev_fd(iov.data(), used);
  }

  void end_frame() {
    check();
    if (!frame_has_data) return;
    drain(true);
    frame_has_data = false;
  }

  void flush() {
    end_frame();
    if (stage_len != 0) drain(false);
    settle();
  }

  void sync() {
    if (::fsync(fd) != 0) fail("fsync failed", errno);
  }

  void close() {
    flush();
    if (compression != Compression::kNone && file_len == 0) {
      drain(true);  // one empty frame
      settle();
    }
    drain_thread.reset();  // joins; frees the staging buffers
    const int f = fd;
    fd = -1;
    if (::close(f) != 0) fail("close failed", errno);
  }
};

OutputWriter::OutputWriter() noexcept = default;
OutputWriter::OutputWriter(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
OutputWriter::OutputWriter(OutputWriter&&) noexcept = default;

OutputWriter& OutputWriter::operator=(OutputWriter&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (...) {  // NOLINT(bugprone-empty-catch): documented best-effort close
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

OutputWriter::~OutputWriter() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw
  }
}

OutputWriter OutputWriter::create(const fs::path& path, Compression compression,
                                  OutputOptions options) {
  auto impl = std::make_unique<Impl>(path, compression);
  if (options.sync_entries) {
    if (path.has_parent_path()) create_directories_durably(path.parent_path());
  } else if (path.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) impl->fail("cannot create parent directory: " + ec.message());
  }
  impl->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (impl->fd < 0) impl->fail("cannot create", errno);
  // The entry before any data: the data is fsynced at each commit, and the
  // checkpoint recording its length comes after both.
  if (options.sync_entries) sync_parent_directory(path);
  impl->start(options);
  return OutputWriter(std::move(impl));
}

OutputWriter OutputWriter::open_for_resume(const fs::path& path, Compression compression,
                                           std::uint64_t committed_length, OutputOptions options) {
  auto impl = std::make_unique<Impl>(path, compression);
  impl->fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (impl->fd < 0) impl->fail("cannot open for resume", errno);
  struct stat st {};
  if (::fstat(impl->fd, &st) != 0) impl->fail("fstat failed", errno);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < committed_length) {
    impl->fail("file is shorter (" + std::to_string(size) + " bytes) than its committed length " +
               std::to_string(committed_length));
  }
  const auto len = static_cast<off_t>(committed_length);
  if (::ftruncate(impl->fd, len) != 0) impl->fail("truncate failed", errno);
  if (::lseek(impl->fd, len, SEEK_SET) < 0) impl->fail("seek failed", errno);
  impl->file_len = committed_length;
  impl->start(options);
  return OutputWriter(std::move(impl));
}

void OutputWriter::write(std::string_view line, std::string_view terminator) {
  impl_->append(line);
  impl_->append(terminator);
}

void OutputWriter::write_bytes(std::string_view bytes) { impl_->append(bytes); }

void OutputWriter::write_pieces(std::span<const std::string_view> pieces) {
  impl_->append_pieces(pieces);
}

void OutputWriter::end_frame() { impl_->end_frame(); }

std::uint64_t OutputWriter::flush_and_sync() {
  impl_->flush();
  impl_->sync();
  return impl_->file_len;
}

std::uint64_t OutputWriter::flush() {
  impl_->flush();
  return impl_->file_len;
}

void OutputWriter::close() {
  if (impl_ && impl_->fd >= 0) impl_->close();
}

bool OutputWriter::is_open() const noexcept { return impl_ && impl_->fd >= 0; }

const fs::path& OutputWriter::path() const noexcept {
  static const fs::path kEmpty;
  return impl_ ? impl_->path : kEmpty;
}

Compression OutputWriter::compression() const noexcept {
  return impl_ ? impl_->compression : Compression::kNone;
}

std::uint64_t OutputWriter::bytes_in() const noexcept { return impl_ ? impl_->bytes_in : 0; }

std::uint64_t OutputWriter::file_length() const noexcept {
  if (!impl_) return 0;
  // What the thread still holds is written first; its error stays pending.
  if (impl_->drain_thread) impl_->drain_thread->wait_quietly();
  return impl_->file_len;
}

fs::path output_path_for(const fs::path& output_dir, std::string_view relative_path) {
  const auto refuse = [&](const char* why) {
    return OutputError((output_dir / "").string() + std::string(relative_path),
                       std::string("refusing output path: ") + why);
  };
  if (relative_path.empty()) throw refuse("empty relative path");
  if (relative_path.find('\0') != std::string_view::npos) throw refuse("NUL byte in path");
  if (relative_path.front() == '/') throw refuse("absolute path");
  std::string_view rest = relative_path;
  for (;;) {
    const std::size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (part.empty()) throw refuse("empty path component");
    if (part == "." || part == "..") throw refuse("'.' or '..' component");
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return output_dir / fs::path(std::string(relative_path));
}

}  // namespace bloomshard::io
