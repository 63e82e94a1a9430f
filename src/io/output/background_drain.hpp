// A compressed output's codec work on a thread of its own: the caller fills
// one staging buffer while the thread compresses and writes the buffers
// handed to it before, strictly in the order they were handed off, so the
// file gets the same bytes as a synchronous drain would write.
//
// Memory: at most `max_buffers` staging buffers of `buffer_bytes` each, one
// being filled and the rest queued or being compressed; a buffer is
// allocated only when none is free (an output that never fills one holds
// one). The thread starts at the first hand-off and is joined by the
// destructor; it never calls MPI or HDF5 (the program asks MPI for
// MPI_THREAD_FUNNELED, under which a thread that makes no MPI call is fine)
// and blocks the asynchronous signals (stop signals reach the rank's own
// threads, as before).
//
// Errors: whatever the sink throws on the thread (an OutputError for
// ENOSPC / EIO, a codec failure) is caught there, never escapes the thread,
// and is rethrown, the same exception object, on the caller's thread by the
// next hand_off(), wait() or rethrow_if_failed(); it stays pending (every
// later call throws it again), and buffers handed off after it are dropped
// unwritten.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace bloomshard::io {

class BackgroundDrain {
 public:
  /// Compresses `data` and writes it; `finish` ends the current gzip member
  /// / zstd frame. Runs on the drain's thread, one call at a time, in
  /// hand-off order. May throw.
  using Sink = std::function<void(std::span<const char> data, bool finish)>;

  /// `name` (the file) names the output in errors of the drain itself.
  /// max_buffers >= 2. Starts no thread yet.
  BackgroundDrain(std::string name, std::size_t max_buffers, std::size_t buffer_bytes, Sink sink);
  /// Lets the thread finish what was handed off (written, or dropped after
  /// an error) and joins it. Never throws.
  ~BackgroundDrain();
  BackgroundDrain(const BackgroundDrain&) = delete;
  BackgroundDrain& operator=(const BackgroundDrain&) = delete;

  /// The buffer the caller fills now (buffer_bytes long).
  [[nodiscard]] char* stage() const noexcept { return filling_; }

  /// Hands the first `len` bytes of stage() to the thread and returns the
  /// next buffer to fill, waiting while max_buffers are in use. Throws the
  /// thread's pending error, or OutputError if the thread cannot start.
  char* hand_off(std::size_t len, bool finish);

  /// Waits until everything handed off is written; throws a pending error.
  void wait();

  /// wait() that never throws: the error stays pending for the next call.
  void wait_quietly() noexcept;

  /// Throws the pending error, if any (one atomic load when there is none).
  void rethrow_if_failed() const;

 private:
  struct Job {
    char* bytes;
    std::size_t len;
    bool finish;
  };

  void run() noexcept;
  char* take_free_buffer(std::unique_lock<std::mutex>& lock);

  const std::string name_;
  const std::size_t max_buffers_;
  const std::size_t buffer_bytes_;
  const Sink sink_;

  std::vector<std::unique_ptr<char[]>> buffers_;  // all allocated, owned here
  char* filling_ = nullptr;                       // the caller's; in no list below

  mutable std::mutex mutex_;
  std::condition_variable work_;  // the thread waits for a job or stop_
  std::condition_variable done_;  // the caller waits for a free buffer or an empty queue
  std::deque<Job> queue_;         // front: being written
  std::vector<char*> free_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace bloomshard::io
