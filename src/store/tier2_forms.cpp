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
    : slice_keys_(index.slice_keys),
      key_start_(index.key_start),
      form_bytes_(form_bytes),
      mapping_(std::move(mapping)) {
  const std::string name = ckpt::kTier2Forms;
  if (!src.has_link(name)) throw CheckpointError("dataset " + name + " is missing");
  const std::uint64_t want = index.keys * form_bytes;
  const std::vector<std::uint64_t> dims = src.dims(name);
  if (dims.size() != 1 || dims[0] != want) {
    throw CheckpointError("dataset " + name + " is not 1-D of " + std::to_string(want) +
                          " bytes (" + std::to_string(index.keys) + " keys x " +
                          std::to_string(form_bytes) + "-byte forms)");
  }
  const DatasetPlacement where = src.placement(name);
  if (!where.contiguous) throw CheckpointError("dataset " + name + " is not contiguous");
  if (want == 0) return;
  if (!where.address) throw CheckpointError("dataset " + name + " has no file address");
  at_ = *where.address;
}

std::span<const std::uint8_t> Tier2Forms::view(std::uint32_t s) const {
  const auto r = mapping_->range(at_ + key_start_[s] * form_bytes_, slice_keys_[s] * form_bytes_,
                                 ckpt::kTier2Forms);
  return {reinterpret_cast<const std::uint8_t*>(r.data()), r.size()};
}

std::string Tier2Forms::check(std::uint32_t s, std::uint64_t stored,
                              const std::string& where) const {
  const std::string name = where + " forms of tier-2 slice " + std::to_string(s);
  std::span<const std::uint8_t> forms;
  try {
    forms = view(s);
  } catch (const CheckpointError& e) {
    return name + ": " + e.what();
  }
  const std::uint64_t got = tier2_forms_checksum(forms);
  if (got != stored) {
    return name + ": XXH3 checksum mismatch over " + ckpt::kTier2Forms + " (stored " +
           std::to_string(stored) + ", computed " + std::to_string(got) + ")";
  }
  return {};
}

}  // namespace bloomshard::store
