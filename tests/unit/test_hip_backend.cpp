// The hip backend where there is no AMD GPU (none exists where these tests run):
// choosing it (backend::select, Options::backend, IRIS_BACKEND) works, and then every
// entry point and iris::run raise NoDeviceError saying why (no libamdhip64, or the HIP
// runtime reports no device), never a crash or a hang. NVIDIA code objects are refused
// on it before any runtime call. Cases that need the HIP runtime installed, or missing,
// report SKIPPED on machines of the other kind; the ctest entry
// HipBackend.MissingLibraryFromEnvironment runs the IRIS_HIP_LIBRARY case.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "elf_builder.hpp"
#include "iris/iris.hpp"
#include "jit/jit_target.hpp"
#include "kernels/amdgpu_images.hpp"
#include "launch/module_impl.hpp"

// backend/hip/ declares the HIP ABI itself: no HIP header may reach libiris's headers.
#ifdef HIP_VERSION
#error "an iris header or backend/backend.hpp includes a HIP header"
#endif

namespace iris::embedded {
std::span<const std::byte> runtime_kernels_amdgpu();
}

namespace iris {
namespace {

#define EXPECT_CONTAINS(text, needle) EXPECT_NE(std::string(text).find(needle), std::string::npos) << (text)

const char* library_override() {
  const char* path = std::getenv("IRIS_HIP_LIBRARY");
  return path && *path ? path : nullptr;
}

// Whether one of the names the backend tries loads here (Debian: libamdhip64-5).
bool runtime_installed() {
  for (const char* name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      dlclose(lib);
      return true;
    }
  }
  return false;
}

// The NoDeviceError require() raises on the hip backend; "" when it raises none (an AMD
// GPU is present, and these tests have nothing to check).
std::string no_device_message() {
  backend::select("hip");
  try {
    backend::active().require();
  } catch (const NoDeviceError& e) {
    return e.what();
  }
  return "";
}

void expect_no_device(const std::string& why, const char* what, const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << what << ": expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), why) << what;
  }
}

TEST(HipBackend, IsChosenByName) {
  backend::select("hip");
  EXPECT_STREQ(backend::active().name(), "hip");
  try {
    backend::select("rocm");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "unknown backend 'rocm' (choose cuda, hip or host");
  }
  Options o;
  o.backend = "hip";
  EXPECT_NO_THROW(o.validate());
  o.backend = "amd";
  try {
    o.validate();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "unknown backend 'amd' (choose cuda, hip or host)");
  }
}

TEST(HipBackend, WithoutTheRuntimeLibrarySaysWhatWasTried) {
  if (library_override()) GTEST_SKIP() << "IRIS_HIP_LIBRARY is set: HipMissingLibrary covers it";
  if (runtime_installed()) GTEST_SKIP() << "the HIP runtime (libamdhip64) is installed here";
  const std::string m = no_device_message();
  EXPECT_CONTAINS(m, "no GPU found: the HIP runtime library (ROCm's libamdhip64) could not be loaded (");
  EXPECT_CONTAINS(m, "libamdhip64.so: ");
  EXPECT_CONTAINS(m, "; libamdhip64.so.6: ");
  EXPECT_CONTAINS(m, "; libamdhip64.so.5: ");
  EXPECT_CONTAINS(m, "set IRIS_HIP_LIBRARY to the library file");
}

TEST(HipBackend, WithTheRuntimeButNoGpuSaysSo) {
  if (library_override()) GTEST_SKIP() << "IRIS_HIP_LIBRARY is set: HipMissingLibrary covers it";
  if (!runtime_installed()) GTEST_SKIP() << "the HIP runtime (libamdhip64.so, .so.6 or .so.5) is not installed here";
  const std::string m = no_device_message();
  if (m.empty()) GTEST_SKIP() << "an AMD GPU is present";
  EXPECT_CONTAINS(m, "no GPU found: ");
  // ROCm 5.2 without a GPU: hipInit fails and the runtime counts no device.
  const bool no_device = m.find("the HIP runtime (libamdhip64.so") != std::string::npos &&
                         m.find(") reports no AMD GPU") != std::string::npos;
  const bool init_failed = m.find("hipInit failed with hipError") != std::string::npos;
  EXPECT_TRUE(no_device || init_failed) << m;
}

