// The MPI lifetime as an RAII object: construct one Environment at the top
// of main, before anything else touches MPI, and let it finalize on the way
// out. Also the one way to kill the whole job (abort_job) so that no rank is
// left waiting in a collective after another one failed.
#pragma once

namespace bloomshard::comm {

/// Thread support asked of MPI. Only the main thread ever calls MPI in
/// bloomshard, so FUNNELED is enough; SINGLE is for tools with no threads.
enum class ThreadLevel { kSingle, kFunneled };

/// Owns MPI_Init_thread / MPI_Finalize. Not copyable, not movable.
class Environment {
 public:
  /// Initializes MPI (a binary started without mpiexec runs as a singleton:
  /// 1 rank) and sets MPI_ERRORS_RETURN on MPI_COMM_WORLD so failed calls
  /// become MpiError. If MPI is already initialized, adopts it and will not
  /// finalize it. Throws MpiError if MPI was already finalized or the
  /// requested thread level is not provided.
  explicit Environment(ThreadLevel level = ThreadLevel::kFunneled);
  /// Same, passing the command line to MPI_Init_thread (MPI may consume
  /// arguments of its own).
  Environment(int& argc, char**& argv, ThreadLevel level = ThreadLevel::kFunneled);
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  /// Calls MPI_Finalize if this object initialized MPI and nobody finalized
  /// it yet. Collective in effect: every rank must reach it.
  ~Environment();

  /// This process's rank in MPI_COMM_WORLD.
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// Number of ranks in MPI_COMM_WORLD.
  [[nodiscard]] int size() const noexcept { return size_; }
  /// True if this object called MPI_Init_thread (and so will finalize).
  [[nodiscard]] bool owns_mpi() const noexcept { return owns_; }

  /// MPI_Initialized, as a plain bool.
  [[nodiscard]] static bool initialized() noexcept;
  /// MPI_Finalized, as a plain bool.
  [[nodiscard]] static bool finalized() noexcept;

 private:
  void init(int* argc, char*** argv, ThreadLevel level);

  bool owns_ = false;
  int rank_ = 0;
  int size_ = 1;
};

/// Kills every rank of the job with exit code `code` (MPI_Abort on
/// MPI_COMM_WORLD). Without an initialized MPI it just exits the process.
/// Use it after reporting an error: returning from main on one rank while
/// the others sit in a collective would hang the job.
[[noreturn]] void abort_job(int code) noexcept;

}  // namespace bloomshard::comm
