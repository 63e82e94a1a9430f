#include "bloomshard/app/state_key_scheme.hpp"

#include <stdexcept>

namespace bloomshard::app {

std::string normalization_identity(const core::KeyScheme& key) {
  std::string id = core::policy_label(key.normalize) + " unicode " +
                   std::string(core::normalization_unicode_version());
  if (!core::is_legacy_key_scheme(key)) id += " " + std::string(core::kKeySchemeVersionLabel);
  return id;
}

void put_key_scheme(const core::KeyScheme& key, io::CheckpointHeader& h) {
  h.normalization = normalization_identity(key);
  h.key_field = core::key_fields_text(key);
  h.key_encoding = "bytes";  // digest keys too: tier 2 holds the digest's bytes
  h.key_scheme = core::key_scheme_attribute(key);
}

core::KeyScheme key_scheme_of(const io::CheckpointHeader& h) {
  const std::string label = h.normalization.substr(0, h.normalization.find(' '));
  return core::key_scheme_from_state(h.key_field, label, h.key_scheme);
}

std::string describe_key_scheme(const io::CheckpointHeader& h) {
  try {
    const core::KeyScheme key = key_scheme_of(h);
    return "normalize=" + core::policy_label(key.normalize) + "; " + core::key_scheme_items(key);
  } catch (const std::invalid_argument& e) {
    return std::string("unreadable: ") + e.what();
  }
}

}  // namespace bloomshard::app
