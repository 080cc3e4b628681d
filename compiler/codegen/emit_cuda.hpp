// EmitCuda: tir::Module -> CUDA C++ source for NVRTC (or nvcc), against the device
// library in templates/ (iris/device.hpp). One __global__ function per kernel, whose
// first parameter is the device context by value, then the kernel's parameters, then
// one i64 per size symbol, then the multiprocessor count. Also emits the module's
// metadata as JSON (the launcher's contract) in a __device__ string `iris_metadata`.
#pragma once

#include <string>

#include "compiler/codegen/gpu_module.hpp"
#include "compiler/source/source_buffer.hpp"
#include "compiler/tir/tir.hpp"

namespace irisc {

// `source` names the file in the output and gives waits and trace events their lines.
// With `trace_events`, kernels record trace events (iris/device/trace.hpp).
GpuSource emit_cuda(const tir::Module& module, const SourceBuffer& source, bool trace_events = false);

}  // namespace irisc
