# How every area registers its tests: one function for MPI programs, one
# runner script (tests/run_mpi_test.sh) for all of them.
#
#   locus_mpi_program(TARGET SOURCE...)
#       an executable linked with liblocusmpi, built next to its tests.
#
#   locus_add_mpi_test(NAME PROG NP
#                      [ENV VAR=VALUE ...] [ARGS prog-args ...]
#                      [LAUNCHER locusrun|hydra|hydra-port|ompi|singleton]
#                      [EXPECT_FAIL regex] [EXPECT_OUTPUT regex]
#                      [TIMEOUT s] [LABELS ...] [LAUNCH_ARGS locusrun-options ...])
#       the ctest case NAME: PROG (a target, built from PROG.c in the
#       calling folder when no such target exists yet) on NP ranks. It
#       passes when every rank exits 0 and the output holds " No Errors"
#       (MPICH's convention) -- or, with EXPECT_FAIL, when the job fails and
#       its output matches the regex -- and no shared-memory segment of a
#       finished process was left in /dev/shm. EXPECT_OUTPUT: a passing run
#       must also print a line matching the regex. LAUNCHER ompi is Open
#       MPI's mpirun (its PMIx server). LAUNCH_ARGS go to locusrun (e.g.
#       --bind-to core).
find_program(LOCUS_MPIEXEC_HYDRA NAMES mpiexec.mpich mpiexec.hydra)
find_program(LOCUS_MPIRUN_OPENMPI mpirun.openmpi)
set(LOCUS_MPI_TEST_RUNNER ${PROJECT_SOURCE_DIR}/tests/run_mpi_test.sh)

function(locus_mpi_program TARGET)
  add_executable(${TARGET} ${ARGN})
  target_link_libraries(${TARGET} PRIVATE locusmpi)
  target_include_directories(${TARGET} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  set_target_properties(${TARGET} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endfunction()

function(locus_add_mpi_test NAME PROG NP)
  cmake_parse_arguments(T "" "LAUNCHER;TIMEOUT;EXPECT_FAIL;EXPECT_OUTPUT"
                        "ENV;ARGS;LABELS;LAUNCH_ARGS" ${ARGN})
  if(NOT TARGET ${PROG})
    locus_mpi_program(${PROG} ${PROG}.c)
  endif()
  if(NOT T_LAUNCHER)
    set(T_LAUNCHER locusrun)
  endif()
  if(T_LAUNCHER STREQUAL "locusrun")
    set(launch $<TARGET_FILE:locusrun> -n ${NP} --oversubscribe ${T_LAUNCH_ARGS})
  elseif(T_LAUNCHER MATCHES "^hydra")
    if(NOT LOCUS_MPIEXEC_HYDRA)
      add_test(NAME ${NAME} COMMAND sh -c "echo 'SKIPPED: mpiexec.mpich not found'; exit 77")
      set_tests_properties(${NAME} PROPERTIES SKIP_RETURN_CODE 77)
      return()
    endif()
    set(launch ${LOCUS_MPIEXEC_HYDRA} -n ${NP})
    if(T_LAUNCHER STREQUAL "hydra-port")
      set(launch ${LOCUS_MPIEXEC_HYDRA} -pmi-port -n ${NP})
    endif()
  elseif(T_LAUNCHER STREQUAL "ompi")
    if(NOT LOCUS_MPIRUN_OPENMPI OR NOT LOCUS_HAVE_PMIX)
      add_test(NAME ${NAME} COMMAND sh -c "echo 'SKIPPED: needs Open MPI (mpirun.openmpi) and a Locus built with OpenPMIx'; exit 77")
      set_tests_properties(${NAME} PROPERTIES SKIP_RETURN_CODE 77)
      return()
    endif()
    set(launch ${LOCUS_MPIRUN_OPENMPI} --allow-run-as-root --oversubscribe -n ${NP})
  elseif(T_LAUNCHER STREQUAL "singleton")
    set(launch "")
  else()
    message(FATAL_ERROR "locus_add_mpi_test(${NAME}): unknown LAUNCHER ${T_LAUNCHER}")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(expect "")
  if(DEFINED T_EXPECT_FAIL)
    set(expect --expect-fail "${T_EXPECT_FAIL}")
  elseif(DEFINED T_EXPECT_OUTPUT)
    set(expect --expect-output "${T_EXPECT_OUTPUT}")
  endif()
  # The shipped defaults, whatever `locus tune` measured on this machine,
  # unless the test names a calibration itself.
  if(NOT T_ENV MATCHES "LOCUS_TUNE_FILE=")
    list(PREPEND T_ENV LOCUS_TUNE_FILE=none)
  endif()
  add_test(NAME ${NAME}
           COMMAND sh ${LOCUS_MPI_TEST_RUNNER} ${expect} ${launch} $<TARGET_FILE:${PROG}> ${T_ARGS})
  set_tests_properties(${NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "mpi;${T_LABELS}"
                       ENVIRONMENT "${T_ENV}" SKIP_RETURN_CODE 77)
endfunction()
