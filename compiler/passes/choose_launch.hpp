// choose_launch: the launch decisions that follow from a kernel's tiles and loops, written
// into Kernel fields for codegen to print and the launch contract to carry:
//   - threads per program: 256, or the smallest 1-D tile (or blocks step) below that,
//     raised again (to at most 256) where a 2-D tile would otherwise hold more than 64
//     slots a thread: the small 1-D tiles then take partial layouts;
//   - the layout of every tile shape anywhere in the kernel (index expressions, ranks
//     and loop bounds included): 1-D tiles take up to 4 consecutive elements per thread
//     access (16 bytes of f32), or 1 when the kernel has per-element tile atomics, which
//     coalesce only when a warp's threads hold consecutive elements;
//   - the grid when there are no roles: `sms * 8` programs with a blocks or tiles loop
//     (8 programs of 256 threads fill an SM: remote stores need many warps in flight;
//     03_all_store ran at 69% of the CUDA version with 4 per SM), else 1. With a
//     `persistent` loop, `sms * resident`: exactly as many programs as the GPU holds at
//     once (the launcher asks the driver at load), so programs may wait for each other.
// A GEMM decision found on the kernel (a TIR listing) is dropped with the launch it
// replaced; select_gemm_mainloop makes it again.
#pragma once

#include "compiler/tir/tir.hpp"

namespace irisc {

// Returns the number of kernels decided.
int choose_launch(tir::Module& module);

}  // namespace irisc
