// Slice views over one file's tier 2, in place in its mapping
// (store/tier2_slices.hpp).
#include "bloomshard/store/tier2_slices.hpp"

#include <bit>
#include <exception>
#include <utility>

#include "bloomshard/store/checksum.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/layout.hpp"
#include "bloomshard/store/validate.hpp"

namespace bloomshard::store {

// The tier-2 base is used in place from the mapped file: the stored
// little-endian values must be the host's.
static_assert(std::endian::native == std::endian::little,
              "checkpoint tier-2 mapping needs a little-endian host");

namespace {

// File address of dataset `name` (`length` bytes; 0 when empty: nothing to map).
std::uint64_t locate(const FileSource& src, const char* name, std::uint64_t length) {
  const DatasetPlacement where = src.placement(name);
  if (!where.contiguous) {
    throw CheckpointError(std::string("dataset ") + name + " is not contiguous");
  }
  if (length == 0) return 0;
  if (!where.address)
    throw CheckpointError(std::string("dataset ") + name + " has no file address");
  if (*where.address % 8 != 0) {
    throw CheckpointError(std::string("dataset ") + name + " is not 8-byte aligned in the file");
  }
  return *where.address;
}

}  // namespace

Tier2Slices::Tier2Slices(const FileSource& src, std::shared_ptr<const FileMapping> mapping,
                         Tier2Index index)
    : index_(std::move(index)), mapping_(std::move(mapping)) {
  const std::uint64_t p = index_.slice_keys.size();
  fps_ = locate(src, ckpt::kFingerprints, index_.keys * 8);
  offs_ = locate(src, ckpt::kOffsets, (index_.keys + p) * 8);
  bytes_ = locate(src, ckpt::kBytes, index_.bytes);
}

core::SliceBaseView Tier2Slices::view(std::uint32_t s) const {
  const std::uint64_t keys = index_.slice_keys[s];
  const std::uint64_t first = index_.key_start[s];
  // range() refuses a range beyond the end of the file (a truncated file).
  const auto fp = mapping_->range(fps_ + first * 8, keys * 8, ckpt::kFingerprints);
  const auto off = mapping_->range(offs_ + (first + s) * 8, (keys + 1) * 8, ckpt::kOffsets);
  const auto by =
      mapping_->range(bytes_ + index_.byte_start[s], index_.slice_bytes[s], ckpt::kBytes);
  core::SliceBaseView v;
  v.fingerprints = {reinterpret_cast<const std::uint64_t*>(fp.data()), keys};
  v.offsets = {reinterpret_cast<const std::uint64_t*>(off.data()), keys + 1};
  v.bytes = {reinterpret_cast<const char*>(by.data()), by.size()};
  return v;
}

std::string Tier2Slices::check(std::uint32_t s, std::uint64_t stored, bool full,
                               const std::string& where) const {
  const std::string name = where + " tier-2 slice " + std::to_string(s);
  core::SliceBaseView v;
  try {
    v = view(s);
  } catch (const CheckpointError& e) {
    return name + ": " + e.what();
  }
  if (!full) {
    if (std::string p = check_offsets(v.offsets, v.bytes.size()); !p.empty()) {
      return name + ": " + ckpt::kOffsets + ": " + p;
    }
    return {};
  }
  const std::uint64_t got = tier2_slice_checksum(v);
  if (got != stored) {
    return name + ": XXH3 checksum mismatch over " + ckpt::kFingerprints + ", " + ckpt::kOffsets +
           ", " + ckpt::kBytes + " (stored " + std::to_string(stored) + ", computed " +
           std::to_string(got) + ")";
  }
  try {
    core::validate_base(v);  // key order: the binary search relies on it
  } catch (const std::exception& e) {
    return name + ": " + e.what();
  }
  return {};
}

void Tier2Slices::advise_willneed(core::SliceRange owned) const noexcept {
  if (owned.first >= owned.last) return;
  const std::uint32_t a = owned.first;
  const std::uint32_t b = owned.last - 1;
  const Tier2Index& t = index_;
  const auto keys_to = [&](std::uint32_t s) { return t.key_start[s] + t.slice_keys[s]; };
  mapping_->advise_willneed(fps_ + t.key_start[a] * 8, (keys_to(b) - t.key_start[a]) * 8);
  mapping_->advise_willneed(offs_ + (t.key_start[a] + a) * 8,
                            (keys_to(b) + b + 1 - t.key_start[a] - a) * 8);
  mapping_->advise_willneed(bytes_ + t.byte_start[a],
                            t.byte_start[b] + t.slice_bytes[b] - t.byte_start[a]);
}

}  // namespace bloomshard::store
