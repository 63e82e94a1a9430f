#include "bloomshard/app/version.hpp"

#include <string>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/normalize.hpp"

namespace bloomshard::app {

std::string_view tool_version() noexcept { return BLOOMSHARD_VERSION; }

std::string version_text() {
  std::string text = "bloomshard " + std::string(tool_version()) + "\n";
  text += "hash scheme: " + std::string(core::kHashSchemeName) + "\n";
  text += "bloom layout: " + std::string(core::kBloomLayoutName) + "\n";
  text += "normalization:";
  for (const auto p : core::kAllPolicies) text += " " + core::policy_label(p);
  text += " (unicode " + std::string(core::normalization_unicode_version()) + ")\n";
  return text;
}

}  // namespace bloomshard::app
