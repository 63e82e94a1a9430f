#include <gtest/gtest.h>

#include <string>

#include "app/cli/version.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/normalize.hpp"
#include "comm/mpi_library.hpp"
#include "io/checkpoint/checkpoint_layout.hpp"
#include "io/hdf5/hdf5_library.hpp"

namespace bloomshard::app {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(VersionText, NamesEverySavedFormatAndTheLibraries) {
  const std::string text = version_text();
  EXPECT_EQ(text.rfind("bloomshard " + std::string(tool_version()) + "\n", 0), 0U) << text;
  const std::string v = std::to_string(io::kCheckpointFormatVersion);
  EXPECT_TRUE(has_line(text, "checkpoint format: writes " + v + ", reads 1.." + v)) << text;
  EXPECT_TRUE(has_line(text, "hash scheme: " + std::string(core::kHashSchemeName))) << text;
  for (const auto p : core::kAllPolicies) {
    EXPECT_NE(text.find(" " + core::policy_label(p)), std::string::npos) << text;
  }
  EXPECT_TRUE(has_line(text, "text normalization: none/v1 ws/v1 ws-lower/v1")) << text;
  EXPECT_TRUE(has_line(text, "key digests: none/v1 xxh3-128/v1 sha256/v1")) << text;
  EXPECT_TRUE(has_line(text, "key scheme: key-scheme/v1")) << text;
  EXPECT_NE(text.find("mpi: built with " + comm::mpi_build_version() + "; running "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("hdf5: built with " + io::hdf5_build_version() + "; running " +
                      io::hdf5_library_version() + "\n"),
            std::string::npos)
      << text;
}

TEST(VersionText, LibraryVersionsAreTheLoadedOnes) {
  // The Debian build this runs on: parallel HDF5 and Open MPI, and the
  // loaded libraries are the ones compiled against.
  EXPECT_NE(io::hdf5_build_version().find(" (parallel)"), std::string::npos);
  EXPECT_EQ(io::hdf5_build_version().rfind(io::hdf5_library_version(), 0), 0U);
  EXPECT_NE(comm::mpi_library_version().find("Open MPI"), std::string::npos);
  EXPECT_EQ(comm::mpi_build_version().rfind("MPI 3.", 0), 0U);
}

}  // namespace
}  // namespace bloomshard::app
