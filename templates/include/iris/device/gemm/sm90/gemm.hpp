// The sm_90a GEMM mainloop: C[M, N] = A[M, K] x B with bf16 or f16 operands and f32
// accumulators, persistent and warp-specialized.
//
//  - A persistent grid (about one program per SM) walks the tiles of C in grouped order
//    (GROUP_M tile rows at a time, so that concurrent programs share A and B in L2).
//  - Warpgroup 0 is the producer: one thread issues TMA loads of BK-deep slices of A
//    and B into a STAGES-deep ring of shared memory, each slot guarded by a "full"
//    barrier (TMA bytes landed) and an "empty" barrier (consumers done reading), both
//    waited by phase parity. It gives most of its registers away (setmaxnreg).
//  - Warpgroups 1 .. BM / 64 are consumers: each owns 64 rows of the tile and issues
//    wgmma m64nBNk16 from shared memory into register accumulators, one wgmma group in
//    flight behind the slot it releases. After the last slice it hands the accumulators
//    to the epilogue, in registers: no shared-memory or global round trip.
//
// Ragged M, N, K need nothing here: TMA fills out-of-bounds elements with zeros, and
// the epilogue masks rows >= M and columns >= N (AccLayout gives each value's place).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../shapes.hpp"
#include "barrier.hpp"
#include "tma.hpp"
#include "wgmma.hpp"

#if IRIS_CUDA_COMPILER
namespace iris::device::sm90 {

template <class T>
struct DtypeOf;
template <>
struct DtypeOf<__nv_bfloat16> {
  static constexpr Dtype value = Dtype::bf16;
};
template <>
struct DtypeOf<__half> {
  static constexpr Dtype value = Dtype::f16;
};

// Where accumulator slot s of the calling consumer thread sits in the BM x BN tile
// (warpgroup 0 is the producer, so consumer warpgroup c covers rows 64 c .. 64 c + 63).
// Slots 2j and 2j + 1 are neighbouring columns of one row.
template <int BM, int BN>
struct AccLayout {
  static constexpr int kRows = BM, kCols = BN, kPerThread = BN / 2;
  IRIS_DEVICE IRIS_FORCEINLINE static int row(int s) {
    const int t = static_cast<int>(threadIdx.x) - gemm::kSm90ProducerThreads;
    return 64 * (t / 128) + 16 * (t % 128 / 32) + t % 32 / 4 + 8 * (s % 4 / 2);
  }
  IRIS_DEVICE IRIS_FORCEINLINE static int col(int s) {
    return 8 * (s / 4) + 2 * (static_cast<int>(threadIdx.x) % 4) + s % 2;
  }
};

// Tile (tm, tn) of the tile-th step of the grouped order.
IRIS_DEVICE IRIS_FORCEINLINE void grouped_tile(int tile, int tiles_m, int tiles_n, int group_m, int& tm, int& tn) {
  const int per_group = group_m * tiles_n;
  const int first = tile / per_group * group_m;
  const int rows = tiles_m - first < group_m ? tiles_m - first : group_m;
  const int in = tile % per_group;
  tm = first + in % rows;
  tn = in / rows;
}

template <class T, int BM, int BN, int STAGES, int GROUP_M, gemm::BLayout BL>
struct Gemm {
  static constexpr gemm::Sm90Shape kShape{BM, BN, 64, STAGES, GROUP_M};
  static_assert(gemm::sm90_shape_ok(kShape), "unsupported sm90 GEMM shape");
  static_assert(BM == 64 || BM == 128, "one or two consumer warpgroups");
  static constexpr int BK = 64;
  static constexpr int kConsumers = gemm::sm90_consumers(kShape);
  static constexpr int kThreads = gemm::sm90_threads(kShape);
  static constexpr int kABytes = BM * BK * 2, kBBytes = BN * BK * 2, kStageBytes = kABytes + kBBytes;
  static constexpr long long kSharedBytes = gemm::sm90_shared_bytes(kShape);
  // Registers after the hand-over: 40 x 128 + 232 x 256 <= 64 K for two consumers.
  static constexpr int kProducerRegs = 40, kConsumerRegs = kConsumers == 2 ? 232 : 240;
  using Acc = AccLayout<BM, BN>;
  using Mma = Wgmma<BN, DtypeOf<T>::value>;
  static constexpr int kTransB = BL == gemm::BLayout::kn ? 1 : 0;

