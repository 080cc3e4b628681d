# irisc file tests: golden outputs per phase (tokens/ast/tir/cuda/passes), fail_ tests per
# diagnostic id, CLI tests, robustness inputs, TIR reader round trips, and samples
# compiled to cubins.
# Included from tests/CMakeLists.txt, so iris_unit_test() is defined. Conventions:
# tests/golden/README.md. Every ctest name starts with "golden.".

iris_unit_test(irisc_golden_tests ${CMAKE_CURRENT_LIST_DIR}/golden_test.cpp ${CMAKE_CURRENT_LIST_DIR}/cli_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/robustness_test.cpp ${CMAKE_CURRENT_LIST_DIR}/tir_read_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/amdgpu_disassembly_test.cpp)
target_link_libraries(irisc_golden_tests PRIVATE irisc_lib)
target_compile_definitions(irisc_golden_tests PRIVATE
  IRIS_GOLDEN_DIR="${CMAKE_CURRENT_LIST_DIR}"
  IRIS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  IRISC_EXE="$<TARGET_FILE:irisc>")
# The CLI tests run the irisc executable.
add_dependencies(irisc_golden_tests irisc)
# PRE_TEST: the test list is read when ctest runs, so a new .iris file is a new test
# without rebuilding.
gtest_discover_tests(irisc_golden_tests
  TEST_PREFIX "golden."
  DISCOVERY_MODE PRE_TEST
  NO_PRETTY_VALUES
  DISCOVERY_TIMEOUT 60
  PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" TIMEOUT 120)
