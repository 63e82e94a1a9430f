// single_node_pml: ob1 is named only for a job whose ranks all share one
// node, and never over anyone's choice (comm/transport_defaults.hpp).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "comm/transport_defaults.hpp"

namespace bloomshard::comm {
namespace {

// A launcher's environment for `size` ranks of which `local` are on this node.
std::map<std::string, std::string> launched(int size, int local) {
  return {{"OMPI_COMM_WORLD_SIZE", std::to_string(size)},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(local)},
          {"HOME", "/root"}};
}

std::string decide(const std::map<std::string, std::string>& env,
                   std::vector<std::string> files = {}) {
  TransportInputs in;
  in.getenv = [&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  in.param_files = std::move(files);
  return single_node_pml(in);
}

// Debian 12's /etc/openmpi/openmpi-mca-params.conf, as shipped.
const char* const kDebianFile =
    "# comment\nbtl_base_warn_component_unused=0\nmtl = ^ofi\nbtl = ^uct,openib,ofi\n"
    "pml = ^ucx\nosc = ^ucx,pt2pt\n";

TEST(TransportDefaults, OneNodeJobGetsOb1) {
  EXPECT_EQ(decide(launched(2, 2)), "ob1");
  EXPECT_EQ(decide(launched(1, 1)), "ob1");
  EXPECT_EQ(decide(launched(64, 64), {kDebianFile, ""}), "ob1");
}

TEST(TransportDefaults, ASingletonGetsOb1) {
  EXPECT_EQ(decide({}), "ob1");
  EXPECT_EQ(decide({{"HOME", "/root"}, {"SLURM_JOB_ID", "7"}}), "ob1");  // a batch script
  EXPECT_EQ(decide({}, {"pml = ucx\n"}), "");
}

TEST(TransportDefaults, OtherLaunchersAreLeftAlone) {
  for (const char* name :
       {"PMIX_RANK", "PMIX_NAMESPACE", "PMI_RANK", "PMI_SIZE", "PMI_FD", "SLURM_STEP_ID"}) {
    EXPECT_EQ(decide({{name, "0"}}), "") << name;
  }
}

TEST(TransportDefaults, SeveralNodesOrHalfAnAnswerAreLeftAlone) {
  EXPECT_EQ(decide(launched(4, 2)), "");
  auto env = launched(2, 2);
  env.erase("OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(decide(env), "");
  env = launched(2, 2);
  env["OMPI_COMM_WORLD_SIZE"] = "2x";
  EXPECT_EQ(decide(env), "");
  env["OMPI_COMM_WORLD_SIZE"] = "0";
  env["OMPI_COMM_WORLD_LOCAL_SIZE"] = "0";
  EXPECT_EQ(decide(env), "");
}

TEST(TransportDefaults, AChoiceInTheEnvironmentWins) {
  for (const char* name : {"OMPI_MCA_pml", "OMPI_MCA_mtl", "OMPI_MCA_mca_base_param_files"}) {
    auto env = launched(2, 2);
    env[name] = "^ucx";  // even an exclusion: the environment is the user's word
    EXPECT_EQ(decide(env), "") << name;
  }
  auto env = launched(2, 2);
  env["BLOOMSHARD_MPI_TRANSPORT"] = "keep";
  EXPECT_EQ(decide(env), "");
  env["BLOOMSHARD_MPI_TRANSPORT"] = "auto";
  EXPECT_EQ(decide(env), "ob1");
}

TEST(TransportDefaults, AChoiceInAParameterFileWins) {
  const auto env = launched(2, 2);
  EXPECT_EQ(decide(env, {kDebianFile, "pml = ucx\n"}), "");
  EXPECT_EQ(decide(env, {"mtl=psm2"}), "");
  EXPECT_EQ(decide(env, {"  pml\t=  cm  # the site's fabric\n"}), "");
  EXPECT_EQ(decide(env, {"pml = ^ucx, ob1\n"}), "");  // ob1 excluded: cannot name it
  EXPECT_EQ(decide(env, {"pml = ^ucx,cm\nmtl = ^psm,psm2\n"}), "ob1");
  EXPECT_EQ(decide(env, {"# pml = ucx\n", "pml_ucx_verbose = 1\n", "pml =\n"}), "ob1");
}

}  // namespace
}  // namespace bloomshard::comm
