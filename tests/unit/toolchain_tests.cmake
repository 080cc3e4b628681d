# Tests of the NVRTC toolchain (libirisc) and of the JIT cache (libiris).
# Included from tests/CMakeLists.txt, so iris_unit_test() is defined.

iris_unit_test(irisc_nvrtc_tests ${CMAKE_CURRENT_LIST_DIR}/test_nvrtc_toolchain.cpp)
target_link_libraries(irisc_nvrtc_tests PRIVATE irisc_lib)
# NVRTC is found by irisc's own search (no IRISC_NVRTC_PATH), as a user's would be;
# without it the tests report SKIPPED.
gtest_discover_tests(irisc_nvrtc_tests DISCOVERY_TIMEOUT 60
  TEST_FILTER "-NvrtcUnavailable.*"
  PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" TIMEOUT 300)
# The same binary with NVRTC pointed at a missing file: the errors a user sees then.
gtest_discover_tests(irisc_nvrtc_tests DISCOVERY_TIMEOUT 60
  TEST_FILTER "NvrtcUnavailable.*"
  TEST_PREFIX "no_nvrtc."
  PROPERTIES ENVIRONMENT "IRISC_NVRTC_PATH=/nonexistent/libnvrtc.so")

iris_unit_test(iris_jit_cache_tests ${CMAKE_CURRENT_LIST_DIR}/test_jit_cache.cpp)
gtest_discover_tests(iris_jit_cache_tests DISCOVERY_TIMEOUT 60
  TEST_FILTER "-JitWithoutNvrtc.*"
  PROPERTIES TIMEOUT 300)
# The JIT's error when NVRTC is missing.
gtest_discover_tests(iris_jit_cache_tests DISCOVERY_TIMEOUT 60
  TEST_FILTER "JitWithoutNvrtc.*"
  TEST_PREFIX "no_nvrtc."
  PROPERTIES ENVIRONMENT "IRISC_NVRTC_PATH=/nonexistent/libnvrtc.so")
