// select_matmul: how each matmul is computed. On targets with mma.sync, tensor cores (m16n8k16,
// templates' tile/mma.hpp) for bf16/f16 operands on tiles whose rows and columns are
// multiples of 32, with 256 threads, whose shared memory (tile/shapes.hpp's
// mma_shared_bytes: room for the synchronous mainloop and, for columns a multiple of 64,
// the cp.async pipeline, with B's layout) fits one program per SM; else the SIMT
// lowering (tile.hpp). The kernel's dynamic shared memory is the largest of its
// matmuls', which all reuse it; above 48 KiB the launcher opts in (128 x 128 bf16 tiles:
// 66 KiB). A kernel that uses tensor cores asks for two programs per SM when that
// shared memory fits twice, which limits it to 128 registers (64 x 64 tiles: 24 -> 39
// TFLOP/s on H200 against the compiler's own choice of 152 registers); otherwise (128 x
// 256 tiles: 130 KiB) for one, with up to 255 registers, where the SIMT lowering such
// tiles took before compiled for seconds in NVRTC and ran slowly. Runs after
// choose_launch (it needs the block size) and select_gemm_mainloop, whose kernels it
// leaves alone.
#pragma once

#include "compiler/tir/tir.hpp"

namespace irisc {

// Returns the number of matmuls lowered to tensor cores.
int select_matmul(tir::Module& module);

}  // namespace irisc
