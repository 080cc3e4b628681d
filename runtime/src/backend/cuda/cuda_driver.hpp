// The CUDA driver API, reached through dlopen so libiris loads (and says plainly that
// there is no GPU) on machines without the driver. Only types come from cuda.h.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

namespace iris::cuda {

struct DriverApi {
#define IRIS_CU_REQUIRED(name) decltype(&::name) name = nullptr;
#define IRIS_CU_OPTIONAL(name) decltype(&::name) name = nullptr;
#include "backend/cuda/cuda_driver.def"
};

// The loaded driver (loaded and cuInit'ed on first call). Throws iris::NoDeviceError
// when libcuda cannot be loaded, lacks a required entry point, or cuInit fails.
// IRIS_CUDA_DRIVER names another library file to load instead of libcuda.so.1.
const DriverApi& driver();

// Throws iris::Error("<what>: <CUDA_ERROR_NAME> (<description>)") unless ok.
void check(CUresult result, std::string_view what);

// "CUDA_ERROR_X (description)" for a result code.
std::string describe(CUresult result);

}  // namespace iris::cuda

// Calls a driver function and throws iris::Error naming the call on failure.
#define IRIS_CU(call_expr) ::iris::cuda::check(::iris::cuda::driver().call_expr, #call_expr)