  IRIS_HOST_DEVICE static constexpr int tiles(int M, int N) { return ((M + BM - 1) / BM) * ((N + BN - 1) / BN); }

  // Every thread of the program calls it. `smem`: kSharedBytes of dynamic shared memory.
  // epilogue(acc, m0, n0) runs on each consumer thread once per tile, with the tile's
  // origin; acc[s] belongs at (m0 + Acc::row(s), n0 + Acc::col(s)).
  template <class Epilogue>
  IRIS_DEVICE static void run(const TensorMap& a, const TensorMap& b, int M, int N, int K, unsigned char* smem_raw,
                              Epilogue&& epilogue) {
    unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<u64>(smem_raw) + 1023) & ~1023ull);
    Mbarrier* full = reinterpret_cast<Mbarrier*>(smem + STAGES * kStageBytes);
    Mbarrier* empty = full + STAGES;
    const int warpgroup = static_cast<int>(threadIdx.x) / 128;
    if (threadIdx.x == 0) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        mbarrier_init(full[s], 1);
        mbarrier_init(empty[s], kConsumers);
      }
      fence_barrier_init();
    }
    __syncthreads();
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, n_tiles = tiles_m * tiles_n;
    const int kblocks = (K + BK - 1) / BK;

    if (warpgroup == 0) {
      setmaxnreg_dec<kProducerRegs>();
      if (threadIdx.x != 0) return;
      tma_prefetch(a);
      tma_prefetch(b);
      int stage = 0;
      u32 phase = 0;
      for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
        int tm, tn;
        grouped_tile(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
        for (int kb = 0; kb < kblocks; ++kb) {
          mbarrier_wait(empty[stage], phase ^ 1);
          mbarrier_arrive_expect_tx(full[stage], kStageBytes);
          unsigned char* sa = smem + stage * kStageBytes;
          unsigned char* sb = sa + kABytes;
          tma_load_2d(sa, a, full[stage], kb * BK, tm * BM);
          if constexpr (BL == gemm::BLayout::kn) {
#pragma unroll
            for (int j = 0; j < BN / 64; ++j) tma_load_2d(sb + j * BK * 128, b, full[stage], tn * BN + j * 64, kb * BK);
          } else {
            tma_load_2d(sb, b, full[stage], kb * BK, tn * BN);
          }
          if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
      return;
    }

    setmaxnreg_inc<kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const bool releaser = threadIdx.x % 128 == 0;
    float acc[BN / 2];
    int stage = 0;
    u32 phase = 0;
    for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
      int tm, tn;
      grouped_tile(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
      int held = -1;  // the slot the wgmma group in flight reads
      for (int kb = 0; kb < kblocks; ++kb) {
        mbarrier_wait(full[stage], phase);
        const unsigned char* sa = smem + stage * kStageBytes + consumer * 64 * 128;
        const unsigned char* sb = smem + stage * kStageBytes + kABytes;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          const u64 da = smem_desc(sa + kk * 32, 16, 1024);
          const u64 db = kTransB ? smem_desc(sb + kk * 16 * 128, BK * 128, 1024) : smem_desc(sb + kk * 32, 16, 1024);
          Mma::template mma<kTransB>(acc, da, db, (kb | kk) != 0);
        }
        wgmma_commit();
        wgmma_wait<1>();
        if (held >= 0 && releaser) mbarrier_arrive(empty[held]);
        held = stage;
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_operands(acc);
      if (held >= 0 && releaser) mbarrier_arrive(empty[held]);
      if (kblocks == 0) {
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
      }
      epilogue(acc, tm * BM, tn * BN);
    }
  }
};

}  // namespace iris::device::sm90
#endif  // IRIS_CUDA_COMPILER
