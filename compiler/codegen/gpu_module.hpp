// What the CUDA and HIP translation units share around their kernels: the generated
// source with its launch contract, and the prelude of helpers every kernel may call.
#pragma once

#include <string>

#include "compiler/tir/tir.hpp"

namespace irisc {

struct GpuSource {
  std::string source;    // the CUDA or HIP C++ translation unit
  std::string metadata;  // JSON: kernels, parameters, sizes, grid policy, roles, threads
};

// The C++ name of a scalar type in printed kernels, given the dialect's names of the
// 16-bit floating-point types; the integer types are one-token aliases from the prelude
// (`T(0)` must parse for every T).
const char* gpu_scalar_type_name(tir::ScalarType t, const char* f16, const char* bf16);

// Whether any value, variable or parameter of the module has element type `t` (the
// CUDA translation unit includes that type's header then).
bool module_uses_type(const tir::Module& m, tir::ScalarType t);

// The integer aliases and the helpers (iris_min, iris_div, the shifts where used) that
// printed kernels call, for a translation unit whose device library is already
// included (iris/device.hpp: __device__ and __forceinline__ are defined under HIP too).
std::string gpu_module_prelude(const tir::Module& m);

}  // namespace irisc
