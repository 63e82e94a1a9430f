// A sorted run of one slice: lookup by a search on the fingerprint that
// starts where a uniform fingerprint is expected (fingerprints are 64-bit
// hash values, independent of the slice), then a byte compare among equal
// fingerprints (64-bit collisions of different keys are legal), and the
// invariant check readers apply to untrusted (mapped) runs.
#include "bloomshard/core/sorted_run.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "bloomshard/core/fastrange.hpp"

namespace bloomshard::core {

std::string_view SliceBaseView::key(std::size_t i) const noexcept {
  const auto begin = static_cast<std::size_t>(offsets[i]);
  const auto end = static_cast<std::size_t>(offsets[i + 1]);
  return {bytes.data() + begin, end - begin};
}

std::size_t SliceBaseView::expected_position(std::uint64_t fingerprint) const noexcept {
  return static_cast<std::size_t>(fastrange64(fingerprint, fingerprints.size()));
}

std::size_t SliceBaseView::lower_bound(std::uint64_t fp) const noexcept {
  const std::size_t n = fingerprints.size();
  if (n == 0) return 0;
  // Gallop from the expected position: doubling steps bracket the answer,
  // then a binary search inside the bracket. With uniform fingerprints the
  // bracket is about sqrt(n) entries, on one or two pages; with any other
  // distribution the result is the same, only the steps are more.
  const std::size_t g = expected_position(fp);
  const auto search = [&](std::size_t lo, std::size_t hi) {
    return static_cast<std::size_t>(
        std::lower_bound(fingerprints.begin() + static_cast<std::ptrdiff_t>(lo),
                         fingerprints.begin() + static_cast<std::ptrdiff_t>(hi), fp) -
        fingerprints.begin());
  };
  std::size_t step = 1;
  if (fingerprints[g] < fp) {  // the answer is in (g, n]
    while (g + step < n && fingerprints[g + step] < fp) step *= 2;
    return search(g + step / 2 + 1, std::min(g + step, n));
  }
  // fingerprints[g] >= fp: the answer is in [0, g]
  while (step <= g && fingerprints[g - step] >= fp) step *= 2;
  return search(step > g ? 0 : g - step + 1, g - step / 2 + 1);
}

void SliceBaseView::prefetch(std::uint64_t fingerprint) const noexcept {
  if (!fingerprints.empty())
    __builtin_prefetch(fingerprints.data() + expected_position(fingerprint));
}

bool SliceBaseView::contains(std::uint64_t fingerprint, std::string_view k) const noexcept {
  for (std::size_t i = lower_bound(fingerprint);
       i < fingerprints.size() && fingerprints[i] == fingerprint; ++i) {
    const std::string_view candidate = key(i);
    if (candidate == k) return true;
    if (k < candidate) return false;  // ties are sorted by bytes
  }
  return false;
}

void validate_base(const SliceBaseView& base) {
  const std::size_t n = base.fingerprints.size();
  auto fail = [](const std::string& what) {
    throw std::runtime_error("tier-2 base invalid: " + what);
  };
  if (base.offsets.size() != n + 1) {
    fail(std::to_string(base.offsets.size()) + " offsets for " + std::to_string(n) +
         " keys (need keys + 1)");
  }
  if (base.offsets[0] != 0) fail("offsets[0] is " + std::to_string(base.offsets[0]) + ", not 0");
  if (base.offsets[n] != base.bytes.size()) {
    fail("last offset " + std::to_string(base.offsets[n]) + " != byte count " +
         std::to_string(base.bytes.size()));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (base.offsets[i + 1] < base.offsets[i]) {
      fail("offsets decrease at key " + std::to_string(i));
    }
  }
  for (std::size_t i = 1; i < n; ++i) {
    if (!less_key(base.fingerprints[i - 1], base.key(i - 1), base.fingerprints[i], base.key(i))) {
      fail("keys " + std::to_string(i - 1) + " and " + std::to_string(i) +
           " not strictly increasing by (fingerprint, bytes)");
    }
  }
}

}  // namespace bloomshard::core
