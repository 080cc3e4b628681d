// One warp-level mma.sync m16n8k16 step with f32 accumulation, shared by matmul_mma's
// two mainloops (tile_mma.hpp, tile_mma_pipelined.hpp), which differ only in how the
// operand fragments reach registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "arch.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::tile::detail {

template <class T>
struct MmaOperand;
template <>
struct MmaOperand<__nv_bfloat16> {
  static constexpr bool kBf16 = true;
};
template <>
struct MmaOperand<__half> {
  static constexpr bool kBf16 = false;
};

// d += a x b for one 16 x 8 x 16 step; a: 4 registers of the 16 x 16 A fragment, b: 2 of
// the 16 x 8 B fragment (column-major), d: the 16 x 8 f32 accumulator fragment.
template <bool Bf16>
IRIS_DEVICE IRIS_FORCEINLINE void mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (Bf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

}  // namespace iris::device::tile::detail
#endif  // IRIS_CUDA_COMPILER
