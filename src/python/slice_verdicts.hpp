// The remembered outcome of checking each slice of one part of a state (the
// Bloom slices of a generation, or the slices of one tier-2 run): a slice is
// checked the first time a lookup needs it, and only then; a later lookup
// pays one byte load. A slice that failed keeps its problem text, so every
// later lookup that needs it raises the same error.
//
// Thread-safe: racing first lookups of one slice may both run the check
// (same data, same verdict); exactly one of them records it. Movable (the
// state lives on the heap) until lookups start.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "state_error.hpp"

namespace bloomshard::python {

class SliceVerdicts {
 public:
  SliceVerdicts() = default;
  explicit SliceVerdicts(std::uint32_t slices) : d_(std::make_unique<Data>(slices)) {}

  /// Returns once slice `s` is known good; runs `check(s)` (which returns
  /// "" or the full problem text, naming file and slice) the first time.
  /// Throws StateError with the problem if the slice failed, now or before.
  template <class Check>
  void require(std::uint32_t s, const Check& check) const {
    const std::uint8_t v = d_->flags[s].load(std::memory_order_acquire);
    if (v == kGood) return;
    if (v == kBad) throw StateError(problem(s));
    record(s, check(s));
  }

  /// Whether slice `s` is known good: the fast path of a lookup, one byte
  /// load (relaxed: a good verdict publishes nothing the caller reads; the
  /// slice's data is immutable). False: call require().
  [[nodiscard]] bool known_good(std::uint32_t s) const noexcept {
    return d_->flags[s].load(std::memory_order_relaxed) == kGood;
  }

  /// Slices found good so far.
  [[nodiscard]] std::uint64_t good() const noexcept {
    return d_->good.load(std::memory_order_relaxed);
  }
  /// Checks run so far (a slice is checked once, or more often on a race).
  [[nodiscard]] std::uint64_t checks_run() const noexcept {
    return d_->checks.load(std::memory_order_relaxed);
  }

 private:
  enum : std::uint8_t { kUnchecked = 0, kGood = 1, kBad = 2 };
  struct Data {
    explicit Data(std::uint32_t slices)
        : flags(std::make_unique<std::atomic<std::uint8_t>[]>(slices)) {}  // zero: unchecked
    std::unique_ptr<std::atomic<std::uint8_t>[]> flags;
    std::atomic<std::uint64_t> good{0}, checks{0};
    std::mutex mutex;  // guards problems
    std::unordered_map<std::uint32_t, std::string> problems;
  };

  void record(std::uint32_t s, const std::string& found) const {
    d_->checks.fetch_add(1, std::memory_order_relaxed);
    if (!found.empty()) {
      {
        const std::lock_guard<std::mutex> lock(d_->mutex);
        d_->problems.emplace(s, found);
      }
      d_->flags[s].store(kBad, std::memory_order_release);
      throw StateError(found);
    }
    std::uint8_t expected = kUnchecked;
    if (d_->flags[s].compare_exchange_strong(expected, kGood, std::memory_order_acq_rel)) {
      d_->good.fetch_add(1, std::memory_order_relaxed);
    }
  }

  [[nodiscard]] std::string problem(std::uint32_t s) const {
    const std::lock_guard<std::mutex> lock(d_->mutex);
    return d_->problems.at(s);
  }

  std::unique_ptr<Data> d_;
};

}  // namespace bloomshard::python
