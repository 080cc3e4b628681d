// EmitHip: tir::Module -> HIP C++ for clang's AMDGPU backend, against the device library
// in templates/ (iris/device.hpp, which under HIP brings its own arch/hip/compat.hpp: the
// source needs no HIP headers and compiles with -nogpuinc). The same kernels, signature
// and launch contract as EmitCuda (emit_cuda.hpp); the contract is an exported global
// `iris_metadata` of the code object.
#pragma once

#include "compiler/codegen/gpu_module.hpp"
#include "compiler/source/source_buffer.hpp"
#include "compiler/tir/tir.hpp"

namespace irisc {

// As emit_cuda: `source` names the file and gives waits and trace events their lines.
GpuSource emit_hip(const tir::Module& module, const SourceBuffer& source, bool trace_events = false);

}  // namespace irisc
