# How the tests start ranks: the one MPI environment of the suite and the
# GoogleTest-under-mpiexec registration.

# BLOOMSHARD_MPI_ENV: the environment of every test that starts ranks (the
# MPI GoogleTest binaries, the scripts, pytest). Open MPI refuses root and
# more ranks than cores without the first three. pml ob1 + btl self,vader is
# what Open MPI 4.1 picks on one machine here anyway; naming it skips probing
# UCX, openib, OFI and TCP at each MPI_Init: a 2-rank job starts in ~0.5 s
# instead of ~0.75 s, and the suite starts thousands. Tests that need TCP
# between hosts (tests/multihost) name their btl on the command line, which
# wins over the environment; tests of the transport choice itself unset them.
#
# odls_base_sigkill_timeout 0: when a rank exits non-zero (every refusal,
# exit 2 before any work, and every job a test kills), mpiexec tears the job
# down with SIGCONT, then SIGTERM 1 s later, then SIGKILL 1 s after that,
# sleeping those 2 s even when every rank has already exited: a refused
# 1-rank job took 2.6 s instead of 0.7 s, and the guard tests alone run
# ~300 of them (guards.state.merge: 92 s -> 35 s on a loaded machine). With
# 0 the surviving ranks get SIGTERM and SIGKILL at once: a harder stop than
# the default, which the kill loops and fault tests must survive anyway.
# The tests of what a launcher does with a signal (faults.signal_*, the
# Slurm and multi-host scenarios) and the one test whose stop is a SIGTERM
# to mpiexec (e2e.split_resume_remembered: the ranks checkpoint inside the
# teardown's grace) keep Open MPI's default teardown
# (bloomshard_default_teardown below): docs/slurm.md measures it.
set(BLOOMSHARD_MPI_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1;OMPI_MCA_pml=ob1;OMPI_MCA_btl=self,vader;OMPI_MCA_odls_base_sigkill_timeout=0")

# bloomshard_default_teardown(test...): Open MPI's own teardown delays
# (odls_base_sigkill_timeout 1) for tests that measure them; the later
# entry of ENVIRONMENT wins.
function(bloomshard_default_teardown)
  set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT "OMPI_MCA_odls_base_sigkill_timeout=1")
endfunction()

# bloomshard_test_slots(OUT n): the ctest slots (PROCESSORS) of a test whose
# jobs run n ranks: n, or at most BLOOMSHARD_TEST_MAX_SLOTS when that is set
# (0, the default: no cap). A test holding as many slots as it runs ranks is
# what keeps the release suite's timed tests (bloomshard_timed_tests in
# tests/CMakeLists.txt) beside light neighbours: with one slot a test, the
# 3- and 4-rank tests ran beside them and the fault tests took 2-8x longer
# (faults.kill_rank_in_checkpoint 16 -> 129 s), the suite 1,366 s against
# 1,252 s (docs/reliability.md, "How CI fits its time"). The cap is for a
# test tree without timed tests, where only throughput counts.
set(BLOOMSHARD_TEST_MAX_SLOTS 0 CACHE STRING
    "Most ctest slots (PROCESSORS) one test takes; 0: as many as its ranks")
function(bloomshard_test_slots out n)
  if(BLOOMSHARD_TEST_MAX_SLOTS GREATER 0 AND n GREATER BLOOMSHARD_TEST_MAX_SLOTS)
    set(n ${BLOOMSHARD_TEST_MAX_SLOTS})
  endif()
  set(${out} ${n} PARENT_SCOPE)
endfunction()

# bloomshard_add_mpi_test(NAME TARGET target RANKS 1 2 3 4 [TIMEOUT s] [ARGS ...])
# Registers NAME.Nranks entries that run real ranks through mpiexec, each
# taking N processor slots (at most BLOOMSHARD_TEST_MAX_SLOTS), label "mpi",
# default timeout 120 s.
function(bloomshard_add_mpi_test name)
  cmake_parse_arguments(T "" "TARGET;TIMEOUT" "RANKS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  foreach(n IN LISTS T_RANKS)
    bloomshard_test_slots(slots ${n})
    add_test(NAME ${name}.${n}ranks
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} --oversubscribe
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${name}.${n}ranks PROPERTIES
      TIMEOUT ${T_TIMEOUT}
      LABELS "mpi"
      PROCESSORS ${slots}
      ENVIRONMENT "${BLOOMSHARD_MPI_ENV}")
  endforeach()
endfunction()
