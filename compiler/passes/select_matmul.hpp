// select_matmul: how each matmul is computed. On targets with mma.sync, tensor cores (m16n8k16,
// templates' tile_mma.hpp) for bf16/f16 operands on tiles whose rows and columns are
// multiples of 32, with 256 threads, while the kernel's shared memory for them stays
// within 40 KiB (each tile shape is one static buffer, sized by tile_shapes.hpp's
// mma_shared_bytes); else the SIMT lowering (tile.hpp). A kernel that uses tensor cores
// is limited to 128 registers so that two programs share an SM (64 x 64 tiles: 24 -> 39
// TFLOP/s on H200 against the compiler's own choice of 152 registers). Runs after
// choose_launch (it needs the block size).
#pragma once

#include "compiler/tir/tir.hpp"

namespace irisc {

// Returns the number of matmuls lowered to tensor cores.
int select_matmul(tir::Module& module);

}  // namespace irisc
