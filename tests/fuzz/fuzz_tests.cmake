# Fuzzing irisc. Included from tests/CMakeLists.txt.
#
#   irisc_fuzz_nvrtc      any compiler (g++ too): random well-typed programs
#                         (gen_program*.cpp) compiled through irisc and NVRTC to cubins;
#                         a program sema accepts but NVRTC rejects is a finding.
#                         tools/scripts/fuzz_nvrtc.sh runs it. The ctest
#                         `irisc_fuzz_nvrtc_quick` (label fuzz_nvrtc) compiles 20 programs
#                         of fixed seeds and fails on any finding.
#
# The libFuzzer front-end fuzzer below is clang only; with any other compiler the rest
# of this file does nothing.
#
#   irisc_fuzz_frontend   libFuzzer + ASan + UBSan binary (tests/fuzz/fuzz_frontend.cpp).
#                         Every compiler/*/*.cpp is compiled into it with the same
#                         sanitizers (a sanitized copy of libirisc; irisc_lib itself is
#                         left alone). nvrtc.cpp is linked but never called: the fuzz
#                         path stops before the CUDA toolchain, and NVRTC is dlopen'd, so
#                         nothing links against it.
#
# In a plain clang build the target is EXCLUDE_FROM_ALL (build it by name); configure
# with -DIRISC_FUZZ=ON to build it by default and to add the ctest `irisc_fuzz_corpus`,
# which replays the seed corpus once. tools/scripts/fuzz.sh does the latter in build-fuzz.
option(IRISC_FUZZ "Build the libFuzzer targets by default (needs clang)" OFF)

add_executable(irisc_fuzz_nvrtc ${CMAKE_CURRENT_LIST_DIR}/fuzz_nvrtc.cpp ${CMAKE_CURRENT_LIST_DIR}/gen_program.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gen_program_expr.cpp ${CMAKE_CURRENT_LIST_DIR}/gen_program_msg.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gen_program_stmt.cpp)
target_link_libraries(irisc_fuzz_nvrtc PRIVATE irisc_lib)
target_include_directories(irisc_fuzz_nvrtc PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(irisc_fuzz_nvrtc PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
# 20 programs from a fixed seed (a few seconds on 2 cores); passes only without findings.
# Skipped (77) where the binary was not built (tools/scripts/sanitize.sh builds a subset).
add_test(NAME irisc_fuzz_nvrtc_quick
  COMMAND sh -c "[ -x \"$1\" ] || exit 77; exec \"$@\"" irisc_fuzz_nvrtc_quick
          $<TARGET_FILE:irisc_fuzz_nvrtc> --count 20 --seed 1 --sm80-every 4 --quiet
          --out ${CMAKE_BINARY_DIR}/tests/fuzz_nvrtc_quick)
set_tests_properties(irisc_fuzz_nvrtc_quick PROPERTIES LABELS fuzz_nvrtc TIMEOUT 300 SKIP_RETURN_CODE 77)

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  if(IRISC_FUZZ)
    message(FATAL_ERROR "IRISC_FUZZ=ON needs clang: configure with -DCMAKE_CXX_COMPILER=clang++ "
                        "(and -DCMAKE_C_COMPILER=clang)")
  endif()
  return()
endif()

set(IRISC_FUZZ_SANITIZE -fsanitize=fuzzer,address,undefined)

# libFuzzer lives in compiler-rt (Debian: libclang-rt-NN-dev); without it, say so.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "${IRISC_FUZZ_SANITIZE}")
set(CMAKE_REQUIRED_LINK_OPTIONS "${IRISC_FUZZ_SANITIZE}")
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
]] IRISC_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT IRISC_HAVE_LIBFUZZER)
  if(IRISC_FUZZ)
    message(FATAL_ERROR "IRISC_FUZZ=ON: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=fuzzer "
                        "(install libclang-rt-<version>-dev, e.g. tools/scripts/install_deps.sh)")
  endif()
  message(STATUS "irisc fuzzing: no libFuzzer for ${CMAKE_CXX_COMPILER}; irisc_fuzz_frontend not built")
  return()
endif()

