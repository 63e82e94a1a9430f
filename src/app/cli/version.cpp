#include "app/cli/version.hpp"

#include <string>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/normalize.hpp"
#include "comm/mpi_library.hpp"
#include "io/checkpoint/checkpoint_layout.hpp"
#include "io/hdf5/hdf5_library.hpp"

namespace bloomshard::app {

std::string_view tool_version() noexcept { return BLOOMSHARD_VERSION; }

std::string version_text() {
  std::string text = "bloomshard " + std::string(tool_version()) + "\n";
  text += "checkpoint format: writes " + std::to_string(io::kCheckpointFormatVersion) +
          ", reads 1.." + std::to_string(io::kCheckpointFormatVersion) + "\n";
  text += "hash scheme: " + std::string(core::kHashSchemeName) + "\n";
  text += "bloom layout: " + std::string(core::kBloomLayoutName) + "\n";
  text += "normalization:";
  for (const auto p : core::kAllPolicies) text += " " + core::policy_label(p);
  text += " (unicode " + std::string(core::normalization_unicode_version()) + ")\n";
  text += "text normalization:";
  for (const auto t : core::kAllTextNormalizations) text += " " + core::text_normalize_label(t);
  text += "\nkey digests:";
  for (const auto d : core::kAllKeyDigests) text += " " + core::key_digest_label(d);
  text += "\nkey scheme: " + std::string(core::kKeySchemeVersionLabel) + "\n";
  text += "mpi: built with " + comm::mpi_build_version() + "; running " +
          comm::mpi_library_version() + "\n";
  text += "hdf5: built with " + io::hdf5_build_version() + "; running " +
          io::hdf5_library_version() + "\n";
  return text;
}

}  // namespace bloomshard::app
