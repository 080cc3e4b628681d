// Sizes that both the device library and the compiler need: plain constexpr functions
// with no CUDA dependency, so irisc's select_matmul pass budgets shared memory with the
// very formula the templates allocate by.
#pragma once

#include "arch.hpp"

namespace iris::device::tile {

// Shared memory (bytes) matmul_mma uses for a rows x cols tile: the larger of the staged
// A/B slices (BK = 32 padded to 40 16-bit elements per row) and the f32 accumulator
// staging (cols + 4 floats per row).
IRIS_HOST_DEVICE constexpr long long mma_shared_bytes(long long rows, long long cols) {
  const long long slices = (rows + cols) * 40 * 2;
  const long long staging = rows * (cols + 4) * 4;
  return slices > staging ? slices : staging;
}

}  // namespace iris::device::tile
