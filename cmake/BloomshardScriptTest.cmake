# bloomshard_script_test: the one registration of the tests that run a
# script (bash on tests/harness.sh, or a Python driver) against the real
# binary: e2e, faults, cli, slurm, multihost, docs, install.
#
# bloomshard_script_test(NAME COMMAND cmd args...
#                        TIMEOUT s LABELS label...
#                        [PROCESSORS n] [LAUNCH] [MPI] [TIMED]
#                        [PROPERTIES prop value ...])
# - LAUNCH: after the command's own arguments, the launch options every
#   harness script takes (tests/harness.sh, harness_parse):
#   --mpiexec=M --np-flag=F --python=P, in the one-word form, so a flag that
#   starts with '-' (-n) reads the same in bash and in Python's argparse.
# - MPI: the test runs ranks: the suite's MPI environment (BLOOMSHARD_MPI_ENV).
# - TIMED: a test with wall-time deadlines (bloomshard_timed_tests).
# - PROCESSORS: the slots its jobs take at once (default 1; at most
#   BLOOMSHARD_TEST_MAX_SLOTS, bloomshard_test_slots in BloomshardMpiTest.cmake).
# TIMEOUT and LABELS are required: no test runs without a bound or a label.
function(bloomshard_script_test name)
  cmake_parse_arguments(T "LAUNCH;MPI;TIMED" "TIMEOUT;PROCESSORS" "COMMAND;LABELS;PROPERTIES"
    ${ARGN})
  if(NOT T_COMMAND OR NOT T_TIMEOUT OR NOT T_LABELS)
    message(FATAL_ERROR "bloomshard_script_test(${name}): COMMAND, TIMEOUT and LABELS are required")
  endif()
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "bloomshard_script_test(${name}): unknown arguments ${T_UNPARSED_ARGUMENTS}")
  endif()
  set(command ${T_COMMAND})
  if(T_LAUNCH)
    list(APPEND command --mpiexec=${MPIEXEC_EXECUTABLE} --np-flag=${MPIEXEC_NUMPROC_FLAG}
      --python=${Python3_EXECUTABLE})
  endif()
  add_test(NAME ${name} COMMAND ${command})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
  if(T_PROCESSORS)
    bloomshard_test_slots(slots ${T_PROCESSORS})
    set_tests_properties(${name} PROPERTIES PROCESSORS ${slots})
  endif()
  if(T_MPI)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${BLOOMSHARD_MPI_ENV}")
  endif()
  if(T_PROPERTIES)
    set_tests_properties(${name} PROPERTIES ${T_PROPERTIES})
  endif()
  if(T_TIMED)
    bloomshard_timed_tests(${name})
  endif()
endfunction()
