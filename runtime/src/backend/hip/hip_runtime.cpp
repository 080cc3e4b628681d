// Loads the HIP runtime library and its entry points (see hip_runtime.hpp).
#include "backend/hip/hip_runtime.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "iris/error.hpp"

namespace iris::hip {
namespace {

#define IRIS_STRINGIZE2(x) #x
#define IRIS_STRINGIZE(x) IRIS_STRINGIZE2(x)

struct Loaded {
  RuntimeApi api;
  std::string error;  // empty when usable
};

// The names tried in order: the unversioned name (ROCm's default install and the
// -dev packages), then ROCm 6's and ROCm 5's sonames.
constexpr const char* kLibraryNames[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};

std::string describe_with(const RuntimeApi& api, hipError_t result) {
  const char* name = api.hipGetErrorName ? api.hipGetErrorName(result) : nullptr;
  const char* text = api.hipGetErrorString ? api.hipGetErrorString(result) : nullptr;
  std::string out = name ? name : "hipError_t " + std::to_string(static_cast<int>(result));
  // ROCm 5's hipGetErrorString returns the name again: say it once.
  if (text && (!name || std::string_view(text) != name)) out += std::string(" (") + text + ")";
  return out;
}

Loaded load() {
  Loaded out;
  // secure_getenv: under setuid/setgid the caller's environment must not pick the
  // library this process loads (it reads as unset there).
  const char* override_path = secure_getenv("IRIS_HIP_LIBRARY");
  const bool overridden = override_path && *override_path;
  std::vector<std::string> names;
  if (overridden) {
    names.emplace_back(override_path);
  } else {
    names.assign(std::begin(kLibraryNames), std::end(kLibraryNames));
  }
  void* lib = nullptr;
  std::string tried;
  for (const std::string& name : names) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      out.api.path = name;
      break;
    }
    // dlerror's text starts with the name it was given; say the name once.
    const char* why = dlerror();
    const std::string text = why ? why : "unknown error";
    tried += (tried.empty() ? "" : "; ") + (text.rfind(name, 0) == 0 ? text : name + ": " + text);
  }
  if (!lib) {
    out.error = overridden ? "no GPU found: the HIP runtime library that IRIS_HIP_LIBRARY names could not be "
                             "loaded (" + tried + ")"
                           : "no GPU found: the HIP runtime library (ROCm's libamdhip64) could not be loaded (" +
                                 tried + "); install ROCm's HIP runtime, or set IRIS_HIP_LIBRARY to the library file";
    return out;
  }
  const std::string& path = out.api.path;
#define IRIS_HIP_REQUIRED(ret, name, params)                                                 \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(lib, IRIS_STRINGIZE(name))); \
  if (!out.api.name && out.error.empty())                                                    \
    out.error = "the HIP runtime in " + path + " is too old: it lacks " + IRIS_STRINGIZE(name) + \
                " (libiris needs ROCm 5.2 or newer)";
#define IRIS_HIP_OPTIONAL(ret, name, params) \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(lib, IRIS_STRINGIZE(name)));
#include "backend/hip/hip_runtime.def"
  if (!out.error.empty()) return out;
  if (out.api.hipRuntimeGetVersion(&out.api.version) != hipSuccess) out.api.version = 0;
  const std::string where = path + (out.api.version ? ", HIP " + version_text(out.api.version) : "");

  // With no AMD GPU, ROCm 5.2's hipInit fails (hipErrorInvalidDevice) and the device
  // count is hipErrorNoDevice: both mean "no device", which is what users need to read.
  const hipError_t init = out.api.hipInit(0);
  int count = 0;
  const hipError_t counted = out.api.hipGetDeviceCount(&count);
  if (counted == hipErrorNoDevice || (counted == hipSuccess && count == 0)) {
    out.error = "no GPU found: the HIP runtime (" + where + ") reports no AMD GPU";
    if (init != hipSuccess) out.error += " (hipInit failed with " + describe_with(out.api, init) + ")";
  } else if (init != hipSuccess) {
    out.error = "no GPU found: hipInit failed with " + describe_with(out.api, init) + " (" + where + ")";
  } else if (counted != hipSuccess) {
    out.error = "no GPU found: hipGetDeviceCount failed with " + describe_with(out.api, counted) + " (" + where + ")";
  }
  return out;
}

}  // namespace

const RuntimeApi& runtime() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) throw NoDeviceError(loaded.error);
  return loaded.api;
}

std::string describe(hipError_t result) { return describe_with(runtime(), result); }

void check(hipError_t result, std::string_view what) {
  if (result == hipSuccess) return;
  throw Error(std::string(what) + " failed: " + describe(result));
}

std::string version_text(int version) {
  return std::to_string(version / kVersionMajorScale) + "." +
         std::to_string(version % kVersionMajorScale / kVersionMinorScale) + "." +
         std::to_string(version % kVersionMinorScale);
}

}  // namespace iris::hip
