// Sizes that both the device library and the compiler need: plain constexpr functions
// with no CUDA dependency, so irisc's select_matmul pass budgets shared memory with the
// very formula the templates allocate by.
#pragma once

#include "../arch.hpp"

namespace iris::device::tile {

// Shared memory (bytes) of matmul_mma's synchronous mainloop for a rows x cols tile: the
// larger of the staged A/B slices (BK = 32 padded to 40 16-bit elements per row) and the
// f32 accumulator staging (cols + 4 floats per row).
IRIS_HOST_DEVICE constexpr long long mma_sync_shared_bytes(long long rows, long long cols) {
  const long long slices = (rows + cols) * 40 * 2;
  const long long staging = rows * (cols + 4) * 4;
  return slices > staging ? slices : staging;
}

// The cp.async pipeline of matmul_mma (tile/mma_pipelined.hpp): BK-deep slices in a ring
// of kMmaPipelineStages, A as [rows][BK + 8], B as [cols][BK + 8] (given as [N, K]) or
// [BK][cols + 8]; the accumulator staging reuses the ring.
inline constexpr int kMmaPipelineBk = 32;
inline constexpr int kMmaPipelineStages = 3;
IRIS_HOST_DEVICE constexpr long long mma_pipelined_shared_bytes(long long rows, long long cols, bool b_nk) {
  const long long a = rows * (kMmaPipelineBk + 8), b = b_nk ? cols * (kMmaPipelineBk + 8) : kMmaPipelineBk * (cols + 8);
  const long long ring = kMmaPipelineStages * (a + b) * 2;
  const long long staging = rows * (cols + 4) * 4;
  return ring > staging ? ring : staging;
}

// Whether a tile of `cols` columns can take the pipeline: its B fragments are loaded two
// n8 blocks at a time, so each warp's cols / 4 must be a multiple of 16.
IRIS_HOST_DEVICE constexpr bool mma_pipelines(long long cols) { return cols % 64 == 0; }

// Shared memory matmul_mma needs: which mainloop runs is decided at run time (the
// pipeline wants 16-byte aligned rows), so a tile that may pipeline needs room for both.
IRIS_HOST_DEVICE constexpr long long mma_shared_bytes(long long rows, long long cols, bool b_nk) {
  const long long sync = mma_sync_shared_bytes(rows, cols);
  const long long pipelined = mma_pipelines(cols) ? mma_pipelined_shared_bytes(rows, cols, b_nk) : 0;
  return sync > pipelined ? sync : pipelined;
}

// matmul_mfma (tile/mfma.hpp, AMD) stages A and B as matmul_mma's synchronous mainloop
// does, then hands the accumulators back through LDS in bands of rows: whole while the
// band fits in the slices' room (at least 32 KiB), else halved down to 16 rows, so that a
// large tile (128 x 256) still leaves room for two workgroups in 64 KiB.
IRIS_HOST_DEVICE constexpr long long mfma_stage_rows(long long rows, long long cols) {
  const long long slices = (rows + cols) * 40 * 2;
  const long long room = slices > 32768 ? slices : 32768;
  long long band = rows;
  while (band * (cols + 4) * 4 > room && band % 32 == 0) band /= 2;
  return band;
}
IRIS_HOST_DEVICE constexpr long long mfma_shared_bytes(long long rows, long long cols) {
  const long long slices = (rows + cols) * 40 * 2;
  const long long staging = mfma_stage_rows(rows, cols) * (cols + 4) * 4;
  return slices > staging ? slices : staging;
}

}  // namespace iris::device::tile
