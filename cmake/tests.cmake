# Test binaries, one per folder under tests/:
#   tests/<layer>/   -> test_<layer>, ctest label "unit"
#   tests/sim/       -> test_sim,     label "sim"  (the simulated Jetson and RM GPU)
#   tests/gpu/       -> test_gpu,     label "gpu"  (skips cleanly without an NVIDIA GPU)
#   tests/stress/    -> test_stress,  label "stress" (long runs for the GPU machine; `make test`
#                       leaves them out, `make test-stress` runs them)
#   tests/support/   -> a library every test binary links
# Files named *_cases.cpp hold parameterized suites that run on several backends: they
# are compiled into their folder's binary (CPU instances), into test_gpu (real GPU
# instances) and into test_sim (simulated GPUs). tests/cases/ holds suites with no
# CPU instance, so it gets no binary of its own.
find_package(GTest REQUIRED)
include(GoogleTest)

file(GLOB NVHCQ_TEST_SUPPORT CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/support/*.cpp)
add_library(nvhcq_test_support STATIC ${NVHCQ_TEST_SUPPORT})
target_link_libraries(nvhcq_test_support PUBLIC nvhcq_drv nvhcq_cuda GTest::gtest)
target_include_directories(nvhcq_test_support PUBLIC ${CMAKE_SOURCE_DIR}/tests)
target_compile_definitions(nvhcq_test_support PUBLIC
  NVHCQ_SOURCE_DIR="${CMAKE_SOURCE_DIR}" NVHCQ_BINARY_DIR="${CMAKE_BINARY_DIR}")

file(GLOB_RECURSE NVHCQ_SHARED_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/*_cases.cpp)

# The library a test folder links: nvhcq_<folder> when that layer exists, with a few
# folders named for what they test rather than for a layer.
set(NVHCQ_TEST_LIB_ops nvhcq_tensor)
set(NVHCQ_TEST_LIB_runtime nvhcq_gpu)  # unit tests of the gpu/ layer (no GPU needed)
set(NVHCQ_TEST_LIB_gpu nvhcq_lib)
set(NVHCQ_TEST_LIB_sim nvhcq_lib)
set(NVHCQ_TEST_LIB_tegra nvhcq_drv)  # drv/tegra's ABI and unit tests
set(NVHCQ_TEST_LIB_kernels nvhcq_llm)  # the LLM kernels' tests repack weights with llm/
function(nvhcq_test_library folder out)
  if(DEFINED NVHCQ_TEST_LIB_${folder})
    set(${out} ${NVHCQ_TEST_LIB_${folder}} PARENT_SCOPE)
  elseif(TARGET nvhcq_${folder})
    set(${out} nvhcq_${folder} PARENT_SCOPE)
  else()
    set(${out} nvhcq_lib PARENT_SCOPE)
  endif()
endfunction()

function(nvhcq_test_binary name label folder)
  add_executable(${name} ${ARGN})
  nvhcq_test_library(${folder} lib)
  target_link_libraries(${name} PRIVATE ${lib} nvhcq_test_support GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 120
    PROPERTIES LABELS ${label} SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" TIMEOUT 600)
endfunction()

# The LLM kernels' "#pragma unroll", compiled by the host compiler for the
# CPU emulator: GCC 12 warns about it before a file's diagnostic pragmas apply.
set_source_files_properties(${CMAKE_SOURCE_DIR}/tests/kernels/llm_act_prep_emulation_test.cpp
                            ${CMAKE_SOURCE_DIR}/tests/kernels/llm_attention_emulation_test.cpp
                            ${CMAKE_SOURCE_DIR}/tests/kernels/llm_handoff_emulation_test.cpp
                            ${CMAKE_SOURCE_DIR}/tests/kernels/llm_step_emulation_test.cpp
                            ${CMAKE_SOURCE_DIR}/tests/kernels/llm_matvec_emulation_test.cpp
                            PROPERTIES COMPILE_OPTIONS -Wno-unknown-pragmas)

file(GLOB NVHCQ_TEST_DIRS LIST_DIRECTORIES true ${CMAKE_SOURCE_DIR}/tests/*)
foreach(dir ${NVHCQ_TEST_DIRS})
  if(NOT IS_DIRECTORY ${dir})
    continue()
  endif()
  get_filename_component(layer ${dir} NAME)
  if(layer STREQUAL "support" OR layer STREQUAL "data" OR layer STREQUAL "fuzz" OR
     layer STREQUAL "cases")
    continue()
  endif()
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cpp)
  if(NOT sources)
    continue()
  endif()
  if(layer STREQUAL "gpu")
    nvhcq_test_binary(test_gpu gpu gpu ${sources} ${NVHCQ_SHARED_CASES})
  elseif(layer STREQUAL "sim")
    nvhcq_test_binary(test_sim sim sim ${sources} ${NVHCQ_SHARED_CASES})
  elseif(layer STREQUAL "stress")
    file(GLOB stress_cases CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/cases/*_cases.cpp)
    nvhcq_test_binary(test_stress stress stress ${sources} ${stress_cases})
  else()
    nvhcq_test_binary(test_${layer} unit ${layer} ${sources})
  endif()
endforeach()

# The command line: exit codes and messages, checked on the real binary.
add_test(NAME cli.no_arguments COMMAND nvhcq)
set_tests_properties(cli.no_arguments PROPERTIES LABELS unit WILL_FAIL TRUE)
add_test(NAME cli.unknown_command COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:nvhcq>
         -DARGS=nonsense -DEXPECT_RC=2 -DEXPECT_OUT=usage -P ${CMAKE_SOURCE_DIR}/cmake/expect_exit.cmake)
# Argument lists reach expect_exit.cmake as one -D value; a CMake list variable
# keeps them separate arguments there.
set(NVHCQ_UNKNOWN_FLAG_ARGS info --bogus)
add_test(NAME cli.unknown_flag COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:nvhcq>
         "-DARGS=${NVHCQ_UNKNOWN_FLAG_ARGS}" -DEXPECT_RC=2 "-DEXPECT_OUT=unknown option --bogus"
         -P ${CMAKE_SOURCE_DIR}/cmake/expect_exit.cmake)
set(NVHCQ_MISSING_ARG_ARGS run --backend)
add_test(NAME cli.missing_argument COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:nvhcq>
         "-DARGS=${NVHCQ_MISSING_ARG_ARGS}" -DEXPECT_RC=2 -DEXPECT_OUT=usage
         -P ${CMAKE_SOURCE_DIR}/cmake/expect_exit.cmake)
add_test(NAME cli.info_runs COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:nvhcq>
         -DARGS=info -DEXPECT_RC=0 -DEXPECT_OUT=nvhcq -P ${CMAKE_SOURCE_DIR}/cmake/expect_exit.cmake)
add_test(NAME cli.help COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:nvhcq>
         -DARGS=--help -DEXPECT_RC=0 -DEXPECT_OUT=quantize -P ${CMAKE_SOURCE_DIR}/cmake/expect_exit.cmake)
set(NVHCQ_KERNEL_LOG_ARGS kernel-log --input ${CMAKE_SOURCE_DIR}/tests/data/kernel_log/gpu-errors.dmesg)
add_test(NAME cli.kernel_log_classifies_a_saved_log COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:nvhcq>
         "-DARGS=${NVHCQ_KERNEL_LOG_ARGS}"
         -DEXPECT_RC=3 "-DEXPECT_OUT=2 errors (Xid 31), 0 warnings, 1 known-harmless, 2 info"
         -P ${CMAKE_SOURCE_DIR}/cmake/expect_exit.cmake)
set_tests_properties(cli.unknown_command cli.unknown_flag cli.missing_argument cli.info_runs cli.help
                     cli.kernel_log_classifies_a_saved_log PROPERTIES LABELS unit)
