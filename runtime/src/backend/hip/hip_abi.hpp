// The part of the HIP runtime's C ABI (libamdhip64) that backend/hip/ uses, declared
// here so that libiris builds without HIP headers and loads the runtime with dlopen.
// Every value and layout below was read from hip_runtime_api.h of ROCm 5.2 (Debian's
// libamdhip64-dev) and compared with ROCm 6.x's (hip_runtime_api.h, hip_deprecated.h);
// where the two differ, both are given and the backend chooses at run time.
#pragma once

#include <cstddef>

namespace iris::hip {

// An int-sized C enum; the numbers follow the CUDA runtime's and are the same in ROCm 5
// and 6. Only the codes the backend tells apart are named.
enum hipError_t : int {
  hipSuccess = 0,
  hipErrorOutOfMemory = 2,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidImage = 200,
  hipErrorNoBinaryForGpu = 209,
  hipErrorInvalidKernelFile = 218,
  hipErrorSharedObjectInitFailed = 303,
  hipErrorNotFound = 500,
  hipErrorNotReady = 600,
  hipErrorPeerAccessAlreadyEnabled = 704,
};

// Handles: pointers to the runtime's own structs.
struct HipStream;
struct HipModule;
struct HipFunction;
struct HipEvent;
struct HipGraph;
struct HipGraphExec;
using hipStream_t = HipStream*;
using hipModule_t = HipModule*;
using hipFunction_t = HipFunction*;
using hipEvent_t = HipEvent*;
using hipGraph_t = HipGraph*;
using hipGraphExec_t = HipGraphExec*;
using hipDeviceptr_t = void*;

// Passed by value (64 bytes, in memory), as hip_runtime_api.h declares it.
struct hipIpcMemHandle_t {
  char reserved[64];
};

// hipDeviceAttribute_t: hipDeviceAttributeMultiprocessorCount is 63 in ROCm 5.2 and 6.x
// (the CUDA-compatible block starts at 0 in both, and 6.0 kept the removed entries'
// places as hipDeviceAttributeUnused*).
constexpr int kAttributeMultiprocessorCount = 63;
// hipDeviceP2PAttr.
constexpr int kP2PNativeAtomicSupported = 2;
// hipFuncAttribute.
constexpr int kFuncAttributeMaxDynamicSharedMemorySize = 8;
// hipMemcpyKind: the runtime tells host from device by the address.
constexpr int kMemcpyDefault = 4;
// hipStreamCaptureMode.
constexpr int kStreamCaptureModeThreadLocal = 1;
constexpr unsigned kStreamNonBlocking = 0x1;
constexpr unsigned kEventDefault = 0x0;
// hipHostMalloc flags: visible to every device, mapped into the device's address space,
// and fine-grained (coherent), so the host sees a kernel's system-scope stores while it
// runs and the kernel sees the host's.
constexpr unsigned kHostMallocPortable = 0x1;
constexpr unsigned kHostMallocMapped = 0x2;
constexpr unsigned kHostMallocCoherent = 0x40000000;
// hipIpcOpenMemHandle's only flag, hipIpcMemLazyEnablePeerAccess, is 0 in ROCm 5's
// header and 0x1 from ROCm 6.0 on; the runtime's source (clr) refuses any other value.
constexpr unsigned kIpcMemLazyEnablePeerAccessRocm5 = 0x0;
constexpr unsigned kIpcMemLazyEnablePeerAccessRocm6 = 0x1;

// hipDeviceProp_t changed layout in ROCm 6.0. Only gcnArchName (char[256], e.g.
// "gfx942:sramecc+:xnack-") is read, at its offset in each layout:
//   hipGetDevicePropertiesR0600 (ROCm >= 6.0): hipDeviceProp_tR0600, 1472 bytes,
//     gcnArchName at byte 1160;
//   hipGetDeviceProperties, used only where R0600 is missing (ROCm 5):
//     hipDeviceProp_tR0000, 792 bytes, gcnArchName at byte 396 (offsetof with ROCm
//     5.2's header; ROCm 6's hip_deprecated.h declares the same layout).
// The backend passes a zeroed buffer of kDevicePropBufferBytes, larger than either, so a
// later, larger layout cannot write past it.
constexpr std::size_t kGcnArchNameOffsetR0600 = 1160;
constexpr std::size_t kGcnArchNameOffsetR0000 = 396;
constexpr std::size_t kGcnArchNameBytes = 256;
constexpr std::size_t kDevicePropBufferBytes = 8192;

// HIP_VERSION as hipRuntimeGetVersion reports it: major * 10^7 + minor * 10^5 + patch.
constexpr int kVersionMajorScale = 10000000;
constexpr int kVersionMinorScale = 100000;

}  // namespace iris::hip
