# Processor slots of a test in ctest's schedule (its PROCESSORS property).
# A job of N ranks keeps at most min(N, cores) cores busy, so that is what a
# test declares: on the 2-core machines this suite runs on (CI's too), a 3-,
# 4- or 8-rank test declaring N took every slot of `ctest -j3` (ctest gives a
# test that asks for more than -j all of them) and ran alone, leaving a core
# idle while its ranks waited on each other. BLOOMSHARD_TEST_CORES (default:
# this machine's logical cores) caps it.
cmake_host_system_information(RESULT bloomshard_host_cores QUERY NUMBER_OF_LOGICAL_CORES)
if(bloomshard_host_cores LESS 1)
  set(bloomshard_host_cores 1)
endif()
set(BLOOMSHARD_TEST_CORES ${bloomshard_host_cores} CACHE STRING
    "Most processor slots one test declares in ctest's schedule (PROCESSORS)")

# bloomshard_test_processors(N OUT): OUT = min(N, BLOOMSHARD_TEST_CORES).
function(bloomshard_test_processors n out)
  if(n GREATER BLOOMSHARD_TEST_CORES)
    set(n ${BLOOMSHARD_TEST_CORES})
  endif()
  set(${out} ${n} PARENT_SCOPE)
endfunction()

# bloomshard_add_mpi_test(NAME target RANKS 1 2 3 4 [TIMEOUT s] [ARGS ...])
# Registers NAME.Nranks entries that run real ranks through mpiexec. Open MPI
# refuses root and more ranks than cores without the variables set here.
function(bloomshard_add_mpi_test name)
  cmake_parse_arguments(T "" "TARGET;TIMEOUT" "RANKS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${name}.${n}ranks
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} --oversubscribe
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    bloomshard_test_processors(${n} slots)
    set_tests_properties(${name}.${n}ranks PROPERTIES
      TIMEOUT ${T_TIMEOUT}
      LABELS "mpi"
      PROCESSORS ${slots}
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")
  endforeach()
endfunction()
