// With no loadable CUDA driver (IRIS_CUDA_DRIVER points at nothing; the test's ctest
// entry sets it), libiris still loads and says plainly that there is no GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "backend/backend.hpp"
#include "iris/iris.hpp"
#include "launch/module_impl.hpp"

// The public headers and the backend interface must not drag the CUDA driver API in:
// only backend/cuda/ speaks it.
#ifdef CUDA_VERSION
#error "an iris header or backend/backend.hpp includes <cuda.h>"
#endif

namespace iris {
namespace {

bool driver_is_missing() {
  const char* path = std::getenv("IRIS_CUDA_DRIVER");
  return path && std::string(path).find("nonexistent") != std::string::npos;
}

void expect_no_device(const char* what, const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << what << ": expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no GPU found"), std::string::npos) << what << ": " << m;
    EXPECT_NE(m.find(std::getenv("IRIS_CUDA_DRIVER")), std::string::npos) << what << ": " << m;
  }
}

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

TEST(NoDriver, BackendReportsNoGpuFromEveryEntryPoint) {
  if (!driver_is_missing()) GTEST_SKIP() << "run through ctest, which points IRIS_CUDA_DRIVER at a missing library";
  backend::Backend& bk = backend::active();
  EXPECT_STREQ(bk.name(), "cuda");
  expect_no_device("require", [&] { bk.require(); });
  expect_no_device("device_count", [&] { bk.device_count(); });
  expect_no_device("device_name", [&] { bk.device_name(0); });
  expect_no_device("retain_primary_context", [&] { bk.retain_primary_context(0); });
  expect_no_device("mem_alloc", [&] { bk.mem_alloc(1 << 20); });
  expect_no_device("module_load", [&] { bk.module_load("", "empty"); });
  expect_no_device("stream_create", [&] { bk.stream_create(); });
  expect_no_device("event_create", [&] { bk.event_create(); });
  expect_no_device("capture_begin", [&] { bk.capture_begin(nullptr); });
  alignas(16) static unsigned char tensor[64 * 64 * 2];
  expect_no_device("encode_tensor_map",
                   [&] { encode_tensor_map(TensorMapSpec::matrix(DType::bf16, tensor, 64, 64, 64, 64, 64)); });
  // Releasing calls run in destructors: they stay quiet instead of throwing.
  bk.stream_destroy(nullptr);
  bk.event_destroy(nullptr);
  bk.mem_free(nullptr);
  bk.ipc_close(nullptr);
  bk.module_unload(nullptr);
  bk.capture_abort(nullptr);
  bk.graph_destroy(nullptr);
  bk.graph_exec_destroy(nullptr);
  bk.release_primary_context(0);
}

TEST(NoDriver, TimingAndModulesReportNoGpu) {
  if (!driver_is_missing()) GTEST_SKIP() << "run through ctest, which points IRIS_CUDA_DRIVER at a missing library";
  expect_no_device("EventTimer", [] { EventTimer timer(nullptr); });
  bool enqueued = false;
  expect_no_device("Graph", [&] { Graph graph(nullptr, [&] { enqueued = true; }); });
  EXPECT_FALSE(enqueued) << "nothing may be enqueued when capture cannot start";
  const std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
  std::vector<std::byte> code(ptx.size());
  for (std::size_t i = 0; i < ptx.size(); ++i) code[i] = static_cast<std::byte>(ptx[i]);
  expect_no_device("load_module_impl", [&] { load_module_impl(code, "tiny.ptx"); });
}

TEST(NoDriver, InvalidOptionsAreReportedBeforeTheDriver) {
  Options o;
  o.heap_bytes = 12345;
  EXPECT_THROW(run(o, [](Context&) {}), Error);
}

}  // namespace
}  // namespace iris
