#include "comm/environment.hpp"

#include <mpi.h>

#include <cstdlib>

#include "comm/mpi_error.hpp"
#include "comm/transport_defaults.hpp"

namespace bloomshard::comm {
namespace {

// Open MPI 4.1's OMPIO opens, at every MPI_File_open, a POSIX named
// semaphore for its shared file pointer (sharedfp/sm), named by the file's
// *basename* only: /dev/shm/sem.OMPIO_ckpt-21.h5. A rank killed while it
// holds it leaves it locked, and every later open of a file of that name
// (the next job's ckpt-21.h5, in any directory) waits in sem_wait forever.
// Our MPI-IO (HDF5) never uses shared file pointers, so that component is
// left out unless the user chose a sharedfp component; read by MPI_Init.
void avoid_shared_file_pointer_semaphores() {
#ifdef OPEN_MPI
  (void)::setenv("OMPI_MCA_sharedfp", "^sm", 0);
#endif
}

}  // namespace

Environment::Environment(ThreadLevel level) { init(nullptr, nullptr, level); }

Environment::Environment(int& argc, char**& argv, ThreadLevel level) { init(&argc, &argv, level); }

void Environment::init(int* argc, char*** argv, ThreadLevel level) {
  if (finalized()) throw MpiError(MPI_ERR_OTHER, "Environment: MPI already finalized; MPI_Init");
  if (!initialized()) {
    const int wanted = level == ThreadLevel::kFunneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE;
    int provided = MPI_THREAD_SINGLE;
    apply_single_node_pml();  // read by MPI_Init: see transport_defaults.hpp
    avoid_shared_file_pointer_semaphores();
    // Errors here are fatal under MPI's default handler: nothing to catch yet.
    check_mpi(MPI_Init_thread(argc, argv, wanted, &provided), "MPI_Init_thread");
    owns_ = true;
    if (provided < wanted) {
      MPI_Finalize();
      owns_ = false;
      throw MpiError(MPI_ERR_OTHER, "MPI_Init_thread (thread level not provided)");
    }
  }
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

Environment::~Environment() {
  if (owns_ && !finalized()) MPI_Finalize();
}

bool Environment::initialized() noexcept {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

bool Environment::finalized() noexcept {
  int flag = 0;
  MPI_Finalized(&flag);
  return flag != 0;
}

void abort_job(int code) noexcept {
  if (Environment::initialized() && !Environment::finalized()) MPI_Abort(MPI_COMM_WORLD, code);
  // MPI_Abort should not return; if it does, still honor [[noreturn]].
  std::_Exit(code);
}

}  // namespace bloomshard::comm
