// GEMM configurations that the device library, the compiler and the runtime all need:
// plain constexpr values with no CUDA dependency, so irisc's select-matmul pass and
// libiris's tensor-map builder size shared memory and TMA boxes by the very numbers
// the sm90 kernel allocates by.
#pragma once

#include "../arch.hpp"

namespace iris::device::gemm {

// How B is laid out in global memory: [K, N] row-major (n contiguous, "MN-major" to the
// tensor cores) or [N, K] row-major (k contiguous, "K-major", B transposed).
enum class BLayout : int { kn = 0, nk = 1 };

// One sm90 warp-specialized configuration: a BM x BN tile of C per program, BK-deep
// slices of A and B through a STAGES-deep shared-memory ring. One producer warpgroup
// issues the TMA loads; BM / 64 consumer warpgroups each own 64 rows of the tile.
struct Sm90Shape {
  int bm = 128, bn = 256, bk = 64, stages = 4;
  // Tile rows grouped for L2 reuse in the persistent order (Triton's grouped order).
  int group_m = 16;
  // Programs per cluster along M (1 or 2): a cluster's programs take vertically
  // neighbouring tiles and each loads half of their common B slice, multicast to both.
  int cluster_m = 1;
};

inline constexpr int kSm90ProducerThreads = 128;
inline constexpr int kSm90WarpgroupRows = 64;
// A TMA box row is one 128-byte swizzle span: 64 16-bit elements.
inline constexpr int kSm90BoxInner = 64;
inline constexpr int kSm90ElemBytes = 2;

IRIS_HOST_DEVICE constexpr int sm90_consumers(const Sm90Shape& s) { return s.bm / kSm90WarpgroupRows; }
IRIS_HOST_DEVICE constexpr int sm90_threads(const Sm90Shape& s) {
  return kSm90ProducerThreads + sm90_consumers(s) * 128;
}
// Bytes of one stage of the ring (A slice then B slice), a multiple of 1024 as the
// 128-byte swizzle wants.
IRIS_HOST_DEVICE constexpr long long sm90_stage_bytes(const Sm90Shape& s) {
  return (long long)(s.bm + s.bn) * s.bk * kSm90ElemBytes;
}
// Columns of the epilogue's staging buffer per consumer: the accumulators leave through
// shared memory in 64-row x this-many-column pieces (16-bit values, 128-byte swizzle).
IRIS_HOST_DEVICE constexpr int sm90_stage_cols(const Sm90Shape& s) { return s.bn < 128 ? s.bn : 128; }
IRIS_HOST_DEVICE constexpr long long sm90_staging_bytes(const Sm90Shape& s) {
  return (long long)sm90_consumers(s) * kSm90WarpgroupRows * sm90_stage_cols(s) * kSm90ElemBytes;
}
// Dynamic shared memory of a program: 1024 bytes of alignment slack, the ring, the
// epilogue's staging buffers, and the ring's full/empty barriers (8 bytes each).
IRIS_HOST_DEVICE constexpr long long sm90_shared_bytes(const Sm90Shape& s) {
  return 1024 + s.stages * sm90_stage_bytes(s) + sm90_staging_bytes(s) + 2 * 8 * s.stages;
}
// Whether the shape is one the kernel is written for.
IRIS_HOST_DEVICE constexpr bool sm90_shape_ok(const Sm90Shape& s) {
  return (s.bm == 64 || s.bm == 128) && (s.bn == 64 || s.bn == 128 || s.bn == 192 || s.bn == 256) &&
         s.bk == 64 && s.stages >= 2 && s.stages <= 8 && s.group_m >= 1 &&
         // A cluster splits B's 64-column boxes among its programs: whole boxes each.
         (s.cluster_m == 1 || (s.cluster_m == 2 && s.bn / 64 % s.cluster_m == 0));
}

// The TMA boxes (inner dimension first) the runtime encodes tensor maps with. A is
// [M, K] (k inner); B is [K, N] (n inner, boxes of 64 columns, BN / 64 per stage) or
// [N, K] (k inner, one box per stage, split over the programs of a cluster).
struct Box2D {
  int inner = 0, outer = 0;
};
IRIS_HOST_DEVICE constexpr Box2D sm90_box_a(const Sm90Shape& s) { return {s.bk, s.bm}; }
IRIS_HOST_DEVICE constexpr Box2D sm90_box_b(const Sm90Shape& s, BLayout layout) {
  return layout == BLayout::kn ? Box2D{kSm90BoxInner, s.bk} : Box2D{s.bk, s.bn / s.cluster_m};
}

}  // namespace iris::device::gemm
