// A sorted run of one slice: lookup by binary search on the fingerprint,
// then a byte compare among equal fingerprints (64-bit collisions of
// different keys are legal), and the invariant check readers apply to
// untrusted (mapped) runs.
#include "bloomshard/core/sorted_run.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bloomshard::core {

std::string_view SliceBaseView::key(std::size_t i) const noexcept {
  const auto begin = static_cast<std::size_t>(offsets[i]);
  const auto end = static_cast<std::size_t>(offsets[i + 1]);
  return {bytes.data() + begin, end - begin};
}

bool SliceBaseView::contains(std::uint64_t fingerprint, std::string_view k) const noexcept {
  auto it = std::lower_bound(fingerprints.begin(), fingerprints.end(), fingerprint);
  for (auto i = static_cast<std::size_t>(it - fingerprints.begin());
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