# The library sources, as compiler/CMakeLists.txt collects them, and the embedded
# device headers generated again here (the generated file belongs to compiler/'s
# directory, so it is not shared).
file(GLOB IRISC_FUZZ_LIB_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/compiler/*/*.cpp)
file(GLOB_RECURSE IRISC_FUZZ_DEVICE_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/templates/include/iris/*)
set(IRISC_FUZZ_HEADERS_CPP ${CMAKE_CURRENT_BINARY_DIR}/fuzz/device_headers_embedded.cpp)
add_custom_command(
  OUTPUT ${IRISC_FUZZ_HEADERS_CPP}
  COMMAND ${CMAKE_COMMAND} -DHEADER_ROOT=${PROJECT_SOURCE_DIR}/templates/include
          -DOUTPUT=${IRISC_FUZZ_HEADERS_CPP}
          -P ${PROJECT_SOURCE_DIR}/compiler/toolchain/embed_headers.cmake
  DEPENDS ${IRISC_FUZZ_DEVICE_HEADERS} ${PROJECT_SOURCE_DIR}/compiler/toolchain/embed_headers.cmake
  COMMENT "Embedding the iris device headers (fuzz build)"
  VERBATIM)

# irisc's build id, generated again here for the same reason.
include(IriscBuildId)
set(IRISC_FUZZ_BUILD_ID_CPP ${CMAKE_CURRENT_BINARY_DIR}/fuzz/build_id.cpp)
irisc_build_id_source(${IRISC_FUZZ_BUILD_ID_CPP} fuzz)
# And the embedded standard library.
include(IriscStdlib)
set(IRISC_FUZZ_STDLIB_CPP ${CMAKE_CURRENT_BINARY_DIR}/fuzz/stdlib_embedded.cpp)
irisc_stdlib_source(${IRISC_FUZZ_STDLIB_CPP})

set(exclude_from_all EXCLUDE_FROM_ALL)
if(IRISC_FUZZ)
  set(exclude_from_all)
endif()
add_executable(irisc_fuzz_frontend ${exclude_from_all}
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_frontend.cpp ${IRISC_FUZZ_LIB_SOURCES} ${IRISC_FUZZ_HEADERS_CPP}
  ${IRISC_FUZZ_BUILD_ID_CPP} ${IRISC_FUZZ_STDLIB_CPP})
target_include_directories(irisc_fuzz_frontend PRIVATE ${PROJECT_SOURCE_DIR})
target_include_directories(irisc_fuzz_frontend SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
# -O1 -g: fast enough to fuzz, precise stacks. Assertions stay on (no NDEBUG), whatever
# the build type; UBSan findings abort instead of printing and going on.
target_compile_options(irisc_fuzz_frontend PRIVATE
  ${IRISC_FUZZ_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1 -UNDEBUG)
target_link_options(irisc_fuzz_frontend PRIVATE ${IRISC_FUZZ_SANITIZE})
target_link_libraries(irisc_fuzz_frontend PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(irisc_fuzz_frontend PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

# Seed corpus: the committed seeds, the inputs of fixed fuzzer findings (regressions/,
# also replayed by the golden test FuzzRegressions) and every samples/*/*.iris, copied
# afresh on every build of the fuzzer into <build>/tests/fuzz_corpus (fuzz.sh fuzzes a
# scratch copy of that, so each run replays them all under the sanitizers first).
file(GLOB IRISC_FUZZ_SEEDS CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_LIST_DIR}/corpus/* ${CMAKE_CURRENT_LIST_DIR}/regressions/*.iris
     ${PROJECT_SOURCE_DIR}/samples/*/*.iris)
set(IRISC_FUZZ_CORPUS_DIR ${CMAKE_BINARY_DIR}/tests/fuzz_corpus)
add_custom_target(irisc_fuzz_seed_corpus
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${IRISC_FUZZ_CORPUS_DIR}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${IRISC_FUZZ_CORPUS_DIR}
  COMMAND ${CMAKE_COMMAND} -E copy ${IRISC_FUZZ_SEEDS} ${IRISC_FUZZ_CORPUS_DIR}
  COMMENT "Copying the irisc fuzz seed corpus"
  VERBATIM)
add_dependencies(irisc_fuzz_frontend irisc_fuzz_seed_corpus)

if(IRISC_FUZZ)
  # Replays every seed once (no mutation): a quick regression check under ctest.
  add_test(NAME irisc_fuzz_corpus
    COMMAND $<TARGET_FILE:irisc_fuzz_frontend> -runs=0 -timeout=5 -rss_limit_mb=2048
            -dict=${CMAKE_CURRENT_LIST_DIR}/iris.dict ${IRISC_FUZZ_CORPUS_DIR})
  set_tests_properties(irisc_fuzz_corpus PROPERTIES TIMEOUT 300)
endif()
