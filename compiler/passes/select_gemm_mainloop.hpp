// select_gemm_mainloop: on targets with wgmma (the target table's sm_90a), a kernel of
// the shape that tir/gemm_loop.hpp describes (scalar lets, then one tiles loop that
// starts with `let c = matmul(A[m, :], B[:, n] or Bt[n, :], acc: f32)` of bf16 or f16
// operands, then an epilogue that needs no program-wide synchronization), whose BM x BN
// tile the sm90 template runs (gemm/shapes.hpp's sm90_shape_ok), becomes one
// warp-specialized, persistent GEMM (templates/include/iris/device/gemm/sm90/gemm.hpp):
//   - the matmul is lowered to `wgmma_ws`, the kernel's `gemm` records the ring depth
//     and the tile-row grouping of the template's tile order;
//   - stages: as many as fit the target's shared memory per program, up to a cap per
//     tile width (kMaxStages); group_m 16;
//   - threads sm90_threads (a producer warpgroup and one consumer warpgroup per 64 rows),
//     1 program per SM, dynamic shared memory sm90_shared_bytes, and the one tile shape
//     laid out as the template's accumulators;
//   - grid min(tiles, sms): the template walks the tiles itself, so one program per SM
//     is enough and a small problem launches no idle programs (sms alone when the loop
//     bounds are not known at launch).
// Any other kernel keeps what select_matmul decides. The launch contract gives such a
// kernel one tensor map (TMA descriptor) per operand. Runs after choose_launch, whose
// decisions it replaces for the kernels it takes, and before select_matmul.
#pragma once

#include "compiler/tir/tir.hpp"

namespace irisc {

// Returns the number of kernels lowered to the sm90 GEMM template.
int select_gemm_mainloop(tir::Module& module);

}  // namespace irisc
