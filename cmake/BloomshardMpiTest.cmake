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
    set_tests_properties(${name}.${n}ranks PROPERTIES
      TIMEOUT ${T_TIMEOUT}
      LABELS "mpi"
      PROCESSORS ${n}
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")
  endforeach()
endfunction()
