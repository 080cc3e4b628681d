// With no loadable CUDA driver (IRIS_CUDA_DRIVER points at nothing; the test's ctest
// entry sets it), libiris still loads and says plainly that there is no GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "iris/iris.hpp"

namespace iris {
namespace {

TEST(NoDriver, RunReportsNoGpuFound) {
  const char* path = std::getenv("IRIS_CUDA_DRIVER");
  if (!path || std::string(path).find("nonexistent") == std::string::npos) {
    GTEST_SKIP() << "run through ctest, which points IRIS_CUDA_DRIVER at a missing library";
  }
  EXPECT_EQ(device_count(), 0);
  Options o;
  o.heap_bytes = 64 << 20;
  try {
    run(o, [](Context&) { FAIL() << "no rank may start"; });
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no GPU found"), std::string::npos) << m;
    EXPECT_NE(m.find(path), std::string::npos) << m;
  }
}

TEST(NoDriver, InvalidOptionsAreReportedBeforeTheDriver) {
  Options o;
  o.heap_bytes = 12345;
  EXPECT_THROW(run(o, [](Context&) {}), Error);
}

}  // namespace
}  // namespace iris
