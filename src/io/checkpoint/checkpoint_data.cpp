// See checkpoint_data.hpp: the merge step both data paths share.
#include "io/checkpoint/checkpoint_data.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include "bloomshard/store/tier2_forms.hpp"
#include "io/checkpoint/checkpoint_checksum.hpp"

namespace bloomshard::io {

std::uint64_t merge_slice_checked(const core::TwoTierSet& set, std::uint32_t slice,
                                  std::size_t depth, std::span<std::uint64_t> fingerprints,
                                  std::span<std::uint64_t> offsets, std::span<char> bytes,
                                  std::string& err) {
  try {
    set.exact().write_merged_slice(slice, fingerprints, offsets, bytes, depth);
  } catch (const std::exception& e) {
    if (err.empty()) err = std::string("merging tier 2: ") + e.what();
    std::fill(fingerprints.begin(), fingerprints.end(), 0);
    std::fill(offsets.begin(), offsets.end(), 0);
    std::fill(bytes.begin(), bytes.end(), '\0');
  }
  return tier2_slice_checksum({fingerprints, offsets, bytes});
}

void collect_slice_forms(LocalTier2& t, std::size_t i, const core::SliceBaseView& merged,
                         std::string& err) {
  if (t.confirmer == nullptr) return;
  const std::size_t form_bytes = t.confirmer->form_bytes();
  const std::span<std::uint8_t> out(t.forms.data() + t.form_starts[i], merged.size() * form_bytes);
  try {
    const std::vector<std::uint8_t> stream = core::slice_form_stream(*t.confirmer, merged);
    std::copy(stream.begin(), stream.end(), out.begin());
  } catch (const std::exception& e) {
    if (err.empty()) err = std::string("confirmation forms: ") + e.what();
    std::fill(out.begin(), out.end(), 0);
  }
  t.form_checksums[i] = store::tier2_forms_checksum(out);
  if (!t.origins) return;
  const std::uint64_t first_key = t.form_starts[i] / form_bytes;
  const std::span<std::uint8_t> origins(
      t.form_origins.data() + first_key * store::kFormOriginRecordBytes,
      merged.size() * store::kFormOriginRecordBytes);
  try {
    const std::vector<std::uint8_t> stream = core::slice_origin_stream(*t.confirmer, merged);
    std::copy(stream.begin(), stream.end(), origins.begin());
  } catch (const std::exception& e) {
    if (err.empty()) err = std::string("confirmation form origins: ") + e.what();
    std::fill(origins.begin(), origins.end(), 0);
  }
  t.form_origin_checksums[i] = store::tier2_forms_checksum(origins);
}

}  // namespace bloomshard::io
