#include "io/output/background_drain.hpp"

#include <system_error>
#include <utility>

#include "io/errors.hpp"
#include "io/signal_blocked_thread.hpp"

namespace bloomshard::io {

BackgroundDrain::BackgroundDrain(std::string name, std::size_t max_buffers,
                                 std::size_t buffer_bytes, Sink sink)
    : name_(std::move(name)),
      max_buffers_(max_buffers < 2 ? 2 : max_buffers),
      buffer_bytes_(buffer_bytes),
      sink_(std::move(sink)) {
  buffers_.reserve(max_buffers_);
  free_.reserve(max_buffers_);  // so that the thread's push_back never allocates
  buffers_.push_back(std::make_unique<char[]>(buffer_bytes_));
  filling_ = buffers_.back().get();
}

BackgroundDrain::~BackgroundDrain() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

char* BackgroundDrain::hand_off(std::size_t len, bool finish) {
  rethrow_if_failed();
  std::unique_lock lock(mutex_);
  if (!thread_.joinable()) {
    try {
      thread_ = start_with_signals_blocked([this] { run(); });
    } catch (const std::system_error& e) {
      throw OutputError(name_, std::string("cannot start the compression thread: ") + e.what());
    }
  }
  queue_.push_back({filling_, len, finish});
  filling_ = nullptr;
  work_.notify_one();
  filling_ = take_free_buffer(lock);
  lock.unlock();
  rethrow_if_failed();
  return filling_;
}

char* BackgroundDrain::take_free_buffer(std::unique_lock<std::mutex>& lock) {
  if (free_.empty() && buffers_.size() < max_buffers_) {
    buffers_.push_back(std::make_unique<char[]>(buffer_bytes_));
    return buffers_.back().get();
  }
  // The thread frees a buffer after every job, written or dropped.
  done_.wait(lock, [this] { return !free_.empty(); });
  char* b = free_.back();
  free_.pop_back();
  return b;
}

void BackgroundDrain::wait() {
  wait_quietly();
  rethrow_if_failed();
}

void BackgroundDrain::wait_quietly() noexcept {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return queue_.empty(); });
}

void BackgroundDrain::rethrow_if_failed() const {
  if (!failed_.load(std::memory_order_acquire)) return;
  std::exception_ptr e;
  {
    const std::lock_guard lock(mutex_);
    e = error_;
  }
  std::rethrow_exception(e);
}

void BackgroundDrain::run() noexcept {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_, and nothing left to write
    const Job job = queue_.front();
    const bool skip = error_ != nullptr;
    lock.unlock();
    std::exception_ptr failure;
    if (!skip) {
      try {
        sink_({job.bytes, job.len}, job.finish);
      } catch (...) {
        failure = std::current_exception();
      }
    }
    lock.lock();
    if (failure != nullptr && error_ == nullptr) {
      error_ = failure;
      failed_.store(true, std::memory_order_release);
    }
    queue_.pop_front();
    free_.push_back(job.bytes);
    done_.notify_all();
  }
}

}  // namespace bloomshard::io
