// Open MPI's point-to-point layer (PML) for a job whose ranks all run on one
// node, named before MPI_Init.
//
// Why: Open MPI 4.1 opens every PML it may use at MPI_Init and lets each
// probe its fabric. The CM PML loads its MTLs (PSM, PSM2, OFI: Omni-Path,
// TrueScale, libfabric), and on these machines PSM and PSM2 cost ~0.1 s each
// with no such hardware, before ob1 wins anyway (Debian's own parameter file
// already excludes UCX and OFI). When the launcher says every rank of the job
// shares this node, no fabric carries a message: ob1 over shared memory is
// what runs, and naming it saves the probe. A 2-rank MPI_Init + MPI_Finalize
// under mpiexec takes 0.28 s instead of 0.49 s here (docs/performance.md).
//
// Nothing is changed when someone chose:
//   - OMPI_MCA_pml or OMPI_MCA_mtl in the environment (mpiexec --mca and
//     Slurm's environment arrive there too);
//   - a selecting pml or mtl line in Open MPI's parameter files ("pml = ucx";
//     an exclusion such as Debian's "pml = ^ucx" is no choice, unless it
//     excludes ob1), or a parameter-file list of one's own
//     (OMPI_MCA_mca_base_param_files);
//   - BLOOMSHARD_MPI_TRANSPORT=keep.
// A singleton (started without any launcher: no OMPI_COMM_WORLD_*, PMIx,
// PMI or Slurm step variables) is one process and gets ob1 too: `bloomshard
// dedup` without mpiexec starts in 0.28 s instead of 0.48 s. Jobs over more
// than one node, processes of other launchers and other MPI libraries are
// left as they are.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace bloomshard::comm {

/// What the decision reads.
struct TransportInputs {
  /// An environment lookup: the value, or nullptr when the name is unset.
  std::function<const char*(const char*)> getenv;
  /// The text of each Open MPI parameter file that exists (any order).
  std::vector<std::string> param_files;
};

/// The PML to name for this job ("ob1"), or "" to leave Open MPI's choice.
/// Pure: reads only `in`.
[[nodiscard]] std::string single_node_pml(const TransportInputs& in);

/// Before MPI_Init (Environment calls it): reads this process's environment
/// and Open MPI's parameter files (system and user) and sets OMPI_MCA_pml when
/// single_node_pml says so. Returns what it set ("" if nothing; always "" for
/// an MPI other than Open MPI). Not thread-safe (setenv).
std::string apply_single_node_pml();

/// What apply_single_node_pml set in this process ("" if nothing), for the
/// job's metrics (mpi_pml_default).
[[nodiscard]] const std::string& applied_pml_default() noexcept;

}  // namespace bloomshard::comm
