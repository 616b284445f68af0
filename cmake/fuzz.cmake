# libFuzzer targets (configure with clang and -DNVHCQ_FUZZ=ON; `make fuzz` does it).
#   tests/fuzz/<name>_fuzz.cpp  -> fuzz_<name>, built with -fsanitize=fuzzer,address,undefined
#   tests/fuzz/<name>_fuzz.options -> extra libFuzzer flags for it (read by scripts/run-fuzzers.sh)
#   tests/fuzz/seeds/*.cpp      -> programs writing the seed corpora
# Each fuzzer compiles the sources it tests itself, with coverage instrumentation,
# rather than linking a whole layer: a fuzzer depends on nothing it does not fuzz.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "NVHCQ_FUZZ needs clang with libFuzzer: configure with "
                      "-DCMAKE_CXX_COMPILER=clang++ (Debian: clang, libclang-rt-14-dev)")
endif()

set(NVHCQ_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer -g)

# What each fuzzer tests, by folder.
file(GLOB NVHCQ_FUZZ_GGUF_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/llm/gguf/*.cpp)
file(GLOB NVHCQ_FUZZ_TOKENIZER_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/llm/tokenizer/*.cpp)
set(NVHCQ_FUZZ_LLM_SOURCES ${NVHCQ_FUZZ_GGUF_SOURCES} ${NVHCQ_FUZZ_TOKENIZER_SOURCES}
    ${CMAKE_SOURCE_DIR}/src/llm/ggml_type.cpp)

# The GPU runtime's parsers and encoders: the CUBIN loader, QMDs, pushbuffers, GPFIFO entries.
set(NVHCQ_FUZZ_GPU_SOURCES ${CMAKE_SOURCE_DIR}/src/gpu/cubin.cpp ${CMAKE_SOURCE_DIR}/src/gpu/qmd.cpp
    ${CMAKE_SOURCE_DIR}/src/gpu/pushbuffer.cpp ${CMAKE_SOURCE_DIR}/src/gpu/gpfifo.cpp
    ${CMAKE_SOURCE_DIR}/src/gpu/hw/arch.cpp)
add_library(nvhcq_fuzz_gpu STATIC ${NVHCQ_FUZZ_GPU_SOURCES})
target_include_directories(nvhcq_fuzz_gpu PUBLIC ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests ${NVHCQ_GEN})
target_compile_options(nvhcq_fuzz_gpu PRIVATE ${NVHCQ_FUZZ_SANITIZERS} -fsanitize=fuzzer-no-link)
target_link_libraries(nvhcq_fuzz_gpu PUBLIC nvhcq_base)

add_library(nvhcq_fuzz_llm STATIC ${NVHCQ_FUZZ_LLM_SOURCES})
target_include_directories(nvhcq_fuzz_llm PUBLIC ${CMAKE_SOURCE_DIR}/src ${NVHCQ_GEN})
target_compile_options(nvhcq_fuzz_llm PRIVATE ${NVHCQ_FUZZ_SANITIZERS} -fsanitize=fuzzer-no-link)
target_compile_options(nvhcq_base PRIVATE ${NVHCQ_FUZZ_SANITIZERS} -fsanitize=fuzzer-no-link)
target_link_libraries(nvhcq_fuzz_llm PUBLIC nvhcq_base)

add_custom_target(nvhcq_fuzz)
file(GLOB NVHCQ_FUZZERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/*_fuzz.cpp)
foreach(src ${NVHCQ_FUZZERS})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "_fuzz$" "" name ${name})
  add_executable(fuzz_${name} ${src})
  target_compile_options(fuzz_${name} PRIVATE ${NVHCQ_FUZZ_SANITIZERS} -fsanitize=fuzzer)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_${name} PRIVATE nvhcq_fuzz_llm nvhcq_fuzz_gpu)
  target_compile_definitions(fuzz_${name} PRIVATE NVHCQ_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  set_target_properties(fuzz_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  add_dependencies(nvhcq_fuzz fuzz_${name})
endforeach()

file(GLOB NVHCQ_FUZZ_SEEDERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/seeds/*.cpp)
foreach(src ${NVHCQ_FUZZ_SEEDERS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_compile_options(${name} PRIVATE ${NVHCQ_FUZZ_SANITIZERS})
  target_link_options(${name} PRIVATE -fsanitize=address,undefined)
  target_link_libraries(${name} PRIVATE nvhcq_fuzz_llm nvhcq_fuzz_gpu)
  if(name STREQUAL "make_cubin_loader_seeds")
    target_link_libraries(${name} PRIVATE nvhcq_compile)  # real CUBINs where NVRTC is installed
  endif()
  target_compile_definitions(${name} PRIVATE NVHCQ_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz/seeds)
  add_dependencies(nvhcq_fuzz ${name})
endforeach()
