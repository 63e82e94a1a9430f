// The read-ahead thread and its hand-over: a bounded queue of decoded
// blocks between one producer (the thread, the only caller of the wrapped
// source's read()) and one consumer (the reader), under one mutex.
#include "io/records/prefetch_source.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "io/errors.hpp"
#include "io/signal_blocked_thread.hpp"

namespace bloomshard::io {

PrefetchSource::PrefetchSource(std::unique_ptr<ByteSource> inner, PrefetchOptions options)
    : inner_(std::move(inner)), options_(options), budget_(options.read_limit) {
  if (!inner_) throw std::invalid_argument("PrefetchSource: no source to wrap");
  if (options_.blocks == 0 || options_.block_bytes == 0) {
    throw std::invalid_argument("PrefetchSource: blocks and block_bytes must be positive");
  }
  buffers_.reserve(options_.blocks);
  free_.reserve(options_.blocks);  // so that giving a buffer back never allocates
  compressed_ = inner_->compressed_offset();
}

PrefetchSource::~PrefetchSource() { stop_and_drop(); }

void PrefetchSource::stop_and_drop() noexcept {
  if (thread_.joinable()) {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    room_.notify_one();
    thread_.join();
  }
  // Whatever was read ahead goes back to the free list, unread.
  for (const Block& b : blocks_) free_.push_back(b.bytes);
  blocks_.clear();
  stop_ = ended_ = false;
  error_ = nullptr;
}

void PrefetchSource::run() noexcept {
  std::unique_lock lock(mutex_);
  for (;;) {
    room_.wait(lock,
               [this] { return stop_ || !free_.empty() || buffers_.size() < options_.blocks; });
    if (stop_) return;
    char* buffer = nullptr;
    if (!free_.empty()) {
      buffer = free_.back();
      free_.pop_back();
    }
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(options_.block_bytes, budget_));
    lock.unlock();
    std::size_t got = 0;
    std::uint64_t compressed_after = 0;
    std::exception_ptr failure;
    try {
      if (buffer == nullptr) {
        // Not zero-filled: a block is resident only as far as reads fill it.
        auto fresh = std::unique_ptr<char[]>(new char[options_.block_bytes]);
        buffer = fresh.get();
        const std::lock_guard guard(mutex_);
        buffers_.push_back(std::move(fresh));
      }
      got = want == 0 ? 0 : inner_->read(std::span<char>(buffer, want));
      compressed_after = inner_->compressed_offset();
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (got == 0 && buffer != nullptr) free_.push_back(buffer);
    if (got != 0) {
      blocks_.push_back({buffer, got, 0, compressed_after});
      budget_ -= got;
    }
    // The wrapped sources hand out what they decoded before damage and throw
    // on the next call, so an error comes with no bytes: it ends the queue.
    if (failure != nullptr || got == 0) {
      error_ = failure;
      ended_ = true;
    }
    ready_.notify_one();
    if (ended_) return;
  }
}

std::size_t PrefetchSource::read(std::span<char> dst) {
  if (dst.empty()) return 0;
  std::unique_lock lock(mutex_);
  if (!thread_.joinable() && !ended_) {
    try {
      thread_ = start_with_signals_blocked([this] { run(); });
    } catch (const std::system_error& e) {
      throw InputError("", 0, 0, std::string("cannot start the read-ahead thread: ") + e.what());
    }
  }
  ready_.wait(lock, [this] { return !blocks_.empty() || ended_; });
  std::size_t copied = 0;
  bool freed = false;
  while (copied < dst.size() && !blocks_.empty()) {
    Block& b = blocks_.front();
    const std::size_t n = std::min(dst.size() - copied, b.size - b.pos);
    std::memcpy(dst.data() + copied, b.bytes + b.pos, n);
    copied += n;
    b.pos += n;
    compressed_ = b.compressed_after;
    if (b.pos == b.size) {
      free_.push_back(b.bytes);
      blocks_.pop_front();
      freed = true;
    }
  }
  if (freed) room_.notify_one();
  if (copied != 0) return copied;
  // The queue is empty and the thread has ended: the end, or its error
  // (kept, so that every later read throws it too).
  if (error_ != nullptr) std::rethrow_exception(error_);
  return 0;
}

void PrefetchSource::seek(std::uint64_t offset) {
  stop_and_drop();
  inner_->seek(offset);
  budget_ = options_.read_limit;
  compressed_ = inner_->compressed_offset();
}

void PrefetchSource::seek_frame(FrameStart start) {
  stop_and_drop();
  inner_->seek_frame(start);
  budget_ = options_.read_limit;
  compressed_ = inner_->compressed_offset();
}

std::uint64_t PrefetchSource::compressed_offset() const noexcept { return compressed_; }

std::optional<FrameStart> PrefetchSource::frame_start_before(
    std::uint64_t decompressed_offset) const {
  return inner_->frame_start_before(decompressed_offset);
}

void PrefetchSource::forget_frames_before(std::uint64_t decompressed_offset) {
  inner_->forget_frames_before(decompressed_offset);
}

}  // namespace bloomshard::io
