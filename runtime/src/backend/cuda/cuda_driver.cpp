// Loads the CUDA driver library and its entry points (see cuda_driver.hpp).
#include "backend/cuda/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "iris/error.hpp"

namespace iris::cuda {
namespace {

#define IRIS_STRINGIZE2(x) #x
#define IRIS_STRINGIZE(x) IRIS_STRINGIZE2(x)

struct Loaded {
  DriverApi api;
  std::string error;  // empty when usable
};

Loaded load() {
  Loaded out;
  // secure_getenv: under setuid/setgid the caller's environment must not pick the
  // library this process loads (it reads as unset there).
  const char* override_path = secure_getenv("IRIS_CUDA_DRIVER");
  const char* path = (override_path && *override_path) ? override_path : "libcuda.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    out.error = std::string("no GPU found: the CUDA driver library could not be loaded (") + path +
                ": " + (why ? why : "unknown error") + ")";
    return out;
  }
#define IRIS_CU_REQUIRED(name)                                                              \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(lib, IRIS_STRINGIZE(name))); \
  if (!out.api.name && out.error.empty())                                                    \
    out.error = std::string("the CUDA driver in ") + path + " is too old: it lacks " +      \
                IRIS_STRINGIZE(name) + " (libiris needs CUDA 12.4 or newer)";
#define IRIS_CU_OPTIONAL(name) \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(lib, IRIS_STRINGIZE(name)));
#include "backend/cuda/cuda_driver.def"
  if (!out.error.empty()) return out;
  // Each rank runs a stream and a side stream, and ranks may share a context (ranks as
  // threads): with CUDA's default of 8 hardware queues, streams of different ranks share
  // a queue, and a kernel spinning on a peer can sit in front of the kernel it waits for.
  // Ask for the most queues, unless the user chose (it counts where a context is made).
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  CUresult r = out.api.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    out.error = "no GPU found: the CUDA driver reports no device";
  } else if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    out.api.cuGetErrorName(r, &name);
    out.error = std::string("no GPU found: cuInit failed with ") + (name ? name : "an unknown error");
  }
  return out;
}

}  // namespace

const DriverApi& driver() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) throw NoDeviceError(loaded.error);
  return loaded.api;
}

std::string describe(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  const DriverApi& api = driver();
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (api.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  std::string out = name ? name : ("CUresult " + std::to_string(static_cast<int>(result)));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

void check(CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return;
  throw Error(std::string(what) + " failed: " + describe(result));
}

}  // namespace iris::cuda