TEST(HipBackend, RunFailsWithTheSameMessage) {
  const std::string why = no_device_message();
  if (why.empty()) GTEST_SKIP() << "an AMD GPU is present";
  EXPECT_EQ(device_count(), 0);
  Options o;
  o.heap_bytes = 64 << 20;
  o.backend = "hip";
  bool started = false;
  try {
    run(o, [&](Context&) { started = true; });
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_FALSE(started) << "no rank may start";
}

TEST(HipBackend, EveryEntryPointReportsNoDevice) {
  const std::string why = no_device_message();
  if (why.empty()) GTEST_SKIP() << "an AMD GPU is present";
  backend::Backend& bk = backend::active();
  expect_no_device(why, "device_count", [&] { bk.device_count(); });
  expect_no_device(why, "device_name", [&] { bk.device_name(0); });
  expect_no_device(why, "device_attribute", [&] { bk.device_attribute(0, backend::DeviceAttribute::multiprocessors); });
  expect_no_device(why, "device_arch", [&] { bk.device_arch(0); });
  expect_no_device(why, "retain_primary_context", [&] { bk.retain_primary_context(0); });
  expect_no_device(why, "mem_alloc", [&] { bk.mem_alloc(1 << 20); });
  void* device_ptr = nullptr;
  expect_no_device(why, "host_alloc_mapped", [&] { bk.host_alloc_mapped(64, &device_ptr); });
  expect_no_device(why, "ipc_open", [&] { bk.ipc_open(backend::IpcMemHandle{}); });
  expect_no_device(why, "module_load", [&] { bk.module_load("", "empty"); });
  expect_no_device(why, "runtime_module", [&] { bk.runtime_module({}, "libiris runtime kernels"); });
  expect_no_device(why, "stream_create", [&] { bk.stream_create(); });
  expect_no_device(why, "event_create", [&] { bk.event_create(); });
  expect_no_device(why, "capture_begin", [&] { bk.capture_begin(nullptr); });
  alignas(16) static unsigned char tensor[64 * 64 * 2];
  expect_no_device(why, "encode_tensor_map",
                   [&] { encode_tensor_map(TensorMapSpec::matrix(DType::bf16, tensor, 64, 64, 64, 64, 64)); });
  expect_no_device(why, "EventTimer", [] { EventTimer timer(nullptr); });
  // Releasing calls run in destructors: they stay quiet instead of throwing.
  bk.stream_destroy(nullptr);
  bk.event_destroy(nullptr);
  bk.mem_free(nullptr);
  bk.host_free_mapped(nullptr);
  bk.ipc_close(nullptr);
  bk.module_unload(nullptr);
  bk.capture_abort(nullptr);
  bk.graph_destroy(nullptr);
  bk.graph_exec_destroy(nullptr);
  bk.release_primary_context(0);
}

TEST(HipBackend, NvidiaCodeObjectsAreRefusedBeforeTheRuntime) {
  backend::select("hip");
  try {
    load_module_impl(test::minimal_elf(test::kEmCuda, "{}"), "k.cubin");
    FAIL() << "expected an error";
  } catch (const NoDeviceError& e) {
    FAIL() << "the runtime was reached: " << e.what();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "cannot load k.cubin: it is a cubin (NVIDIA GPU code), which runs on the cuda backend "
                              "only, and this job runs on the hip backend (AMD GPUs)");
  }
  const std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
  std::vector<std::byte> code(ptx.size());
  for (std::size_t i = 0; i < ptx.size(); ++i) code[i] = static_cast<std::byte>(ptx[i]);
  try {
    load_module_impl(code, "k.ptx");
    FAIL() << "expected an error";
  } catch (const NoDeviceError& e) {
    FAIL() << "the runtime was reached: " << e.what();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "cannot load k.ptx: it is PTX (NVIDIA GPU code)");
  }
  // An AMDGPU code object passes the checks and reaches the runtime, which has no device.
  const std::string why = no_device_message();
  if (why.empty()) GTEST_SKIP() << "an AMD GPU is present";
  expect_no_device(why, "load_module_impl(amdgpu)",
                   [] { load_module_impl(test::minimal_elf(test::kEmAmdgpu, R"({"kernels":[]})"), "k.co"); });
}

