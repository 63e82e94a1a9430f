// Slice views over the confirmation forms beside a run's tier 2
// (store/tier2_forms.hpp).
#include "bloomshard/store/tier2_forms.hpp"

#include <xxhash.h>

#include <utility>

#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/layout.hpp"

namespace bloomshard::store {

std::uint64_t tier2_forms_checksum(std::span<const std::uint8_t> forms) noexcept {
  return XXH3_64bits(forms.data(), forms.size());
}

Tier2Forms::Tier2Forms(const FileSource& src, std::shared_ptr<const FileMapping> mapping,
                       const Tier2Index& index, std::uint64_t form_bytes)
    : Tier2Forms(src, std::move(mapping), index, form_bytes, kFormsData) {}

Tier2Forms::Tier2Forms(const FileSource& src, std::shared_ptr<const FileMapping> mapping,
                       const Tier2Index& index, std::uint64_t record_bytes,
                       const Tier2SideData& data)
    : slice_keys_(index.slice_keys),
      key_start_(index.key_start),
      form_bytes_(record_bytes),
      mapping_(std::move(mapping)),
      data_(data) {
  const std::string name = data.dataset;
  if (!src.has_link(name)) throw CheckpointError("dataset " + name + " is missing");
  const std::uint64_t want = index.keys * record_bytes;
  const std::uint64_t elements = want / data.element_bytes;
  const std::vector<std::uint64_t> dims = src.dims(name);
  if (dims.size() != 1 || dims[0] != elements) {
    throw CheckpointError("dataset " + name + " is not 1-D of " + std::to_string(elements) +
                          (data.element_bytes == 1 ? " bytes" : " values") + " (" +
                          std::to_string(index.keys) + " keys x " + std::to_string(record_bytes) +
                          " bytes of " + data.what + ")");
  }
  const DatasetPlacement where = src.placement(name);
  if (!where.contiguous) throw CheckpointError("dataset " + name + " is not contiguous");
  if (want == 0) return;
  if (!where.address) throw CheckpointError("dataset " + name + " has no file address");
  at_ = *where.address;
}

std::span<const std::uint8_t> Tier2Forms::view(std::uint32_t s) const {
  const auto r = mapping_->range(at_ + key_start_[s] * form_bytes_, slice_keys_[s] * form_bytes_,
                                 data_.dataset);
  return {reinterpret_cast<const std::uint8_t*>(r.data()), r.size()};
}

std::string Tier2Forms::check(std::uint32_t s, std::uint64_t stored,
                              const std::string& where) const {
  const std::string name = where + " " + data_.what + " of tier-2 slice " + std::to_string(s);
  std::span<const std::uint8_t> forms;
  try {
    forms = view(s);
  } catch (const CheckpointError& e) {
    return name + ": " + e.what();
  }
  const std::uint64_t got = tier2_forms_checksum(forms);
  if (got != stored) {
    return name + ": XXH3 checksum mismatch over " + data_.dataset + " (stored " +
           std::to_string(stored) + ", computed " + std::to_string(got) + ")";
  }
  return {};
}

}  // namespace bloomshard::store
