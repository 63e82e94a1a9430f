#include "comm/transport_defaults.hpp"

#include <mpi.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#ifndef BLOOMSHARD_OMPI_SYSCONFDIR
#define BLOOMSHARD_OMPI_SYSCONFDIR "/etc/openmpi"
#endif

namespace bloomshard::comm {
namespace {

constexpr std::string_view kSpace = " \t\r\n";

// Variables that PMIx, PMI-1/2 (MPICH's hydra, srun --mpi=pmi2) and Slurm's
// job steps set in the processes they start: a process without Open MPI's
// own variables but with one of these may be one rank of many.
constexpr const char* kOtherLaunchers[] = {"PMIX_RANK", "PMIX_NAMESPACE", "PMI_RANK",
                                           "PMI_SIZE",  "PMI_FD",         "SLURM_STEP_ID"};

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// A positive integer, or 0 for anything else.
long positive(const char* text) {
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return (*end == '\0' && v > 0) ? v : 0;
}

// True if `list` ("a,b" or "^a,b") names `component`.
bool names(std::string_view list, std::string_view component) {
  if (!list.empty() && list.front() == '^') list.remove_prefix(1);
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (trim(list.substr(0, comma)) == component) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// True if a parameter file's lines choose a PML or an MTL: a selecting list
// ("pml = ucx", "mtl = psm2"), or a PML exclusion that names ob1 ("^ob1").
bool file_chooses_transport(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string_view l = line;
    l = trim(l.substr(0, l.find('#')));
    const auto eq = l.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = trim(l.substr(0, eq));
    const std::string_view value = trim(l.substr(eq + 1));
    if (key != "pml" && key != "mtl") continue;
    if (value.empty()) continue;
    if (value.front() != '^') return true;
    if (key == "pml" && names(value, "ob1")) return true;
  }
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string& applied() {
  static std::string pml;
  return pml;
}

}  // namespace

std::string single_node_pml(const TransportInputs& in) {
  const auto env = [&](const char* name) { return in.getenv ? in.getenv(name) : nullptr; };
  const char* keep = env("BLOOMSHARD_MPI_TRANSPORT");
  if (keep != nullptr && std::string_view(keep) == "keep") return {};
  if (env("OMPI_MCA_pml") != nullptr || env("OMPI_MCA_mtl") != nullptr) return {};
  if (env("OMPI_MCA_mca_base_param_files") != nullptr) return {};
  // Set by Open MPI's launcher for each rank before it starts.
  const char* size_text = env("OMPI_COMM_WORLD_SIZE");
  const char* local_text = env("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (size_text == nullptr && local_text == nullptr) {
    // No Open MPI launcher: a singleton (one process, so one node), unless
    // another launcher started this process and will tell MPI_Init more.
    for (const char* launcher : kOtherLaunchers) {
      if (env(launcher) != nullptr) return {};
    }
  } else {
    const long size = positive(size_text);
    if (size == 0 || positive(local_text) != size) return {};
  }
  for (const std::string& text : in.param_files) {
    if (file_chooses_transport(text)) return {};
  }
  return "ob1";
}

std::string apply_single_node_pml() {
#ifdef OPEN_MPI
  TransportInputs in;
  in.getenv = [](const char* name) -> const char* { return std::getenv(name); };
  // Where Open MPI 4.1 looks by default: the user's file and the system's
  // (OPAL_SYSCONFDIR or OPAL_PREFIX/etc when set, else the build's sysconfdir).
  std::vector<std::string> paths;
  if (const char* home = std::getenv("HOME")) {
    paths.push_back(std::string(home) + "/.openmpi/mca-params.conf");
  }
  if (const char* dir = std::getenv("OPAL_SYSCONFDIR")) {
    paths.push_back(std::string(dir) + "/openmpi-mca-params.conf");
  } else if (const char* prefix = std::getenv("OPAL_PREFIX")) {
    paths.push_back(std::string(prefix) + "/etc/openmpi-mca-params.conf");
  }
  paths.push_back(BLOOMSHARD_OMPI_SYSCONFDIR "/openmpi-mca-params.conf");
  for (const std::string& p : paths) in.param_files.push_back(read_file(p));
  std::string pml = single_node_pml(in);
  if (!pml.empty() && ::setenv("OMPI_MCA_pml", pml.c_str(), 0) != 0) pml.clear();
  applied() = pml;
  return pml;
#else
  return {};
#endif
}

const std::string& applied_pml_default() noexcept { return applied(); }

}  // namespace bloomshard::comm
