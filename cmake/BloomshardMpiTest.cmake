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
# jobs run n ranks: n, but at most BLOOMSHARD_TEST_MAX_SLOTS (1). ctest starts
# a k-slot test only when k slots are free at once; with -j3 and the timed
# tests' chain holding one slot from start to end (bloomshard_timed_tests in
# tests/CMakeLists.txt), a 3- or 4-slot test could start only after that
# chain, and a 2-slot test only when the 1-slot queue had run dry, one at a
# time: the last CI run's suite (1,252 s) was that chain (977 s) plus the 51
# tests of 3 and 4 ranks one by one after it (272 s). Those tests leave CPU
# idle (a 3-rank e2e case ~0.6 of the two cores), their ranks time-share the
# cores anyway (oversubscribed on purpose), and under -j3 three tests at once
# is what the machine takes, whatever their rank counts: one slot each.
# docs/reliability.md, "How CI fits its time".
set(BLOOMSHARD_TEST_MAX_SLOTS 1 CACHE STRING "Most ctest slots (PROCESSORS) one test takes")
function(bloomshard_test_slots out n)
  if(n GREATER BLOOMSHARD_TEST_MAX_SLOTS)
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