TEST(HipJitTarget, IsTheGfxNameWithoutItsFeatures) {
  try {
    jit_target_for_gfx("gfx1234:xnack-");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "irisc has no target for gfx1234 (this GPU's architecture, gfx1234:xnack-); supported: ");
  }
  EXPECT_EQ(jit_target_for_gfx("gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(jit_target_for_gfx("gfx942"), "gfx942");
  EXPECT_EQ(jit_target_for_gfx("gfx90a:sramecc+:xnack-"), "gfx90a");
  // NVIDIA and host target names are not AMD architectures.
  EXPECT_THROW(jit_target_for_gfx("sm_90a"), Error);
  EXPECT_THROW(jit_target_for_gfx("host"), Error);
}

// The AMD image set format (kernels/amdgpu_images.hpp): what write() lays out, read()
// finds, 64-byte aligned; truncated or foreign bytes read as no images.
TEST(AmdgpuImages, ReadWhatWriteLaysOut) {
  const std::string set = amdgpu_images::write({{"gfx942", std::string(100, 'a')}, {"gfx90a", "bc"}});
  const auto bytes = std::as_bytes(std::span(set));
  const auto images = amdgpu_images::read(bytes);
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0].first, "gfx942");
  EXPECT_EQ(images[0].second.size(), 100u);
  EXPECT_EQ(static_cast<char>(images[0].second[0]), 'a');
  EXPECT_EQ(images[1].first, "gfx90a");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(images[1].second.data()), 2), "bc");
  for (const auto& [arch, image] : images) EXPECT_EQ((image.data() - bytes.data()) % 64, 0) << arch;
  EXPECT_TRUE(amdgpu_images::read(bytes.first(bytes.size() - 1)).empty()) << "a truncated set";
  EXPECT_TRUE(amdgpu_images::read({}).empty());
  const std::string foreign = "\x7f" "ELF and more";
  EXPECT_TRUE(amdgpu_images::read(std::as_bytes(std::span(foreign))).empty());
}

// libiris embeds its own kernels for gfx942 and gfx90a where it was built with the AMD
// toolchain: each an AMDGPU code object holding every kernel the runtime looks up.
TEST(AmdgpuImages, LibirisHasItsOwnKernelsForEachArchitecture) {
  const auto images = amdgpu_images::read(embedded::runtime_kernels_amdgpu());
  if (images.empty()) GTEST_SKIP() << "libiris was built without the AMD toolchain";
  std::vector<std::string> archs;
  for (const auto& [arch, image] : images) {
    archs.push_back(arch);
    ASSERT_GT(image.size(), 64u);
    const std::string bytes(reinterpret_cast<const char*>(image.data()), image.size());
    EXPECT_EQ(bytes.substr(0, 4), "\x7f" "ELF") << arch;
    EXPECT_EQ(static_cast<unsigned char>(bytes[18]), 224u) << arch << ": not EM_AMDGPU";
    for (const char* k : {"iris_device_barrier", "iris_fill_u64", "iris_trace_clock", "iris_arange_bf16", "iris_random_f16",
                          "iris_random_u64"}) {
      EXPECT_NE(bytes.find(std::string(k) + ".kd"), std::string::npos) << arch << " lacks " << k;
    }
  }
  EXPECT_EQ(archs, (std::vector<std::string>{"gfx942", "gfx90a"}));
}

// Unset, IRIS_BACKEND means the vendor whose GPU is present; with no AMD GPU (none exists
// where these tests run) that is cuda, with or without an NVIDIA GPU. A misspelt name is
// an error naming the three.
TEST(BackendChoice, UnsetIsCudaWithoutAnAmdGpu) {
  if (library_override()) GTEST_SKIP() << "IRIS_HIP_LIBRARY is set";
  bool amd_gpu = false;
  try {
    amd_gpu = backend::hip().device_count() > 0;
  } catch (const std::exception&) {
  }
  if (amd_gpu) GTEST_SKIP() << "an AMD GPU is present: unset means hip here";
  const char* was = std::getenv("IRIS_BACKEND");
  const std::string saved = was ? was : "";
  unsetenv("IRIS_BACKEND");
  backend::select("");
  EXPECT_STREQ(backend::active().name(), "cuda");
  setenv("IRIS_BACKEND", "cdua", 1);
  try {
    backend::select("");
    ADD_FAILURE() << "IRIS_BACKEND=cdua was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "IRIS_BACKEND=cdua names no backend (choose cuda, hip or host)");
  }
  if (was) setenv("IRIS_BACKEND", saved.c_str(), 1);
  else unsetenv("IRIS_BACKEND");
  backend::select("");
}

// Run by ctest with IRIS_BACKEND=hip and IRIS_HIP_LIBRARY naming a missing file.
TEST(HipMissingLibrary, NamesTheFileAndIsChosenByIrisBackend) {
  const char* path = library_override();
  if (!path || std::string(path).find("nonexistent") == std::string::npos) {
    GTEST_SKIP() << "run through ctest (HipBackend.MissingLibraryFromEnvironment), which sets IRIS_BACKEND=hip and "
                    "points IRIS_HIP_LIBRARY at a missing file";
  }
  backend::select("");
  EXPECT_STREQ(backend::active().name(), "hip");
  const Options o = Options::from_env();
  EXPECT_EQ(o.backend, "hip");
  try {
    run(o, [](Context&) { FAIL() << "no rank may start"; });
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), std::string("no GPU found: the HIP runtime library that IRIS_HIP_LIBRARY names "
                                                 "could not be loaded (") +
                                         path + ": cannot open shared object file: No such file or directory)");
  }
}

}  // namespace
}  // namespace iris
