// The HIP runtime (libamdhip64), reached through dlopen so that libiris loads, and says
// plainly that there is no AMD GPU, on machines without ROCm. Types come from
// hip_abi.hpp; no HIP header is needed to build.
#pragma once

#include <string>
#include <string_view>

#include "backend/hip/hip_abi.hpp"

namespace iris::hip {

struct RuntimeApi {
#define IRIS_HIP_REQUIRED(ret, name, params) ret(*name) params = nullptr;
#define IRIS_HIP_OPTIONAL(ret, name, params) ret(*name) params = nullptr;
#include "backend/hip/hip_runtime.def"
  int version = 0;    // hipRuntimeGetVersion: HIP_VERSION of the loaded runtime
  std::string path;   // the library file dlopen loaded
};

// The loaded runtime (loaded, hipInit'ed and its devices counted on the first call).
// Throws iris::NoDeviceError when no libamdhip64 can be loaded, it lacks a required
// entry point, hipInit fails or it reports no device. IRIS_HIP_LIBRARY names the
// library file to load instead of trying libamdhip64.so, .so.6 and .so.5.
const RuntimeApi& runtime();

// Throws iris::Error("<what> failed: <hipErrorName> (<description>)") unless ok.
void check(hipError_t result, std::string_view what);

// "hipErrorName (description)" for a result code.
std::string describe(hipError_t result);

// "6.2.41133" for a HIP_VERSION number.
std::string version_text(int version);

}  // namespace iris::hip
